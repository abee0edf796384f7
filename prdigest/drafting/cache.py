"""The draft cache: LLM drafts kept in the state store, reused while nothing that shaped them changed.

The key hashes the PR's content (title, body, labels, files with sizes and hunks, review comments),
its subsystems, the prompt versions, the model, the language and the input budget. ``merged_at`` and
``updated_at`` are left out on purpose: a PR whose metadata moved but whose content did not keeps its
draft. Only validated LLM drafts are stored; a fallback is retried on the next run.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timezone

from prdigest.models import DraftEntry, PullRequest
from prdigest.store import Store

MIGRATIONS = [
    """CREATE TABLE drafts (
         key TEXT PRIMARY KEY,
         number INTEGER NOT NULL,
         model TEXT NOT NULL,
         language TEXT NOT NULL,
         prompt_version TEXT NOT NULL,
         entry TEXT NOT NULL,
         tokens_in INTEGER NOT NULL,
         tokens_out INTEGER NOT NULL,
         created_at TEXT NOT NULL
       );
       CREATE INDEX drafts_number ON drafts(number)""",
]


def draft_key(pr: PullRequest, subsystems: list[str], *, prompt_version: str, model: str, language: str,
              budget: int) -> str:
    """A stable hash of everything that shapes a PR's draft."""
    content = {
        "number": pr.number, "title": pr.title, "body": pr.body, "author": pr.author,
        "labels": sorted(pr.labels), "additions": pr.additions, "deletions": pr.deletions,
        "files": [[f.path, f.previous_path, f.additions, f.deletions, f.status, f.patch] for f in pr.files],
        "comments": [[c.author, c.body, c.path] for c in pr.review_comments],
        "subsystems": sorted(subsystems), "prompt": prompt_version, "model": model, "language": language,
        "budget": budget,
    }
    blob = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class DraftCache:
    """Drafts by key in the ``drafts`` table; safe to share between drafting threads (the store is)."""

    def __init__(self, store: Store) -> None:
        store.migrate("drafts", MIGRATIONS)
        self._conn = store

    def get(self, key: str) -> DraftEntry | None:
        """The stored draft for ``key``, or None."""
        row = self._conn.fetchone("SELECT entry FROM drafts WHERE key = ?", (key,))
        return DraftEntry.model_validate_json(row[0]) if row else None

    def put(self, key: str, draft: DraftEntry, *, model: str, language: str, prompt_version: str) -> None:
        """Store ``draft`` under ``key`` (replacing any older one)."""
        self._conn.execute(
            "INSERT INTO drafts (key, number, model, language, prompt_version, entry, tokens_in, tokens_out,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET"
            " number = excluded.number, model = excluded.model, language = excluded.language,"
            " prompt_version = excluded.prompt_version, entry = excluded.entry, tokens_in = excluded.tokens_in,"
            " tokens_out = excluded.tokens_out, created_at = excluded.created_at",
            (key, draft.number, model, language, prompt_version, draft.model_dump_json(), draft.tokens_in,
             draft.tokens_out, datetime.now(timezone.utc).isoformat()),
        )

    def __len__(self) -> int:
        row = self._conn.fetchone("SELECT COUNT(*) FROM drafts")
        return int(row[0]) if row else 0
