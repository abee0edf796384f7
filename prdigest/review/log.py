"""The review record in the state store: who approved an edition, when, and what became of each draft."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timezone

from prdigest.kernel.models import Edition
from prdigest.kernel.rowseal import RowSealer
from prdigest.kernel.storage import Store
from prdigest.review.cleared_actions import remember_cleared
from prdigest.review.decision import decision_summary, entry_text
from prdigest.review.edits import remember

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
    # v2: what `digest eval --from-reviews` scores: the texts before and after, the subsystems, who drafted.
    """
    ALTER TABLE review_editions ADD COLUMN repo TEXT;
    ALTER TABLE review_entries ADD COLUMN subsystems TEXT;
    ALTER TABLE review_entries ADD COLUMN draft_headline TEXT;
    ALTER TABLE review_entries ADD COLUMN final_headline TEXT;
    ALTER TABLE review_entries ADD COLUMN draft_text TEXT;
    ALTER TABLE review_entries ADD COLUMN final_text TEXT;
    ALTER TABLE review_entries ADD COLUMN model TEXT;
    ALTER TABLE review_entries ADD COLUMN prompt_version TEXT
    """,
]

# Portable upserts (SQLite and PostgreSQL): a second review of the same edition replaces the first.
_EDITION = (
    "INSERT INTO review_editions (edition, approver, approved_at, note, run_id, approved, edited, rejected, repo) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition) DO UPDATE SET approver = excluded.approver, "
    "repo = excluded.repo, "
    "approved_at = excluded.approved_at, note = excluded.note, run_id = excluded.run_id, "
    "approved = excluded.approved, edited = excluded.edited, rejected = excluded.rejected")
_ENTRY = (
    "INSERT INTO review_entries (edition, number, status, draft_verdict, final_verdict, edit_distance, drafter, "
    "subsystems, draft_headline, final_headline, draft_text, final_text, model, prompt_version) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition, number) DO UPDATE SET "
    "status = excluded.status, draft_verdict = excluded.draft_verdict, final_verdict = excluded.final_verdict, "
    "edit_distance = excluded.edit_distance, drafter = excluded.drafter, subsystems = excluded.subsystems, "
    "draft_headline = excluded.draft_headline, final_headline = excluded.final_headline, "
    "draft_text = excluded.draft_text, final_text = excluded.final_text, model = excluded.model, "
    "prompt_version = excluded.prompt_version")


def record_review(store: Store, draft: Edition, reviewed: Edition, run_id: str | None = None, *,
                  prompt_version: str | None = None, first: Sequence[int] = (),
                  seal: RowSealer | None = None) -> None:
    """Store who approved the edition, when, and per entry its status, the drafted and the final verdict and
    text, and the edit distance (the drafter's signal, scored by ``digest eval --from-reviews``), in one
    transaction; then keep each entry's edit, and the read-first order ``first`` the editor gave, so that later
    drafts of the same PRs get them again (:mod:`prdigest.review.edits`), sealed with ``seal`` (the run's record
    key)."""
    store.migrate("review", MIGRATIONS)
    counts = decision_summary(reviewed)
    drafted = {e.number: e for e in draft.entries}
    edition_row = (reviewed.key, reviewed.approver,
                   (reviewed.approved_at or datetime.now(timezone.utc)).isoformat(), reviewed.review_note, run_id,
                   counts.get("approved", 0), counts.get("edited", 0), counts.get("rejected", 0), reviewed.repo)
    entry_rows = []
    for e in reviewed.entries:
        before = drafted.get(e.number, e)
        entry_rows.append((reviewed.key, e.number, e.status.value, before.verdict.value, e.verdict.value,
                           e.edit_distance, e.drafter, json.dumps(list(e.subsystems)), before.headline, e.headline,
                           entry_text(before), entry_text(e), before.drafter, prompt_version))

    def write(tx: Store) -> None:
        tx.execute(_EDITION, edition_row)
        tx.executemany(_ENTRY, entry_rows)

    store.atomic(write)
    remember(store, draft, reviewed, first, seal)  # a held edition's entries are rejected: nothing to keep
    remember_cleared(store, draft, reviewed)  # cleared actions stay cleared in later editions
