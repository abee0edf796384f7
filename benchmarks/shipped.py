"""The verdicts a run ships, from the ones drafted (and calibrated): the connect step demotes a PR reverted within
the edition (prdigest/connect/relations.py ``demote_reverted``), after drafting and calibrating, so a benchmark that
scores verdicts scores them after it too (issue 35: measure what ships). No history: the week alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta

from prdigest.connect.relations import demote_reverted, find_relations
from prdigest.kernel.models import DraftEntry, Edition, EditionId, Entry, PullRequest, Verdict


def as_shipped(prs: Sequence[PullRequest], verdicts: Mapping[int, Verdict], repo: str) -> dict[int, Verdict]:
    """``verdicts`` (PR number → verdict) as the connect step leaves them for the week of ``prs``."""
    mine = [pr for pr in prs if pr.number in verdicts]
    if not mine:
        return dict(verdicts)
    entries = [Entry.from_draft(pr, [], DraftEntry(number=pr.number, headline=pr.title or f"#{pr.number}",
                                                   verdict=verdicts[pr.number], rationale="-")) for pr in mine]
    since = min(pr.merged_at for pr in mine)
    until = max(pr.merged_at for pr in mine) + timedelta(seconds=1)
    edition = Edition(repo=repo, since=since, until=until, generated_at=until, entries=entries)
    found = find_relations(edition, mine, [])
    shipped = {e.number: e.verdict for e in demote_reverted(entries, found, EditionId(repo, since, until).window)}
    return {n: shipped.get(n, v) for n, v in verdicts.items()}
