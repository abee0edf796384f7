"""``digest eval --compare A B``: two configurations of the local OpenAI-compatible server that judge some PRs
differently, compared PR by PR with McNemar's exact test (and "too few to tell" when it is)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.evaluation.comparison import compare
from prdigest.evaluation.results import load_run
from prdigest.kernel.errors import ConfigError
from tests.servers.openai_server import OpenAIServer

pytestmark = pytest.mark.slow  # two or three LLM evaluations of 30 PRs each against the local server

N = 30


@pytest.fixture
def gold(tmp_path: Path, sample_records) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sample_records[:N]), encoding="utf-8")
    return path


def evaluate(server: OpenAIServer, model: str, gold: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    monkeypatch.setenv("OPENAI_API_KEY", server.api_key)
    result = CliRunner().invoke(app, [
        "eval", "--gold", str(gold), "--drafter", "openai", "--llm-base-url", server.base_url, "--model", model,
        "--language", "en", "--state", str(out.parent / f"{model}.sqlite"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    return json.loads((out / "eval.json").read_text(encoding="utf-8"))


def test_compare_finds_b_better_where_it_fixes_enough_prs_and_too_few_to_tell_otherwise(
        tmp_path: Path, gold: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with OpenAIServer(models=("model-a", "model-b", "model-c")) as server:
        a = evaluate(server, "model-a", gold, tmp_path / "a", monkeypatch)
        wrong = [e for e in a["entries"] if e["verdict"] != e["gold_verdict"]]
        assert len(wrong) >= 7, "the stand-in model must miss enough PRs for this test"
        # Model B judges 7 of A's misses as the human did; model C only 3.
        for e in wrong[:7]:
            server.plan(e["number"], e["gold_verdict"])
        b = evaluate(server, "model-b", gold, tmp_path / "b", monkeypatch)
        for e in wrong[:3]:
            server.plan(e["number"], e["gold_verdict"])
        evaluate(server, "model-c", gold, tmp_path / "c", monkeypatch)

    assert b["verdict_agreement"] == pytest.approx(a["verdict_agreement"] + 7 / N)
    result = CliRunner().invoke(app, ["eval", "--compare", str(tmp_path / "a"), str(tmp_path / "b"),
                                        "--out", str(tmp_path / "ab")])
    assert result.exit_code == 0, result.output
    assert "What differs: drafter: openai:model-a → openai:model-b; model: model-a → model-b" in result.output
    report = json.loads((tmp_path / "ab" / "compare.json").read_text(encoding="utf-8"))
    verdict = report["tests"][0]
    assert (verdict["measure"], verdict["only_a"], verdict["only_b"]) == ("verdict", 0, 7)
    assert verdict["p_value"] == pytest.approx(2 / 2 ** 7)
    assert verdict["verdict"].startswith("B is better")
    assert sorted(d["number"] for d in report["differences"]) == sorted(e["number"] for e in wrong[:7])
    assert all(d["better"] == "B" for d in report["differences"])
    assert report["a"]["model"] == "model-a" and report["b"]["model"] == "model-b"
    md = (tmp_path / "ab" / "compare.md").read_text(encoding="utf-8")
    assert "B is better" in md and f"#{wrong[0]['number']}" in md

    ac = compare(load_run(tmp_path / "a"), load_run(tmp_path / "c" / "eval.json"))
    assert (ac.tests[0].only_a, ac.tests[0].only_b) == (0, 3)
    assert ac.tests[0].verdict.startswith("too few to tell")


def test_compare_refuses_runs_with_different_labels(tmp_path: Path, gold: Path, sample_records) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["eval", "--gold", str(gold), "--out", str(tmp_path / "a")]).exit_code == 0
    relabelled = [json.loads(json.dumps(r)) for r in sample_records[:N]]
    relabelled[4]["gold"]["verdict"] = "skip" if relabelled[4]["gold"]["verdict"] != "skip" else "skim"
    other = tmp_path / "other.jsonl"
    other.write_text("".join(json.dumps(r) + "\n" for r in relabelled), encoding="utf-8")
    assert runner.invoke(app, ["eval", "--gold", str(other), "--out", str(tmp_path / "b")]).exit_code == 0
    with pytest.raises(ConfigError, match=f"#{relabelled[4]['number']}"):
        compare(load_run(tmp_path / "a"), load_run(tmp_path / "b"))
    result = runner.invoke(app, ["eval", "--compare", str(tmp_path / "a"), str(tmp_path / "nope"),
                                   "--out", str(tmp_path / "ab")])
    assert result.exit_code == 2 and "cannot read an evaluation" in result.output
