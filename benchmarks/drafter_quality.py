"""How well the offline drafter's verdicts agree with the human judgement in the sample week.

Run from the repository root::

    .venv/bin/python benchmarks/drafter_quality.py [--subsystems gold|classifier|none|other] [--samples N]

It prints verdict agreement, the confusion matrix (rows: human, columns: drafter), deep-read precision
and recall, then sample drafts (three in zh-CN, one in en). The sample's ``gold`` fields are read here
to measure, never by the drafter.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout, without installing the package
    sys.path.insert(0, str(ROOT))

from prdigest.classify.subsystems import classifier_for  # noqa: E402
from prdigest.draft.offline import OfflineDrafter  # noqa: E402
from prdigest.evaluation.metrics import ORDER, agreement, confusion, verdict_prf  # noqa: E402
from prdigest.kernel.models import DraftEntry, PullRequest, Verdict  # noqa: E402

SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"


def load(path: Path = SAMPLE) -> list[dict]:
    """The sample records, with their ``gold`` judgement."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def subsystems_for(record: dict, mode: str) -> list[str]:
    """The subsystems given to the drafter: the human ones, the rules classifier's, none, or only "other"."""
    if mode == "classifier":
        return classifier_for("vllm-project/vllm").classify(PullRequest.model_validate(record))
    return {"gold": list(record["gold"].get("subsystems", [])), "none": [], "other": ["other"]}[mode]


def measure(records: list[dict], mode: str = "gold") -> dict:
    """Agreement, confusion matrix and deep-read precision/recall of the offline drafter (prdigest.evaluation)."""
    drafter = OfflineDrafter(classifier_for("vllm-project/vllm").vocabulary)
    pairs = []
    for record in records:
        pr = PullRequest.model_validate(record)
        got = drafter.draft(pr, subsystems_for(record, mode), "zh-CN").verdict
        pairs.append((Verdict(record["gold"]["verdict"]), got))
    matrix = confusion(pairs)
    deep = verdict_prf(matrix)
    return {
        "total": len(pairs), "agreement": agreement(matrix) or 0.0,
        "confusion": {(g, p): matrix[g][p] for g in ORDER for p in ORDER},
        "deep_precision": deep.precision or 0.0, "deep_recall": deep.recall or 0.0,
    }


def show(entry: DraftEntry, record: dict) -> str:
    """One draft as an editor would read it, with the human verdict for comparison."""
    lines = [f"#{entry.number}  [{entry.verdict.value}; human: {record['gold']['verdict']}]",
             f"  {entry.headline}", f"  {entry.rationale}"]
    lines += [f"  {i}. {point}" for i, point in enumerate(entry.focus, 1)]
    lines += [f"  ↳ {item}" for item in entry.followups]
    lines.append(f"  audience: {entry.audience}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subsystems", choices=("gold", "classifier", "none", "other"), default="gold",
                        help="subsystems given to the drafter (default: the human ones in the sample)")
    parser.add_argument("--samples", type=int, default=3, help="zh-CN sample drafts to print")
    args = parser.parse_args(argv)
    records = load()
    result = measure(records, args.subsystems)
    print(f"offline drafter on {SAMPLE.name} ({result['total']} PRs, subsystems={args.subsystems})")
    print(f"verdict agreement: {result['agreement']:.1%}")
    print(f"deep-read precision: {result['deep_precision']:.1%}  recall: {result['deep_recall']:.1%}")
    print("confusion (rows = human, columns = drafter):")
    print(f"  {'':10}" + "".join(f"{v.value:>11}" for v in ORDER))
    for g in ORDER:
        print(f"  {g.value:10}" + "".join(f"{result['confusion'][(g, p)]:>11}" for p in ORDER))

    # Samples: the first PR of each human verdict, so the output shows one draft of each kind.
    drafter = OfflineDrafter(classifier_for("vllm-project/vllm").vocabulary)
    picks = [next(r for r in records if r["gold"]["verdict"] == v.value) for v in ORDER]
    picks = (picks + [r for r in records if r not in picks])[: max(0, args.samples)]
    print("\nsample drafts (zh-CN):")
    for record in picks:
        pr = PullRequest.model_validate(record)
        print(show(drafter.draft(pr, subsystems_for(record, args.subsystems), "zh-CN"), record))
    if picks:
        print("\nsample draft (en):")
        pr = PullRequest.model_validate(picks[0])
        print(show(drafter.draft(pr, subsystems_for(picks[0], args.subsystems), "en"), picks[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
