"""The three things ``digest eval`` does, each one call from the CLI or the evaluation flow: score a drafter
on labelled PRs, compare two earlier scorings, or score the recorded drafts against the editors' decisions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from prdigest.evaluation.comparison import write_comparison
from prdigest.evaluation.labels import reviewed_labels, write_labels
from prdigest.evaluation.report import eval_markdown, write_reports
from prdigest.evaluation.results import EvalConfig, load_run
from prdigest.evaluation.reviews import kept_edits, read_reviews, reviews_markdown, reviews_report
from prdigest.evaluation.runner import run_eval
from prdigest.evaluation.summary import summarize
from prdigest.kernel.config import Settings
from prdigest.pipeline.compose import command


@dataclass
class Outcome:
    """What one evaluation wrote: the report as markdown (for the artifact), the files, the key figures."""

    title: str
    markdown: str
    paths: list[Path]
    figures: dict[str, Any] = field(default_factory=dict)


def evaluate(config: EvalConfig, settings: Settings, out: Path,
             progress: Callable[[int, int], None] | None = None) -> Outcome:
    """Draft and classify every labelled PR with one configuration; write eval.json, eval.md, eval.html."""
    run = run_eval(config, settings, progress)
    paths = write_reports(run, out)
    figures = summarize(run)
    return Outcome(f"Evaluation: {run.info.label}", eval_markdown(run, figures), paths, figures)


def compare_runs(a: Path, b: Path, out: Path) -> Outcome:
    """Compare two earlier evaluations (folders or eval.json files); write compare.json/.md/.html."""
    run_a, run_b = load_run(a), load_run(b)
    result, paths = write_comparison(run_a, run_b, out)
    return Outcome(f"A/B: {run_a.info.label} vs {run_b.info.label}", paths[1].read_text(encoding="utf-8"), paths,
                   {"n": result.n, "tests": [t.as_dict() for t in result.tests],
                    "differences": len(result.differences), "setup": result.setup})


def evaluate_reviews(settings: Settings, out: Path, since: datetime | None = None) -> Outcome:
    """Score the recorded drafts against what editors decided; write reviews.json and reviews.md, and the
    editors' verdicts on PRs the collector cached as labels.jsonl (for ``digest eval --gold``)."""
    with command(settings) as core:
        store = core.store
        entries = read_reviews(store(), since)
        labels = reviewed_labels(store(), entries)
        kept = kept_edits(store())
    out.mkdir(parents=True, exist_ok=True)
    report = {**reviews_report(entries), "labels": len(labels), "kept_edits": kept}
    paths = [out / "reviews.json", out / "reviews.md"]
    if labels:
        paths.append(write_labels(labels, out / "labels.jsonl"))
    text = reviews_markdown(report, since, paths[-1] if labels else None)
    paths[0].write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(text, encoding="utf-8")
    return Outcome("Editors' corrections", text, paths, report)
