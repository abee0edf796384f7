"""Classifier and offline drafter against the human labels (``gold``) of the sample week, for BENCHMARKS.md.

    .venv/bin/python -m benchmarks.quality [--write]

The details (per subsystem, each disagreement, the confusion matrix) are in
``benchmarks/classifier_quality.py`` and ``benchmarks/drafter_quality.py``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter

from prdigest.drafting.offline import OfflineDrafter
from prdigest.models import PullRequest
from prdigest.sources import sample_week_path
from prdigest.subsystems import classifier_for


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()
    records = [json.loads(line) for line in sample_week_path().read_text(encoding="utf-8").splitlines() if line]
    classifier, drafter = classifier_for("vllm-project/vllm"), OfflineDrafter()
    tp = fp = fn = 0
    rows = []
    for mode in ("classifier", "gold"):
        agree, deep_gold, deep_hit, deep_said = 0, 0, 0, 0
        for raw in records:
            pr = PullRequest.model_validate(raw)
            got = classifier.classify(pr)
            gold = set(raw["gold"]["subsystems"])
            if mode == "classifier":
                tp, fp, fn = tp + len(gold & set(got)), fp + len(set(got) - gold), fn + len(gold - set(got))
            verdict = drafter.draft(pr, got if mode == "classifier" else sorted(gold), "zh-CN").verdict.value
            want = raw["gold"]["verdict"]
            agree += verdict == want
            deep_gold += want == "deep-read"
            deep_said += verdict == "deep-read"
            deep_hit += verdict == want == "deep-read"
        rows.append((mode, agree / len(records), deep_hit / deep_said, deep_hit / deep_gold))
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    f1 = 2 * precision * recall / (precision + recall)
    body = (
        "Command: `.venv/bin/python -m benchmarks.quality --write` — the sample week (58 PRs) against one "
        "human's labels (`gold`). In-sample: the rules and weights were written looking at this week, so "
        "expect less on weeks they have not seen.\n\n"
        f"Subsystem classifier (micro, {tp + fn} gold labels): precision {precision:.3f}, recall {recall:.3f}, "
        f"F1 {f1:.3f} (target ≥ 0.85).\n\n"
        "| offline drafter, subsystems from | verdict agreement | deep-read precision | deep-read recall |\n"
        "| --- | ---: | ---: | ---: |\n"
        + "\n".join(f"| {m} | {a:.1%} | {p:.1%} | {r:.1%} |" for m, a, p, r in rows)
        + "\n\nTarget: deep-read recall ≥ 0.8."
    )
    print(body)
    if args.write:
        from benchmarks.report import write_section

        write_section("Classifier and drafter quality", body)


if __name__ == "__main__":
    main()
