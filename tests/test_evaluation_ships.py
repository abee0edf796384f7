"""``digest eval`` scores what ships: the labelled PRs go through the run's own steps (code facts from ``--git`` or
the patches, the draft context, the connect step), so each verdict eval scores is the one digest.json holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from tests.git_support import Upstream, build_upstream
from tests.test_facts_run import RULES


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Upstream:
    return build_upstream(tmp_path_factory.mktemp("ships"))


def _labelled(upstream: Upstream, tmp: Path) -> Path:
    gold = tmp / "gold.jsonl"
    gold.write_text("".join(json.dumps({**json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})),
                                        "gold": {"verdict": "skim"}}) + "\n" for pr in upstream.prs))
    return gold


@pytest.mark.parametrize("with_git", [True, False], ids=["git", "patches"])
def test_eval_scores_the_verdicts_the_run_ships(upstream: Upstream, tmp_path: Path, with_git: bool) -> None:
    gold, rules = _labelled(upstream, tmp_path), tmp_path / "rules.yaml"
    rules.write_text(RULES)
    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - id: core-team\n    name: Core\n    email: core@example.com\n")
    git = ["--git", str(upstream.path)] if with_git else []
    runner = CliRunner()
    ran = runner.invoke(app, ["run", "--source", f"jsonl:{gold}", "--rules", str(rules), "--language", "en",
                              "--readers", str(readers), "--out", str(tmp_path / "run"), "--state", str(tmp_path / "run.sqlite"),
                              "--since", "2026-11-16", "--until", "2026-11-23", *git])
    assert ran.exit_code == 0, ran.output
    scored = runner.invoke(app, ["eval", "--gold", str(gold), "--rules", str(rules), "--language", "en",
                                 "--out", str(tmp_path / "eval"), "--state", str(tmp_path / "eval.sqlite"), *git])
    assert scored.exit_code == 0, scored.output
    shipped = {e["number"]: e["verdict"] for e in json.loads((tmp_path / "run" / "digest.json").read_text())["entries"]}
    evaluated = {r["number"]: r["verdict"] for r in json.loads((tmp_path / "eval" / "eval.json").read_text())["entries"]}
    assert evaluated == shipped
    # the facts reach the drafter in eval too: a week of API changes is not all drafted alike
    assert len(set(evaluated.values())) > 1
