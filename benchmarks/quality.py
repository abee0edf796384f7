"""Classifier and offline drafter against the human labels (``gold``) of the sample week, for BENCHMARKS.md.

    .venv/bin/python -m benchmarks.quality [--write]

The figures come from :mod:`prdigest.evaluation` (the code of ``digest eval``); the details (per
subsystem, each disagreement, the confusion matrix) are in ``benchmarks/classifier_quality.py`` and
``benchmarks/drafter_quality.py``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from prdigest.classify.subsystems import classifier_for
from prdigest.collect.sources import sample_week_path
from prdigest.draft.offline import OfflineDrafter
from prdigest.evaluation.gold import load_gold
from prdigest.evaluation.metrics import agreement, confusion, subsystem_prf, verdict_prf
from prdigest.evaluation.results import EvalConfig
from prdigest.evaluation.runner import run_eval
from prdigest.evaluation.summary import summarize
from prdigest.kernel.config import load_settings


def as_shipped() -> tuple[float, float, float]:
    """Agreement and deep-read precision/recall as ``digest eval`` scores the week: the run's own steps (facts,
    connect, calibration), in a fresh state store."""
    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(gold=str(sample_week_path()), state=str(Path(tmp) / "state.sqlite"))
        figures = summarize(run_eval(config, load_settings(**config.settings_overrides())))
    return (figures["verdict_agreement"] or 0.0, figures["deep_read_precision"] or 0.0,
            figures["deep_read_recall"] or 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()
    gold = load_gold(sample_week_path())
    classifier = classifier_for("vllm-project/vllm")
    drafter = OfflineDrafter(classifier.vocabulary)
    assigned = [classifier.classify(item.pr) for item in gold.items]
    micro, _ = subsystem_prf((item.gold.subsystems or [], got) for item, got in zip(gold.items, assigned))
    # The first row is what `digest eval` reports (the run's steps); the second is the drafter alone, given the
    # gold subsystems (how much the classifier's mistakes cost the verdicts).
    rows = [("classifier", *as_shipped())]
    given = [sorted(item.gold.subsystems or []) for item in gold.items]
    matrix = confusion((item.gold.verdict, drafter.draft(item.pr, subs, "zh-CN").verdict)
                       for item, subs in zip(gold.items, given))
    deep = verdict_prf(matrix)
    rows.append(("gold", agreement(matrix) or 0.0, deep.precision or 0.0, deep.recall or 0.0))
    precision, recall, f1 = micro.precision or 0.0, micro.recall or 0.0, micro.f1 or 0.0
    body = (
        "Command: `.venv/bin/python -m benchmarks.quality --write` — the sample week (58 PRs) against one "
        "human's labels (`gold`). In-sample: the rules and weights were written looking at this week, so "
        "expect less on weeks they have not seen.\n\n"
        f"Subsystem classifier (micro, {micro.tp + micro.fn} gold labels): precision {precision:.3f}, "
        f"recall {recall:.3f}, F1 {f1:.3f} (target ≥ 0.85).\n\n"
        "| offline drafter, subsystems from | verdict agreement | deep-read precision | deep-read recall |\n"
        "| --- | ---: | ---: | ---: |\n"
        + "\n".join(f"| {m} | {a:.1%} | {p:.1%} | {r:.1%} |" for m, a, p, r in rows)
        + "\n\nTarget: deep-read recall ≥ 0.8. Figures on halves of the week the weights were not chosen on: "
        "the *Generalisation (leave-out)* section (`benchmarks/generalisation.py`). "
        "`digest eval --gold prdigest/collect/data/vllm-sample-week.jsonl` "
        "reports the first row (computed here by its code: the run's steps, facts and connect included; the second row is the offline drafter alone given the gold subsystems), and more: lengths, worst disagreements; docs/eval.md explains the figures."
    )
    print(body)
    if args.write:
        from benchmarks.report import write_section

        write_section("Classifier and drafter quality", body)


if __name__ == "__main__":
    main()
