"""Classifier and offline drafter against the human labels (``gold``) of the sample week, for BENCHMARKS.md.

    .venv/bin/python -m benchmarks.quality [--write]

The figures come from :mod:`prdigest.evaluation` (the code of ``digest eval``); the details (per
subsystem, each disagreement, the confusion matrix) are in ``benchmarks/classifier_quality.py`` and
``benchmarks/drafter_quality.py``.
"""

from __future__ import annotations

import argparse

from prdigest.classify.subsystems import classifier_for
from prdigest.collect.sources import sample_week_path
from prdigest.draft.offline import OfflineDrafter
from prdigest.evaluation.gold import load_gold
from prdigest.evaluation.metrics import agreement, confusion, subsystem_prf, verdict_prf


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()
    gold = load_gold(sample_week_path())
    classifier = classifier_for("vllm-project/vllm")
    drafter = OfflineDrafter(classifier.vocabulary)
    assigned = [classifier.classify(item.pr) for item in gold.items]
    micro, _ = subsystem_prf((item.gold.subsystems or [], got) for item, got in zip(gold.items, assigned))
    rows = []
    for mode in ("classifier", "gold"):
        given = assigned if mode == "classifier" else [sorted(item.gold.subsystems or []) for item in gold.items]
        matrix = confusion((item.gold.verdict, drafter.draft(item.pr, subs, "zh-CN").verdict)
                           for item, subs in zip(gold.items, given))
        deep = verdict_prf(matrix)
        rows.append((mode, agreement(matrix) or 0.0, deep.precision or 0.0, deep.recall or 0.0))
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
        "reports the first row (and more: lengths, worst disagreements); docs/eval.md explains the figures."
    )
    print(body)
    if args.write:
        from benchmarks.report import write_section

        write_section("Classifier and drafter quality", body)


if __name__ == "__main__":
    main()
