"""The collector's part of the state store: collected PRs keyed by repo, number and ``updated_at``, with the
ETags of their list endpoints, so a re-run fetches only what changed and a killed run resumes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from prdigest.kernel.models import PullRequest
from prdigest.kernel.storage import Store

#: Append-only: migrations[i] takes the "github" schema from version i to i + 1.
MIGRATIONS = [
    """
    CREATE TABLE github_pulls (
        repo        TEXT    NOT NULL,
        number      INTEGER NOT NULL,
        updated_at  TEXT    NOT NULL,          -- GitHub's updated_at when fetched (ISO, UTC)
        pr_json     TEXT    NOT NULL,          -- prdigest.kernel.models.PullRequest
        parts_json  TEXT    NOT NULL,          -- comments by endpoint, reused on 304
        etags_json  TEXT    NOT NULL,          -- endpoint -> ETag of its single page
        fetched_at  TEXT    NOT NULL,
        PRIMARY KEY (repo, number)
    )
    """,
]

_BATCH = 500  # under SQLite's default limit of 999 bound variables (PostgreSQL allows 65535)


@dataclass(frozen=True)
class CachedPR:
    """A stored PR with the per-endpoint comment lists and ETags it was built from."""

    updated_at: datetime
    pr: PullRequest
    parts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    etags: dict[str, str] = field(default_factory=dict)


class PullCache:
    """Read and write collected PRs of one repo; each ``put`` is one transaction, so a kill loses at most the
    PR being written, never half of one."""

    def __init__(self, store: Store, repo: str) -> None:
        store.migrate("github", MIGRATIONS)
        self._conn = store
        self._repo = repo.lower()

    def get_many(self, numbers: list[int]) -> dict[int, CachedPR]:
        """The stored PRs among ``numbers``."""
        found: dict[int, CachedPR] = {}
        for start in range(0, len(numbers), _BATCH):
            chunk = numbers[start:start + _BATCH]
            marks = ",".join("?" * len(chunk))
            rows = self._conn.execute(
                f"SELECT number, updated_at, pr_json, parts_json, etags_json FROM github_pulls "
                f"WHERE repo = ? AND number IN ({marks})", (self._repo, *chunk)).rows
            for number, updated, pr_json, parts_json, etags_json in rows:
                found[number] = CachedPR(
                    updated_at=datetime.fromisoformat(updated), pr=PullRequest.model_validate_json(pr_json),
                    parts=json.loads(parts_json), etags=json.loads(etags_json))
        return found

    def put(self, updated_at: datetime, pr: PullRequest, parts: dict[str, list[dict[str, Any]]],
            etags: dict[str, str]) -> None:
        """Store (or replace) one PR atomically."""
        row = (self._repo, pr.number, updated_at.astimezone(timezone.utc).isoformat(), pr.model_dump_json(),
               json.dumps(parts, separators=(",", ":")), json.dumps(etags),
               datetime.now(timezone.utc).isoformat())
        self._conn.execute(  # one statement: atomic, and retried while the database is busy
            "INSERT INTO github_pulls(repo, number, updated_at, pr_json, parts_json, etags_json, fetched_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(repo, number) DO UPDATE SET "
            "updated_at = excluded.updated_at, pr_json = excluded.pr_json, parts_json = excluded.parts_json, "
            "etags_json = excluded.etags_json, fetched_at = excluded.fetched_at", row)

    def count(self) -> int:
        """How many PRs of this repo are stored."""
        row = self._conn.fetchone("SELECT COUNT(*) FROM github_pulls WHERE repo = ?", (self._repo,))
        return int(row[0]) if row else 0

    def stored(self) -> list[PullRequest]:
        """Every stored PR of this repo (``digest rules check --source stored`` reads a week from here)."""
        rows = self._conn.execute("SELECT pr_json FROM github_pulls WHERE repo = ? ORDER BY number",
                                  (self._repo,)).rows
        return [PullRequest.model_validate_json(pr_json) for (pr_json,) in rows]
