"""The calibration's deep-read threshold, chosen on the labels themselves: the probability from which a PR is called
a deep read, picked where the cross-validated (held-out) probabilities give the best deep-read F1 without lowering
the three-way agreement below that of the default threshold.

Deep reads are rare (about one label in ten) and the labels' own taste decides how sure the model must be: a
team whose deep reads are mostly new mechanisms and one that also studies explained small fixes want different
thresholds. Choosing it on held-out probabilities (never on the probabilities of the labels a fit has seen, which
are overconfident) keeps the choice honest; when there are too few deep reads to say anything, the default stays.
"""

from __future__ import annotations

from collections.abc import Sequence

#: Thresholds tried, from eager to strict.
GRID = tuple(round(0.15 + 0.025 * i, 3) for i in range(19))  # 0.15 … 0.6
#: Fewer held-out deep-read labels than this: too few to move the threshold from the default.
MIN_DEEP = 10


def _verdicts(probs: Sequence[Sequence[float]], at: float) -> list[int]:
    """Class indices (0 deep-read, 1 skim, 2 skip): deep-read from ``at``, else the more probable of the others."""
    return [0 if p[0] >= at else (1 if p[1] >= p[2] else 2) for p in probs]


def deep_f1(picked: Sequence[int], labels: Sequence[int], weights: Sequence[float]) -> float:
    """The deep-read F1 of ``picked`` against ``labels`` (each label counted ``weights[i]`` times)."""
    both = sum(w for p, y, w in zip(picked, labels, weights) if p == 0 and y == 0)
    ours = sum(w for p, w in zip(picked, weights) if p == 0)
    theirs = sum(w for y, w in zip(labels, weights) if y == 0)
    return 2 * both / (ours + theirs) if ours + theirs else 0.0


def choose(probs: Sequence[Sequence[float]], labels: Sequence[int], default: float,
           weights: Sequence[float] | None = None) -> float:
    """The threshold of :data:`GRID` with the best deep-read F1 on held-out ``probs`` (each example's class
    probabilities) against ``labels`` (class indices), among those whose agreement is at least the ``default``
    threshold's; ties go to the one nearest ``default``. ``default`` itself with too few deep-read labels."""
    w = list(weights) if weights is not None else [1.0] * len(labels)
    if sum(wi for y, wi in zip(labels, w) if y == 0) < MIN_DEEP:
        return default

    def agreement(at: float) -> float:
        return sum(wi for p, y, wi in zip(_verdicts(probs, at), labels, w) if p == y)

    floor = agreement(default) - 1e-9
    best = (deep_f1(_verdicts(probs, default), labels, w), 0.0, default)
    for at in GRID:
        if agreement(at) >= floor:
            best = max(best, (deep_f1(_verdicts(probs, at), labels, w), -abs(at - default), at))
    return best[2]
