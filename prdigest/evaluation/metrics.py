"""The figures of an evaluation, as pure functions of (gold, drafted) pairs: no I/O, no drafter.

A ratio whose denominator is zero (no gold deep-read PR, no predicted subsystem) is ``None``, never 0:
"undefined" and "always wrong" are different findings, and the reports show the first as "n/a".
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prdigest.kernel.models import Verdict

#: Confusion-matrix order: rows are the gold verdict, columns the drafted one.
ORDER: tuple[Verdict, ...] = (Verdict.DEEP_READ, Verdict.SKIM, Verdict.SKIP)


def ratio(numerator: float, denominator: float) -> float | None:
    """``numerator / denominator``, or None when the denominator is zero."""
    return numerator / denominator if denominator else None


@dataclass(frozen=True)
class PRF:
    """Counts of true/false positives and false negatives, with precision, recall and F1 derived."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: "PRF") -> "PRF":
        return PRF(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)


def confusion(pairs: Iterable[tuple[Verdict, Verdict]]) -> dict[Verdict, dict[Verdict, int]]:
    """``matrix[gold][drafted]`` counts over (gold, drafted) verdict pairs; every cell present."""
    matrix = {g: {p: 0 for p in ORDER} for g in ORDER}
    for gold, got in pairs:
        matrix[gold][got] += 1
    return matrix


def agreement(matrix: dict[Verdict, dict[Verdict, int]]) -> float | None:
    """Share of PRs whose drafted verdict equals the gold one (None for no PR)."""
    total = sum(sum(row.values()) for row in matrix.values())
    return ratio(sum(matrix[v][v] for v in ORDER), total)


def verdict_prf(matrix: dict[Verdict, dict[Verdict, int]], verdict: Verdict = Verdict.DEEP_READ) -> PRF:
    """One verdict treated as the positive class: precision/recall of calling a PR ``verdict``."""
    tp = matrix[verdict][verdict]
    return PRF(tp=tp, fp=sum(matrix[g][verdict] for g in ORDER) - tp, fn=sum(matrix[verdict].values()) - tp)


def subsystem_prf(pairs: Iterable[tuple[Iterable[str], Iterable[str]]]) -> tuple[PRF, dict[str, PRF]]:
    """Micro-averaged and per-subsystem counts over (gold, assigned) subsystem sets, one pair per PR."""
    per: dict[str, Counter[str]] = {}
    for gold_names, got_names in pairs:
        gold, got = set(gold_names), set(got_names)
        for name in gold | got:
            kind = "tp" if name in gold and name in got else "fp" if name in got else "fn"
            per.setdefault(name, Counter())[kind] += 1
    by_name = {name: PRF(c["tp"], c["fp"], c["fn"]) for name, c in sorted(per.items())}
    return sum(by_name.values(), PRF()), by_name


@dataclass(frozen=True)
class Spread:
    """Median and maximum of a sample (both 0 for an empty sample)."""

    median: float
    max: float
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Spread":
        """The spread of ``values``; an even count takes the mean of the two middle values."""
        if not values:
            return cls(0.0, 0.0, 0)
        return cls(float(statistics.median(values)), float(max(values)), len(values))


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean, or None for no values."""
    return sum(values) / len(values) if values else None


def verdict_distance(a: Verdict, b: Verdict) -> int:
    """Steps between two verdicts on the deep-read > skim > skip scale (0, 1 or 2)."""
    return abs(a.rank - b.rank)


def jaccard_distance(a: Iterable[str], b: Iterable[str]) -> float:
    """1 - |a ∩ b| / |a ∪ b|; 0 for two empty sets."""
    sa, sb = set(a), set(b)
    union = sa | sb
    return 1 - len(sa & sb) / len(union) if union else 0.0
