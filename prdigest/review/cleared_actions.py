"""Cleared actions that stay cleared: when the editor clears an entry's Action required (``nobreak N``), each
public fact behind it is kept per (repo, symbol and what it became) (:func:`prdigest.kernel.actions.action_key`),
and later drafts of the repo leave those facts out of their ``action[]`` until the upstream changes that
symbol again (a new value is a new key).

One table of the state store (component ``cleared-actions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from prdigest.kernel.actions import action_key, actions
from prdigest.kernel.models import Edition, Entry, PullRequest
from prdigest.kernel.storage import Store

COMPONENT = "cleared-actions"
MIGRATIONS = [
    """
    CREATE TABLE cleared_actions (
        repo TEXT NOT NULL, key TEXT NOT NULL, number INTEGER NOT NULL, edition TEXT NOT NULL,
        cleared_at TEXT NOT NULL, PRIMARY KEY (repo, key))
    """,
]


def remember_cleared(store: Store, draft: Edition, reviewed: Edition) -> list[int]:
    """Keep the facts of every entry whose actions the editor cleared; the PR numbers kept."""
    store.migrate(COMPONENT, MIGRATIONS)
    drafted = {e.number: e for e in draft.entries}
    now = datetime.now(timezone.utc).isoformat()
    rows, numbers = [], []
    for entry in reviewed.entries:
        before = drafted.get(entry.number)
        if before is None or not before.action or entry.action:
            continue
        numbers.append(entry.number)
        rows += [(reviewed.repo.lower(), action_key(c), entry.number, reviewed.key, now)
                 for c in entry.changes if c.reach == "public"]
    if rows:
        store.executemany("INSERT INTO cleared_actions (repo, key, number, edition, cleared_at) VALUES (?, ?, ?, ?, ?) "
                          "ON CONFLICT (repo, key) DO UPDATE SET number = excluded.number, "
                          "edition = excluded.edition, cleared_at = excluded.cleared_at", rows)
    return numbers


def cleared_keys(store: Store, repo: str) -> frozenset[str]:
    """The fact keys the editors of ``repo`` cleared."""
    store.migrate(COMPONENT, MIGRATIONS)
    rows = store.execute("SELECT key FROM cleared_actions WHERE repo = ?", (repo.lower(),))
    return frozenset(str(r[0]) for r in rows)


def without_cleared(store: Store, repo: str, language: str, drafted: Sequence[tuple[PullRequest, Entry]]
                    ) -> list[Entry]:
    """Each entry's ``action[]`` made again without the facts an editor cleared before."""
    cleared = cleared_keys(store, repo)
    if not cleared:
        return [e for _, e in drafted]
    return [e.model_copy(update={"action": actions(pr.changes, language, cleared)}) if e.action else e
            for pr, e in drafted]
