"""The draft cache: LLM drafts kept in the state store, reused while nothing that shaped them changed.

The key hashes the PR's content (title, body, labels, files with sizes and hunks, review comments),
its subsystems, the prompt versions, the model, the language and the input budget. ``merged_at`` and
``updated_at`` are left out on purpose: a PR whose metadata moved but whose content did not keeps its
draft. Only validated LLM drafts are stored; a fallback is retried on the next run. The model's answers to
an edition's own prompts (ledes, the read-first ranking) are cached by request in the same way
(:func:`cached_complete`).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone

from prdigest.kernel.models import DraftEntry, PullRequest
from prdigest.kernel.rowseal import RowSealer
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import hash_bytes, scrub

log = logging.getLogger(__name__)

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
    # Each row sealed (prdigest.kernel.rowseal): a draft written into the table by hand is not reused as it is.
    "ALTER TABLE drafts ADD COLUMN seal TEXT",
]


def draft_key(pr: PullRequest, subsystems: list[str], *, prompt_version: str, model: str, language: str,
              budget: int, context: str = "") -> str:
    """A stable hash of everything that shapes a PR's draft (``context``: the fingerprint of what the drafter
    is given besides the PR, its facts and relations; empty when none)."""
    content: dict[str, object] = {
        "number": pr.number, "title": pr.title, "body": pr.body, "author": pr.author,
        "labels": sorted(pr.labels), "additions": pr.additions, "deletions": pr.deletions,
        "files": [[f.path, f.previous_path, f.additions, f.deletions, f.status, f.patch] for f in pr.files],
        "comments": [[c.author, c.body, c.path] for c in pr.review_comments],
        "subsystems": sorted(subsystems), "prompt": prompt_version, "model": model, "language": language,
        "budget": budget,
    }
    # The discussion and the context only when there are any: a PR without them keeps its key.
    if pr.reviews or pr.comments or pr.linked_issues:
        content["discussion"] = [[[r.author, r.state, r.body] for r in pr.reviews],
                                 [[c.author, c.body] for c in pr.comments],
                                 [[i.number, i.title, i.body, i.state] for i in pr.linked_issues]]
    if pr.changes:
        content["changes"] = [c.model_dump(mode="json") for c in pr.changes]
    if context:
        content["context"] = context
    blob = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(hash_bytes(blob)).hexdigest()


class DraftCache:
    """Drafts by key in the ``drafts`` table; safe to share between drafting threads (the store is).

    With ``seal`` (the run's record key), each row is sealed when stored and a row whose seal does not check (written
    outside pr-digest, or by a run without the key) is a miss: the PR is drafted again and its row replaced.
    """

    def __init__(self, store: Store, seal: RowSealer | None = None) -> None:
        store.migrate("drafts", MIGRATIONS)
        self._conn = store
        self._seal = seal

    def get(self, key: str) -> DraftEntry | None:
        """The stored draft for ``key``, or None (also when its seal does not check)."""
        row = self._conn.fetchone("SELECT entry, seal FROM drafts WHERE key = ?", (key,))
        if not row:
            return None
        if self._seal is not None and not self._seal.accepts_row(row[1], "drafts", (key, row[0])):
            log.warning("draft cache: the stored draft %s… is not sealed with this deployment's record key "
                        "(written outside pr-digest, or by a run without the key): the PR is drafted again", key[:12])
            return None
        return DraftEntry.model_validate_json(row[0])

    def put(self, key: str, draft: DraftEntry, *, model: str, language: str, prompt_version: str) -> None:
        """Store ``draft`` under ``key`` (replacing any older one), sealed when the cache has a key."""
        entry = draft.model_dump_json()
        seal = self._seal.seal_row("drafts", (key, entry)) if self._seal is not None else None
        self._conn.execute(
            "INSERT INTO drafts (key, number, model, language, prompt_version, entry, tokens_in, tokens_out,"
            " created_at, seal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO UPDATE SET"
            " number = excluded.number, model = excluded.model, language = excluded.language,"
            " prompt_version = excluded.prompt_version, entry = excluded.entry, tokens_in = excluded.tokens_in,"
            " tokens_out = excluded.tokens_out, created_at = excluded.created_at, seal = excluded.seal",
            (key, draft.number, model, language, prompt_version, entry, draft.tokens_in,
             draft.tokens_out, datetime.now(timezone.utc).isoformat(), seal),
        )

    def __len__(self) -> int:
        row = self._conn.fetchone("SELECT COUNT(*) FROM drafts")
        return int(row[0]) if row else 0


ANSWER_MIGRATIONS = [
    """CREATE TABLE answers (
         key TEXT PRIMARY KEY,
         model TEXT NOT NULL,
         answer TEXT NOT NULL,
         created_at TEXT NOT NULL
       )""",
    "ALTER TABLE answers ADD COLUMN seal TEXT",
]


def answer_key(messages: Sequence[Mapping[str, str]], model: str) -> str:
    """A stable hash of one chat request: the model and every message (the prompt's version and text and
    the entries it carries are all in them)."""
    blob = json.dumps({"model": model, "messages": [dict(m) for m in messages]}, ensure_ascii=False,
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(hash_bytes(blob)).hexdigest()


class AnswerCache:
    """Model answers to edition-level prompts (ledes, read-first rankings) by request, in the ``answers`` table:
    a warm re-run of the same edition asks the model nothing. Sealed like :class:`DraftCache` when given ``seal``."""

    def __init__(self, store: Store, seal: RowSealer | None = None) -> None:
        store.migrate("answers", ANSWER_MIGRATIONS)
        self._conn = store
        self._seal = seal

    def get(self, key: str) -> str | None:
        """The stored answer for ``key``, or None (also when its seal does not check: the model is asked again)."""
        row = self._conn.fetchone("SELECT answer, seal FROM answers WHERE key = ?", (key,))
        if not row:
            return None
        if self._seal is not None and not self._seal.accepts_row(row[1], "answers", (key, row[0])):
            log.warning("answer cache: the stored answer %s… is not sealed with this deployment's record key: "
                        "the model is asked again", key[:12])
            return None
        return str(row[0])

    def put(self, key: str, answer: str, *, model: str) -> None:
        """Store ``answer`` under ``key`` (replacing any older one), sealed when the cache has a key."""
        seal = self._seal.seal_row("answers", (key, answer)) if self._seal is not None else None
        self._conn.execute(
            "INSERT INTO answers (key, model, answer, created_at, seal) VALUES (?, ?, ?, ?, ?) ON CONFLICT (key)"
            " DO UPDATE SET model = excluded.model, answer = excluded.answer, created_at = excluded.created_at,"
            " seal = excluded.seal",
            (key, model, answer, datetime.now(timezone.utc).isoformat(), seal))


def cached_complete(complete: Callable[[list[dict[str, str]]], str], store: Store, *,
                    model: str, seal: RowSealer | None = None) -> Callable[[list[dict[str, str]]], str]:
    """``complete`` answering from the cache first; a new answer is stored (a rejected one too: the same
    request would get the same answer, and the caller falls back the same way). ``seal``: the run's record key."""
    cache = AnswerCache(store, seal)

    def answer(messages: list[dict[str, str]]) -> str:
        key = answer_key(messages, model)
        found = cache.get(key)
        if found is not None:
            return found
        text = scrub(complete(messages))  # a model's "\\ud800" would stop the store's write and every use after
        cache.put(key, text, model=model)
        return text

    return answer
