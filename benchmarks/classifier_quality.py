"""How well the subsystem classifier agrees with a human's labels (``gold.subsystems``) on a JSONL week.

Usage: .venv/bin/python benchmarks/classifier_quality.py [--data FILE] [--repo OWNER/NAME] [--rules FILE]
Prints precision / recall / F1 per subsystem and micro-averaged, then every PR where the two disagree.
Gold labels include judgement calls: read the disagreements, do not tune rules to single PRs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere, without installing the package
    sys.path.insert(0, str(ROOT))

from prdigest.models import PullRequest  # noqa: E402
from prdigest.subsystems import classifier_for  # noqa: E402

DEFAULT_DATA = ROOT / "prdigest" / "data" / "vllm-sample-week.jsonl"


def prf(tp: int, fp: int, fn: int) -> tuple[float, float, float]:
    """Precision, recall and F1 (0.0 where undefined)."""
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    return p, r, (2 * p * r / (p + r) if p + r else 0.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repo", default="vllm-project/vllm")
    parser.add_argument("--rules", type=Path, default=None, help="rules file (default: the repo's shipped rules)")
    args = parser.parse_args(argv)

    classifier = classifier_for(args.repo, args.rules)
    counts: dict[str, Counter[str]] = {}
    disagreements: list[str] = []
    with args.data.open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    for raw in records:
        pr = PullRequest.model_validate(raw)
        gold = set(raw["gold"]["subsystems"])
        got = classifier.classify(pr)
        for name in gold | set(got):
            c = counts.setdefault(name, Counter())
            c["tp" if name in gold and name in got else "fp" if name in got else "fn"] += 1
        if gold != set(got):
            extra = sorted(set(got) - gold)
            missing = sorted(gold - set(got))
            disagreements.append(
                f"#{pr.number:<6} {pr.title[:70]}\n         got {got}  gold {sorted(gold)}"
                f"  +{extra} -{missing}"
            )

    print(f"{len(records)} PRs from {args.data.name}\n")
    print(f"{'subsystem':<18} {'tp':>3} {'fp':>3} {'fn':>3} {'prec':>6} {'recall':>6} {'f1':>6}")
    total: Counter[str] = Counter()
    for name in sorted(counts):
        c = counts[name]
        total.update(c)
        p, r, f = prf(c["tp"], c["fp"], c["fn"])
        print(f"{name:<18} {c['tp']:>3} {c['fp']:>3} {c['fn']:>3} {p:>6.2f} {r:>6.2f} {f:>6.2f}")
    p, r, f = prf(total["tp"], total["fp"], total["fn"])
    print(f"{'micro':<18} {total['tp']:>3} {total['fp']:>3} {total['fn']:>3} {p:>6.3f} {r:>6.3f} {f:>6.3f}")
    print(f"\n{len(disagreements)} disagreement(s):")
    print("\n".join(disagreements))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
