"""The review record in the state store: who approved an edition, when, and what became of each draft."""

from __future__ import annotations

from datetime import datetime, timezone

from prdigest.models import Edition
from prdigest.review.decision import decision_summary
from prdigest.store import Store

MIGRATIONS = [
    """
    CREATE TABLE review_editions (
        edition TEXT PRIMARY KEY, approver TEXT, approved_at TEXT NOT NULL, note TEXT NOT NULL,
        run_id TEXT, approved INTEGER NOT NULL, edited INTEGER NOT NULL, rejected INTEGER NOT NULL);
    CREATE TABLE review_entries (
        edition TEXT NOT NULL, number INTEGER NOT NULL, status TEXT NOT NULL, draft_verdict TEXT NOT NULL,
        final_verdict TEXT NOT NULL, edit_distance INTEGER, drafter TEXT NOT NULL,
        PRIMARY KEY (edition, number))
    """,
]

# Portable upserts (SQLite and PostgreSQL): a second review of the same edition replaces the first.
_EDITION = (
    "INSERT INTO review_editions (edition, approver, approved_at, note, run_id, approved, edited, rejected) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition) DO UPDATE SET approver = excluded.approver, "
    "approved_at = excluded.approved_at, note = excluded.note, run_id = excluded.run_id, "
    "approved = excluded.approved, edited = excluded.edited, rejected = excluded.rejected")
_ENTRY = (
    "INSERT INTO review_entries (edition, number, status, draft_verdict, final_verdict, edit_distance, drafter) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition, number) DO UPDATE SET status = excluded.status, "
    "draft_verdict = excluded.draft_verdict, final_verdict = excluded.final_verdict, "
    "edit_distance = excluded.edit_distance, drafter = excluded.drafter")


def record_review(store: Store, draft: Edition, reviewed: Edition, run_id: str | None = None) -> None:
    """Store who approved the edition, when, and per entry its status and edit distance (the drafter's signal),
    in one transaction."""
    store.migrate("review", MIGRATIONS)
    counts = decision_summary(reviewed)
    drafted = {e.number: e.verdict.value for e in draft.entries}
    edition_row = (reviewed.key, reviewed.approver,
                   (reviewed.approved_at or datetime.now(timezone.utc)).isoformat(), reviewed.review_note, run_id,
                   counts.get("approved", 0), counts.get("edited", 0), counts.get("rejected", 0))
    entry_rows = [(reviewed.key, e.number, e.status.value, drafted.get(e.number, e.verdict.value), e.verdict.value,
                   e.edit_distance, e.drafter) for e in reviewed.entries]

    def write(tx: Store) -> None:
        tx.execute(_EDITION, edition_row)
        tx.executemany(_ENTRY, entry_rows)

    store.atomic(write)
