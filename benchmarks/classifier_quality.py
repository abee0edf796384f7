"""How well the subsystem classifier agrees with a human's labels (``gold.subsystems``) on a JSONL week.

Usage: .venv/bin/python benchmarks/classifier_quality.py [--data FILE] [--repo OWNER/NAME] [--rules FILE]
Prints precision / recall / F1 per subsystem and micro-averaged, then every PR where the two disagree.
Gold labels include judgement calls: read the disagreements, do not tune rules to single PRs.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from anywhere, without installing the package
    sys.path.insert(0, str(ROOT))

from prdigest.classify.subsystems import classifier_for  # noqa: E402
from prdigest.evaluation.metrics import subsystem_prf  # noqa: E402
from prdigest.kernel.models import PullRequest  # noqa: E402

DEFAULT_DATA = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"


def _fmt(value: float | None, digits: int) -> str:
    """A ratio, or n/a where it is undefined (no such label predicted or given)."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repo", default="vllm-project/vllm")
    parser.add_argument("--rules", type=Path, default=None, help="rules file (default: the repo's shipped rules)")
    args = parser.parse_args(argv)

    classifier = classifier_for(args.repo, args.rules)
    with args.data.open(encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    pairs: list[tuple[set[str], list[str]]] = []
    disagreements: list[str] = []
    for raw in records:
        pr = PullRequest.model_validate(raw)
        gold = set(raw["gold"]["subsystems"])
        got = classifier.classify(pr)
        pairs.append((gold, got))
        if gold != set(got):
            extra = sorted(set(got) - gold)
            missing = sorted(gold - set(got))
            disagreements.append(
                f"#{pr.number:<6} {pr.title[:70]}\n         got {got}  gold {sorted(gold)}"
                f"  +{extra} -{missing}"
            )
    micro, per = subsystem_prf(pairs)  # the same counts as `digest eval` (prdigest.evaluation.metrics)

    print(f"{len(records)} PRs from {args.data.name}\n")
    print(f"{'subsystem':<18} {'tp':>3} {'fp':>3} {'fn':>3} {'prec':>6} {'recall':>6} {'f1':>6}")
    for name, c in per.items():
        print(f"{name:<18} {c.tp:>3} {c.fp:>3} {c.fn:>3} {_fmt(c.precision, 2):>6} {_fmt(c.recall, 2):>6} "
              f"{_fmt(c.f1, 2):>6}")
    print(f"{'micro':<18} {micro.tp:>3} {micro.fp:>3} {micro.fn:>3} {_fmt(micro.precision, 3):>6} "
          f"{_fmt(micro.recall, 3):>6} {_fmt(micro.f1, 3):>6}")
    print(f"\n{len(disagreements)} disagreement(s):")
    print("\n".join(disagreements))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
