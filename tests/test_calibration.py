"""The team's taste, learnt: ``digest calibrate`` fits the repo's verdict calibration from a labelled week or from
the editors' recorded decisions, keeps it in the state store (SQLite and PostgreSQL), and the next run of the repo
ships the calibrated verdicts (``--no-calibration`` keeps the drafter's; ``digest eval`` reports both)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.draft import calibrations
from prdigest.draft.calibration import Calibration, calibrated, features, fit
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import DraftEntry, PullRequest, Verdict
from prdigest.review import EntryEdit, ReviewDecision, apply_decision, record_review
from prdigest.state import record as records
from prdigest.state.store import open_store

REPO = "vllm-project/vllm"
#: The team's taste: performance work is studied, docs are skipped, the rest skimmed.
KINDS = [("[Perf] Faster {} for long prompts", "vllm/attention/backends/{}.py", 220, "deep-read"),
         ("[Doc] Explain {}", "docs/features/{}.md", 80, "skip"),
         ("[Bugfix] Fix a crash in {} on empty batches", "vllm/v1/core/{}.py", 14, "skim")]
TOPICS = ["paging", "rotary", "sampler", "prefix", "spec", "lora", "quant", "moe", "tpu", "rocm", "cpu", "kv"]


def week(first: int, day: int, topics: list[str]) -> list[dict[str, Any]]:
    """A week of PRs of the three kinds, each labelled with the team's verdict."""
    out = []
    for i, topic in enumerate(topics):
        for k, (title, path, lines, verdict) in enumerate(KINDS):
            number = first + 3 * i + k
            out.append({"number": number, "url": f"https://github.com/{REPO}/pull/{number}",
                        "title": title.format(topic), "author": "amy", "labels": [], "body": "",
                        "merged_at": f"2026-11-{day:02d}T{(i % 20) + 1:02d}:{k:02d}:00Z",
                        "files": [{"path": path.format(topic), "additions": lines, "deletions": lines // 4,
                                   "status": "modified"}],
                        "additions": lines, "deletions": lines // 4, "review_comments": [],
                        "gold": {"verdict": verdict}})
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def run(tmp: Path, source: Path, state: str, *extra: str) -> dict[int, dict[str, Any]]:
    readers = tmp / "readers.yaml"
    readers.write_text("readers:\n  - id: all\n    name: All\n    email: all@example.com\n")
    out = tmp / f"out-{len(list(tmp.glob('out-*')))}"
    result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{source}", "--language", "en", "--readers",
                                      str(readers), "--out", str(out), "--state", state, "--resend-edition", *extra])
    assert result.exit_code == 0, result.output
    return {e["number"]: e for e in json.loads((out / "digest.json").read_text())["entries"]}


def test_a_labelled_week_teaches_the_next_run_the_teams_taste(tmp_path: Path, state_location: str) -> None:
    labelled = write(tmp_path / "week1.jsonl", week(1000, 16, TOPICS))
    nxt = write(tmp_path / "week2.jsonl", week(2000, 24, ["attn", "cache", "graph", "router"]))
    before = run(tmp_path, nxt, state_location)
    assert {e["verdict"] for e in before.values()} != {"deep-read", "skip", "skim"}  # the drafter alone misses it

    fitted = CliRunner().invoke(app, ["calibrate", "--gold", str(labelled), "--state", state_location,
                                      "--language", "en"])
    assert fitted.exit_code == 0, fitted.output
    assert f"{REPO}: calibration fitted on 36 labels" in fitted.output
    # the editor is told where the fit put the deep-read line (it decides how many entries say "read closely")
    said = re.search(r"deep-read once its probability reaches ([0-9.]+) \((the default|chosen by cross-validation)\)",
                     fitted.output)
    assert said is not None, fitted.output
    assert 0.15 <= float(said[1]) <= 0.6 and (said[2] == "the default") == (float(said[1]) == 0.3)

    after = run(tmp_path, nxt, state_location)
    for number, entry in after.items():
        wanted = {"[Perf]": "deep-read", "[Doc] ": "skip", "[Bugfi": "skim"}[entry["title"][:6]]
        assert entry["verdict"] == wanted, (number, entry["title"])
        assert entry["rationale"].startswith({"deep-read": "Deep read", "skim": "Skim", "skip": "Skip"}[wanted])
    # --no-calibration: the drafter's own verdicts, as before the calibration
    plain = run(tmp_path, nxt, state_location, "--no-calibration")
    assert {n: e["verdict"] for n, e in plain.items()} == {n: e["verdict"] for n, e in before.items()}

    # digest eval applies it too, and reports the drafter's agreement beside it
    scored = CliRunner().invoke(app, ["eval", "--gold", str(nxt), "--state", state_location, "--language", "en",
                                      "--out", str(tmp_path / "eval")])
    assert scored.exit_code == 0, scored.output
    figures = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert figures["verdict_agreement"] == 1.0
    assert figures["uncalibrated_verdict_agreement"] < 0.7 and figures["changed_by_calibration"] > 0
    assert figures["calibration"].endswith("on 36 labels (gold week1.jsonl)")
    alone = CliRunner().invoke(app, ["eval", "--gold", str(nxt), "--state", state_location, "--language", "en",
                                     "--out", str(tmp_path / "alone"), "--no-calibration"])
    assert alone.exit_code == 0, alone.output
    drafter = json.loads((tmp_path / "alone" / "eval.json").read_text())
    assert drafter["verdict_agreement"] == figures["uncalibrated_verdict_agreement"] and drafter["calibration"] is None


