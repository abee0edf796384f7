"""``digest eval`` scores what ships (after the connect step) with the drafter's own verdicts beside it, and
``--compare`` says what differs between the two configurations."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from prdigest.evaluation.comparison import setup_differences, write_comparison
from prdigest.evaluation.gold import load_gold
from prdigest.evaluation.report import write_reports
from prdigest.evaluation.results import EvalRow, EvalRun, RunInfo
from prdigest.evaluation.shipped import shipped_rows
from prdigest.evaluation.summary import summarize
from prdigest.kernel.models import Verdict
from prdigest.state.store import open_store

REPO = "vllm-project/vllm"


def _line(number: int, title: str, body: str, verdict: str, day: int) -> str:
    return json.dumps({"number": number, "url": f"https://github.com/{REPO}/pull/{number}", "title": title,
                       "author": "alice", "merged_at": f"2026-11-{16 + day:02d}T12:00:00Z", "body": body,
                       "files": [{"path": "vllm/v1/core/sched/scheduler.py", "additions": 300, "deletions": 20}],
                       "additions": 300, "deletions": 20,
                       "gold": {"verdict": verdict, "subsystems": ["scheduler-core"]}})


def _row(number: int, verdict: Verdict, gold: Verdict) -> EvalRow:
    return EvalRow(number=number, url=f"https://github.com/{REPO}/pull/{number}", title=f"PR {number}",
                   gold_verdict=gold, verdict=verdict, subsystems=["scheduler-core"], headline=f"Headline {number}",
                   rationale=f"{verdict.label('en')}: why {number}.", drafter="offline")


def test_a_reverted_pr_is_scored_as_it_ships_with_the_drafters_verdict_beside_it(tmp_path: Path) -> None:
    gold_file = tmp_path / "gold.jsonl"
    gold_file.write_text("\n".join([
        _line(501, "[Core] Preempt by recompute", "Changes the preemption mode.", "skip", 0),
        _line(502, 'Revert "[Core] Preempt by recompute" (#501)', "This reverts #501: it broke long prompts.",
              "skim", 2)]) + "\n", encoding="utf-8")
    gold = load_gold(gold_file)
    rows = [_row(501, Verdict.DEEP_READ, Verdict.SKIP), _row(502, Verdict.SKIM, Verdict.SKIM)]
    store = open_store(tmp_path / "state.sqlite")
    try:
        shipped = shipped_rows(rows, gold, REPO, "en", store)
    finally:
        store.close()
    first = shipped[0]
    assert first.drafted_verdict is Verdict.DEEP_READ and first.verdict is Verdict.SKIP
    assert "reverted-by #502" in first.relations and first.shipped_label.startswith("drafted deep-read → ships ")
    info = RunInfo(drafter="offline", language="en", repo=REPO, gold=str(gold_file), gold_sha256="0" * 64,
                   started_at=datetime(2026, 12, 1, tzinfo=timezone.utc))
    figures = summarize(EvalRun(info=info, rows=shipped))
    assert figures["changed_by_connect"] == 1
    assert figures["drafter_verdict_agreement"] == 0.5 and figures["verdict_agreement"] == 1.0
    paths = write_reports(EvalRun(info=info, rows=shipped), tmp_path / "out")
    md = paths[1].read_text(encoding="utf-8")
    assert "drafter's own: agreement / deep-read P / R | 50.0%" in md
    assert "verdicts changed by the connect step | 1" in md


def test_compare_says_what_differs_and_shows_code_as_code(tmp_path: Path) -> None:
    base = dict(language="en", repo=REPO, gold="gold.jsonl", gold_sha256="0" * 64,
                started_at=datetime(2026, 12, 1, tzinfo=timezone.utc))
    a = RunInfo(drafter="openai:m1", model="m1", prompt_version="entry-7", rules=None, rules_sha256="a" * 64, **base)
    b = RunInfo(drafter="openai:m2", model="m2", prompt_version="entry-8", rules="my-rules.yaml",
                rules_sha256="b" * 64, **base)
    assert setup_differences(a, b) == [
        "drafter: openai:m1 → openai:m2", "model: m1 → m2", "prompt version: entry-7 → entry-8",
        f"rules file: shipped ({'a' * 12}) → my-rules.yaml ({'b' * 12})"]
    assert setup_differences(a, a) == []
    row = _row(7, Verdict.SKIM, Verdict.DEEP_READ).model_copy(update={"headline": "Tune `moe_align` <b>x</b>"})
    other = row.model_copy(update={"verdict": Verdict.DEEP_READ})
    _, paths = write_comparison(EvalRun(info=a, rows=[row]), EvalRun(info=b, rows=[other]), tmp_path)
    page = paths[2].read_text(encoding="utf-8")
    assert "<code>moe_align</code> &lt;b&gt;x&lt;/b&gt;" in page and "<li>model: m1 → m2</li>" in page
    assert "What differs: drafter: openai:m1 → openai:m2; model: m1 → m2" in paths[1].read_text(encoding="utf-8")
    assert json.loads(paths[0].read_text(encoding="utf-8"))["setup"][2] == "prompt version: entry-7 → entry-8"
