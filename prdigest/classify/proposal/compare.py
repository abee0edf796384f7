"""Two rules files for one repository compared on a week: which subsystem of one is which of the other.

Names differ (a proposal says ``speculative-decoding`` where a hand-written file says ``spec-decode``), so
subsystems are paired by the PRs they hold: the Jaccard overlap of their PR sets. What the reference has
and the candidate does not pair is what the candidate misses; the reverse is what it adds.
"""

from __future__ import annotations

from dataclasses import dataclass

from prdigest.classify.rulesfile import Rules
from prdigest.classify.subsystems import RulesClassifier
from prdigest.kernel.models import PullRequest

#: Two subsystems are the same area when their PR sets overlap at least this much.
SAME_AREA = 0.5


@dataclass(frozen=True)
class Pairing:
    """A subsystem of one file, its best counterpart in the other, and their overlap."""

    name: str
    prs: int
    counterpart: str | None
    overlap: float


@dataclass(frozen=True)
class Comparison:
    """How a candidate rules file relates to a reference one on a week."""

    reference: list[Pairing]
    candidate: list[Pairing]

    @property
    def missed(self) -> list[str]:
        """Reference subsystems (with PRs) no candidate subsystem matches."""
        return [p.name for p in self.reference if p.prs and p.overlap < SAME_AREA]

    @property
    def added(self) -> list[str]:
        """Candidate subsystems (with PRs) no reference subsystem matches."""
        return [p.name for p in self.candidate if p.prs and p.overlap < SAME_AREA]

    @property
    def matched(self) -> dict[str, str]:
        """Reference subsystem → the candidate subsystem holding the same PRs."""
        return {p.name: p.counterpart for p in self.reference if p.counterpart and p.overlap >= SAME_AREA}


def _sets(rules: Rules, prs: list[PullRequest]) -> dict[str, set[int]]:
    classifier = RulesClassifier(rules)
    sets: dict[str, set[int]] = {name: set() for name in rules.subsystems}
    for pr in prs:
        for name in classifier.classify(pr):
            if name != rules.fallback:
                sets.setdefault(name, set()).add(pr.number)
    return sets


def _pair(mine: dict[str, set[int]], theirs: dict[str, set[int]]) -> list[Pairing]:
    out = []
    for name, prs in mine.items():
        best, score = None, 0.0
        for other, other_prs in theirs.items():
            union = prs | other_prs
            jaccard = len(prs & other_prs) / len(union) if union else 0.0
            if jaccard > score:
                best, score = other, jaccard
        out.append(Pairing(name, len(prs), best, round(score, 3)))
    return out


def compare_rules(reference: Rules, candidate: Rules, prs: list[PullRequest]) -> Comparison:
    """Pair ``reference``'s and ``candidate``'s subsystems by the PRs of ``prs`` they classify."""
    ref, cand = _sets(reference, prs), _sets(candidate, prs)
    return Comparison(_pair(ref, cand), _pair(cand, ref))