def test_the_editors_changed_verdicts_are_labels(tmp_path: Path) -> None:
    state = str(tmp_path / "state.sqlite")
    first = write(tmp_path / "week1.jsonl", week(1000, 16, TOPICS))
    drafted = run(tmp_path, first, state)
    store = open_store(Path(state))
    try:
        (record,) = [r for r in (records.resolve(store, k) for k in _keys(store)) if r is not None]
        draft = record.edition
        # The editor changes every verdict the drafter got wrong by the team's taste, as the review form does.
        edits = [EntryEdit(number=e.number, verdict=next(v for t, _, _, v in KINDS if e.title.startswith(t[:6])))
                 for e in draft.entries if e.verdict.value != next(v for t, _, _, v in KINDS
                                                                   if e.title.startswith(t[:6]))]
        assert edits and len(drafted) == 36
        decision = ReviewDecision(decision="send", approver="lin", edits=edits)
        record_review(store, draft, apply_decision(draft, decision, datetime(2026, 11, 30, tzinfo=timezone.utc)))
    finally:
        store.close()
    fitted = CliRunner().invoke(app, ["calibrate", "--from-reviews", "--state", state])
    assert fitted.exit_code == 0, fitted.output
    assert f"{REPO}: calibration fitted on 36 labels (reviews of 36 entries; {len(edits)} differ" in fitted.output
    nxt = write(tmp_path / "week2.jsonl", week(2000, 24, ["attn", "cache", "graph", "router"]))
    after = run(tmp_path, nxt, state)
    assert all(e["verdict"] == "deep-read" for e in after.values() if e["title"].startswith("[Perf]"))


def _keys(store: Any) -> list[str]:
    return [row[0] for row in store.execute("SELECT key FROM edition_records").fetchall()]


def _pr(title: str, path: str) -> PullRequest:
    return PullRequest(number=1, url=f"https://github.com/{REPO}/pull/1", title=title, merged_at="2026-11-17T00:00:00Z",
                       files=[{"path": path, "additions": 10, "deletions": 2}], additions=10, deletions=2)


def test_a_fresh_calibration_keeps_the_drafters_verdict_where_labels_say_nothing() -> None:
    examples = [(features(_pr(f"[Doc] Page {i}", f"docs/p{i}.md"), [], Verdict.SKIM), Verdict.SKIP) for i in range(12)]
    examples += [(features(_pr(f"[Core] Change {i}", f"vllm/c{i}.py"), [], v), v)
                 for i, v in zip(range(24), [Verdict.SKIM, Verdict.DEEP_READ, Verdict.SKIP] * 8)]
    calibration = fit(examples, source="test")
    assert calibration.labels == 36 and calibration.cv_calibrated is not None
    assert calibration.cv_calibrated > calibration.cv_drafter
    draft = DraftEntry(number=1, headline="h", verdict=Verdict.SKIM, rationale="Skim: a page.", drafter="offline")
    moved = calibrated(draft, _pr("[Doc] Another page", "docs/x.md"), [], "en", calibration)
    assert moved.verdict is Verdict.SKIP and moved.rationale.startswith("Skip") and not moved.warnings
    for verdict in Verdict:  # a core change keeps whatever the drafter said
        kept = draft.model_copy(update={"verdict": verdict})
        assert calibrated(kept, _pr("[Core] Another", "vllm/y.py"), [], "en", calibration).verdict is verdict


