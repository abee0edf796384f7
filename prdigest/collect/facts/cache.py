"""Facts kept in the state store by merge commit and facts version, with the commit's changed files (path,
status, line counts): a warm re-run computes none and reads no file from git."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone

from prdigest.kernel.models import Change, FileChange
from prdigest.kernel.storage import Store

COMPONENT = "code-facts"
MIGRATIONS = [
    """CREATE TABLE code_facts (
         sha TEXT NOT NULL,
         version TEXT NOT NULL,
         facts TEXT NOT NULL,
         created_at TEXT NOT NULL,
         PRIMARY KEY (sha, version)
       )""",
]


class FactsCache:
    """The ``code_facts`` table: one row per (merge commit, facts version + code section)."""

    def __init__(self, store: Store) -> None:
        store.migrate(COMPONENT, MIGRATIONS)
        self._store = store

    def get_many(self, shas: Iterable[str], version: str) -> dict[str, tuple[list[Change], list[FileChange]]]:
        """The stored facts and files of each of ``shas`` that has them."""
        wanted = sorted(set(shas))
        found: dict[str, tuple[list[Change], list[FileChange]]] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            marks = ", ".join("?" for _ in chunk)
            for sha, facts in self._store.fetchall(
                    f"SELECT sha, facts FROM code_facts WHERE version = ? AND sha IN ({marks})", (version, *chunk)):
                data = json.loads(facts)
                found[sha] = ([Change.model_validate(f) for f in data["facts"]],
                              [FileChange.model_validate(f) for f in data["files"]])
        return found

    def put_many(self, facts: dict[str, tuple[list[Change], list[FileChange]]], version: str) -> None:
        """Store each commit's facts and files (replacing older rows of the same version)."""
        now = datetime.now(timezone.utc).isoformat()
        self._store.executemany(
            "INSERT INTO code_facts (sha, version, facts, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (sha, version) DO UPDATE SET facts = excluded.facts, created_at = excluded.created_at",
            [(sha, version, json.dumps({"facts": [c.model_dump(mode="json") for c in changes],
                                        "files": [f.model_dump(mode="json", exclude_none=True) for f in files]},
                                       ensure_ascii=False), now)
             for sha, (changes, files) in facts.items()])

    def __len__(self) -> int:
        row = self._store.fetchone("SELECT COUNT(*) FROM code_facts")
        return int(row[0]) if row else 0
