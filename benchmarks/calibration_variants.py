"""Variants of the learned verdict, each measured leave-one-week-out over the labelled vllm-ascend weeks with the
product's own fit (prdigest/draft/calibration.py: strength by cross-validated log loss; the deep-read threshold
fixed or chosen inside each fold on that fold's held-out probabilities, never on the week measured).

    .venv/bin/python -m benchmarks.calibration_variants [--variants NAME ...] [--strength S] [--penalty X]
        [--cache DIR] [--curve NAME ...]

Variants (see VARIANTS): the product as it was (``main``: threshold fixed at 0.3), the threshold chosen by
cross-validation (``tuned``), the PR's own words (normalised title tags, hashed title and description words:
benchmarks/calibration_words.py), the labellers' disagreements weighed down or left out, and a separate
deep-read-vs-rest model. Each row: mean agreement per labeller over the weeks, the lowest row, deep-read pooled P / R
/ F1 over every (week, labeller). ``--curve NAME`` also prints that variant's pooled P / R at each threshold of
the held-out deep-read probabilities. Weeks and labels as benchmarks/learned_verdict.py (``--cache`` shared).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.calibration_words import PENALTY, body_features, penalty, title_features  # noqa: E402
from benchmarks.judgement import LABELS  # noqa: E402
from benchmarks.learned_verdict import CLONE, WEEKS, Score, Week, load_week, score  # noqa: E402
from prdigest.draft.calibration import _TAG, CLASSES, DEEP_READ_AT, Calibration, features, fit  # noqa: E402
from prdigest.draft.calibration import STRENGTHS as STRENGTHS_TRIED  # noqa: E402
from prdigest.draft.calibration_threshold import GRID  # noqa: E402
from prdigest.kernel.models import PullRequest, Verdict  # noqa: E402

DEEP = Verdict.DEEP_READ
Featurer = Callable[[PullRequest, Verdict], set[str]]


def base(pr: PullRequest, drafted: Verdict) -> set[str]:
    return features(pr, [], drafted)


def tags(pr: PullRequest, drafted: Verdict) -> set[str]:
    """The product's features with the title's tags normalised (benchmarks/calibration_words.py)."""
    raw = {f"tag:{' '.join(t.lower().split())}" for t in _TAG.findall(pr.title)[:3]}
    return (features(pr, [], drafted) - raw) | {f for f in title_features(pr.title) if f.startswith("tag:")}


def title(pr: PullRequest, drafted: Verdict) -> set[str]:
    return tags(pr, drafted) | title_features(pr.title)


def words(pr: PullRequest, drafted: Verdict) -> set[str]:
    return title(pr, drafted) | body_features(pr.body)


@dataclass(frozen=True)
class Variant:
    """One way to fit: the features, the examples and their weights, the threshold, the deep-read model."""

    featurer: Featurer = base
    tune: bool = True
    examples: str = "both"  # both | agreed | halved (a disagreed PR's labels count half)
    binary: bool = False  # a separate deep-read-vs-rest model decides deep reads


VARIANTS = {
    "main": Variant(tune=False),
    "tuned": Variant(),
    "tags": Variant(featurer=tags),
    "title": Variant(featurer=title),
    "words": Variant(featurer=words),
    "agreed": Variant(examples="agreed"),
    "halved": Variant(examples="halved"),
    "binary": Variant(binary=True),
    "words-binary": Variant(featurer=words, binary=True),
}


_MEMO: dict[tuple[str, int, int], set[str]] = {}


def feats_of(variant: Variant, week: Week, pr: PullRequest, drafted: Verdict) -> set[str]:
    """The variant's features of a PR, computed once per run (every fold reads each PR's again)."""
    key = (week.week, pr.number, id(variant.featurer))
    if key not in _MEMO:
        _MEMO[key] = variant.featurer(pr, drafted)
    return _MEMO[key]


def rows_of(weeks: list[Week], variant: Variant) -> tuple[list[tuple[set[str], Verdict]], list[int], list[float]]:
    """The weeks' examples with their PR's number and their weight, as the variant counts them."""
    examples, groups, weights = [], [], []
    for week in weeks:
        for pr, drafted in week.prs:
            given = [labels[pr.number] for labels in week.labels.values() if pr.number in labels]
            agreed = len(set(given)) == 1 and len(given) == len(week.labels)
            if variant.examples == "agreed":
                given = given[:1] if agreed else []
            feats = feats_of(variant, week, pr, drafted)
            for label in given:
                examples.append((feats, label))
                groups.append(pr.number)
                weights.append(0.5 if variant.examples == "halved" and not agreed else 1.0)
    return examples, groups, weights


def binary_model(examples: list[tuple[set[str], Verdict]], groups: list[int], weights: list[float]) -> Calibration:
    """A deep-read-vs-rest model: the same fit with skim and skip one class (a three-way softmax whose skip is
    never a label is a logistic model of deep-read against the rest), its threshold chosen the same way."""
    rest = [(f, Verdict.SKIM if v is not DEEP else v) for f, v in examples]
    return fit(rest, groups=groups, weights=weights, tune_threshold=True, strengths=STRENGTHS[0], penalty=penalty)


@dataclass
class Result:
    name: str
    rows: list[tuple[str, str, Score]]
    probs: list[tuple[str, dict[int, float], dict[str, dict[int, Verdict]], dict[int, Verdict]]]
    seconds: float
    thresholds: list[float]


#: ``--strength S``: every fit tries that strength alone (the product tries several: benchmarks/learned_verdict.py).
STRENGTHS: list[tuple[float, ...]] = [STRENGTHS_TRIED]


def measure(name: str, variant: Variant, weeks: dict[str, Week]) -> Result:
    t0 = time.perf_counter()
    rows, probs, thresholds = [], [], []
    for held, week in weeks.items():
        train = [w for k, w in weeks.items() if k != held]
        examples, groups, weights = rows_of(train, variant)
        model = fit(examples, groups=groups, weights=weights, tune_threshold=variant.tune, source=f"all but {held}",
                    strengths=STRENGTHS[0], penalty=penalty)
        deep_model = binary_model(examples, groups, weights) if variant.binary else None
        thresholds.append((deep_model or model).deep_read_at or DEEP_READ_AT)
        ours, deep_p = {}, {}
        for pr, drafted in week.prs:
            feats = feats_of(variant, week, pr, drafted)
            p = model.probabilities(feats)
            if deep_model is not None:
                pd = deep_model.probabilities(feats)[0]
                at = deep_model.deep_read_at or DEEP_READ_AT
                ours[pr.number] = DEEP if pd >= at else (CLASSES[1] if p[1] >= p[2] else CLASSES[2])
            else:
                pd = p[0]
                ours[pr.number] = model.verdict(feats)
            deep_p[pr.number] = pd
        rest = {n: (CLASSES[1] if (p := model.probabilities(feats_of(variant, week, pr, d)))[1] >= p[2]
                    else CLASSES[2]) for pr, d in week.prs for n in [pr.number]}
        probs.append((held, deep_p, week.labels, rest))
        rows += [(held, who, score(ours, labels)) for who, labels in sorted(week.labels.items())]
    return Result(name, rows, probs, time.perf_counter() - t0, thresholds)


def summary(result: Result) -> str:
    scores = [s for _, _, s in result.rows]
    total = sum(scores[1:], scores[0])
    f1 = 2 * total.deep_both / (total.deep_ours + total.deep_theirs) if total.deep_ours + total.deep_theirs else 0
    mean = statistics.fmean(s.agreement for s in scores)
    return (f"| {result.name} | {mean:.3f} | {min(s.agreement for s in scores):.2f} | {total.precision:.2f} "
            f"({total.deep_both}/{total.deep_ours}) | {total.recall:.2f} ({total.deep_both}/{total.deep_theirs}) | "
            f"{f1:.2f} | {statistics.median(result.thresholds):g} ({min(result.thresholds):g}-"
            f"{max(result.thresholds):g}) |")


def curve(result: Result) -> str:
    """Pooled deep-read P / R and mean agreement at each threshold of the held-out deep-read probabilities."""
    lines = ["| deep-read from | P | R | F1 | mean agreement |", "| ---: | ---: | ---: | ---: | ---: |"]
    for at in GRID:
        total, agreements = None, []
        for _, deep_p, labels, rest in result.probs:
            ours = {n: DEEP if p >= at else rest[n] for n, p in deep_p.items()}
            for who in sorted(labels):
                s = score(ours, labels[who])
                agreements.append(s.agreement)
                total = s if total is None else total + s
        assert total is not None
        f1 = 2 * total.deep_both / (total.deep_ours + total.deep_theirs)
        lines.append(f"| {at:g} | {total.precision:.2f} | {total.recall:.2f} | {f1:.2f} | "
                     f"{statistics.fmean(agreements):.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git", type=Path, default=CLONE)
    parser.add_argument("--weeks", nargs="+", default=list(WEEKS))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--curve", nargs="*", default=[], choices=list(VARIANTS))
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--strength", type=float, help="try this strength alone (faster; the product tries "
                        f"{', '.join(map(str, STRENGTHS_TRIED))})")
    parser.add_argument("--penalty", type=float, help="the words' pull, a multiple of the strength (default "
                        f"{PENALTY['tw:']:g}: benchmarks/calibration_words.py)")
    args = parser.parse_args(argv)
    if args.penalty:
        PENALTY.update({prefix: args.penalty for prefix in PENALTY})
    if args.strength:
        STRENGTHS[0] = (args.strength,)
    weeks = {w: load_week(args.git, w, LABELS, args.cache) for w in args.weeks}
    lines = ["| variant | mean agreement | lowest row | deep-read P | R | F1 | threshold: median (range) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    print("\n".join(lines), flush=True)
    curves = []
    for name in args.variants:
        result = measure(name, VARIANTS[name], weeks)
        lines.append(summary(result))
        print(lines[-1] + f"  <!-- {result.seconds:.0f} s, load {os.getloadavg()[0]:.2f} -->", flush=True)
        if name in args.curve:
            curves.append(f"{name}:\n\n{curve(result)}")
            print(curves[-1], flush=True)
    return "\n".join(lines + curves)


if __name__ == "__main__":
    main()
