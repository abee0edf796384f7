"""What ships: the drafted rows after the pipeline's connect step (relations to this and earlier editions, and
the demotion of reverted PRs), so ``digest eval`` scores the verdicts readers get, with the drafter's own beside.

The labelled PRs are taken as one edition over the window their merges span; earlier editions come from the
state store's history, as in a run.
"""

from __future__ import annotations

from datetime import timedelta

from prdigest.connect.step import connect_edition
from prdigest.evaluation.gold import GoldSet
from prdigest.evaluation.results import EvalRow
from prdigest.kernel.models import DraftEntry, Edition, Entry, Language
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.state.store import Store


def _draft(row: EvalRow) -> DraftEntry:
    return DraftEntry(number=row.number, headline=row.headline, verdict=row.verdict, rationale=row.rationale,
                      focus=row.focus[:5], followups=row.followups[:5], audience=row.audience, drafter=row.drafter,
                      grounding=row.grounding, warnings=row.warnings, needs_editing=row.needs_editing)


def shipped_rows(rows: list[EvalRow], gold: GoldSet, repo: str, language: Language, store: Store,
                 vocabulary: Vocabulary | None = None) -> list[EvalRow]:
    """``rows`` with ``verdict`` and ``rationale`` as the connect step leaves them and ``drafted_verdict`` the
    drafter's own; a row the connect step does not change keeps its verdict, with both the same."""
    prs = [item.pr for item in gold.items]
    if not prs:
        return rows
    entries = [Entry.from_draft(item.pr, row.subsystems, _draft(row)) for item, row in zip(gold.items, rows)]
    since = min(pr.merged_at for pr in prs)
    until = max(pr.merged_at for pr in prs) + timedelta(microseconds=1)
    edition = Edition(repo=repo, since=since, until=until, language=language, generated_at=until, entries=entries)
    connected = {e.number: e for e in connect_edition(edition, prs, store, vocabulary=vocabulary).entries}
    out = []
    for row in rows:
        entry = connected.get(row.number)
        shipped = row.verdict if entry is None else entry.verdict
        out.append(row.model_copy(update={
            "drafted_verdict": row.verdict, "verdict": shipped,
            "rationale": row.rationale if entry is None else entry.rationale,
            "relations": [] if entry is None else [f"{r.kind} #{r.number}" for r in entry.relations]}))
    return out
