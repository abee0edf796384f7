"""The cap on a PR's code facts: a commit that rewrites 20,000 files keeps the facts a reader acts on first
(breaking, then public API and kernels, then the rest, each in the diff's order) and counts the others."""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.kernel.factlines import API_KINDS
from prdigest.kernel.models import Change

#: Facts kept per PR. Far above what a draft, an email or a review page shows (a few), high enough that every
#: PR of a real week keeps all of its facts; what it bounds is the work and the record of one giant commit.
MAX_FACTS = 1_000


def _rank(change: Change) -> int:
    """0 for a fact that breaks callers, 1 for public API and kernels, 2 for the rest."""
    if change.breaks:
        return 0
    if change.kind == "kernel" or (change.public and change.kind in API_KINDS):
        return 1
    return 2


def capped(changes: Sequence[Change], limit: int = MAX_FACTS) -> tuple[list[Change], int]:
    """At most ``limit`` of ``changes`` (the most important, in their order) and how many were left out."""
    if len(changes) <= limit:
        return list(changes), 0
    # a stable sort by rank only (linear-ish, no pairwise comparison of facts), then the diff's order again
    order = sorted(range(len(changes)), key=lambda i: _rank(changes[i]))[:limit]
    return [changes[i] for i in sorted(order)], len(changes) - limit