def test_too_few_labels_or_a_foreign_model_are_refused_with_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="3 labelled PRs: a calibration needs at least 10"):
        fit([(features(_pr("t", "a.py"), [], Verdict.SKIM), Verdict.SKIP)] * 3)
    short = write(tmp_path / "short.jsonl", week(1000, 16, TOPICS[:2]))
    result = CliRunner().invoke(app, ["calibrate", "--gold", str(short), "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2 and f"{short}: 6 labelled PRs" in result.output and "label more PRs" in result.output
    store = open_store(tmp_path / "s.sqlite")
    try:
        calibrations.save(store, REPO, Calibration({"bias": [0.0, 0.0, 0.0]}, 0.1, 12))
        store.execute("UPDATE calibrations SET model = ?", (json.dumps({"classes": ["good", "bad"]}),))
        with pytest.raises(ConfigError, match="digest calibrate --repo vllm-project/vllm, or run with --no-calibration"):
            calibrations.latest(store, REPO)
    finally:
        store.close()
    both = CliRunner().invoke(app, ["calibrate"])
    assert both.exit_code == 2 and "give exactly one of --gold FILE, --from-reviews" in both.output


def test_labels_that_agree_with_the_drafter_keep_its_verdicts() -> None:
    from prdigest.draft.calibration import KEEP

    examples = [(features(_pr(f"[Core] Change {i}", f"vllm/c{i}.py"), [], v), v)
                for i, v in zip(range(30), [Verdict.SKIM, Verdict.DEEP_READ, Verdict.SKIP] * 10)]
    calibration = fit(examples)
    assert calibration.strength == KEEP and calibration.cv_calibrated == calibration.cv_drafter == 1.0
    assert all(calibration.verdict(f) is v for f, v in examples)


def test_the_benchmark_reads_label_files_per_repo_week_and_labeller(tmp_path: Path) -> None:
    from benchmarks.calibration import file_labels

    folder = tmp_path / "labels"
    folder.mkdir()
    (folder / "acme-pkg-2026-W09.ana.json").write_text(json.dumps({
        "labeller": "ana", "date": "2026-06-02", "repo": "acme/pkg", "week": "2026-W09",
        "labels": {"12": {"verdict": "skim", "why": "a fix", "action": ""},
                   "13": {"verdict": "deep-read", "why": "new API", "action": "rename x"}}}))
    assert file_labels(folder) == {("acme/pkg", "2026-W09", "ana"): {12: Verdict.SKIM, 13: Verdict.DEEP_READ}}
    (folder / "acme-pkg-2026-W10.ben.json").write_text(json.dumps({"labeller": "ben", "repo": "acme/pkg",
                                                                     "week": "2026-W10", "labels": {"7": {}}}))
    with pytest.raises(SystemExit, match=r"acme-pkg-2026-W10\.ben\.json: not a label file \(KeyError"):
        file_labels(folder)


def test_the_features_read_the_pr_and_its_facts() -> None:
    from prdigest.kernel.models import Change

    pr = PullRequest.model_validate({
        **_pr("[Kernel][Perf] Fuse rotary into attention", "csrc/rotary.cu").model_dump(),
        "labels": ["ready", "Performance"],
        "files": [{"path": "csrc/rotary.cu", "additions": 10, "deletions": 2, "status": "added"},
                  {"path": "tests/test_rotary.py", "additions": 5, "deletions": 0}],
        "changes": [Change(kind="kernel", symbol="rotary_kernel", path="csrc/rotary.cu", after="added")],
        "additions": 15, "deletions": 2})
    found = features(pr, ["kernels"], Verdict.SKIM)
    assert {"bias", "drafted:skim", "size:s", "files:2-3", "kind:source", "kind:test", "new-code-file",
            "facts:few", "fact:kernel", "sub:kernels", "tag:kernel", "tag:perf", "label:ready",
            "label:performance", "word:fuse"} - found == {"word:fuse"}  # 'fuse' is no word the features weigh
    docs = features(_pr("[Doc] Explain it", "docs/a.md"), [], Verdict.SKIP)
    assert {"only:doc", "facts:none", "size:s"} <= docs


def test_what_a_pr_asks_of_a_reader_is_a_feature() -> None:
    from prdigest.kernel.models import Change

    def asking(*changes: Change) -> set[str]:
        pr = _pr("[CI] Upgrade CANN", "Dockerfile").model_copy(update={"changes": list(changes)})
        return {f for f in features(pr, [], Verdict.SKIM) if f.startswith("action:")}

    cann = Change(kind="dependency", symbol="CANN_VERSION", path="Dockerfile", before="8.5.0", after="8.5.1",
                  language="config", reach="public", reach_how="a runtime requirement (`Dockerfile`)")
    back = cann.model_copy(update={"before": "8.5.1", "after": "8.5.0"})
    lint = cann.model_copy(update={"symbol": "ruff", "path": "requirements-lint.txt", "reach": "internal"})
    renamed = Change(kind="env", symbol="VLLM_NEW", path="envs.py", before="VLLM_OLD", after="VLLM_NEW",
                     detail="renamed", language="config", reach="public", reach_how="an environment variable")
    assert asking(cann) == {"action:upgrade"}
    assert asking(back) == {"action:other"}  # a downgrade asks something, not an upgrade
    assert asking(lint) == set()  # a development tool's pin asks nothing of a reader
    assert asking(renamed) == {"action:other"}
