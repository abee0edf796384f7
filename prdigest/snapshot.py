"""The reviewed snapshot: the edition exactly as the editor was shown it, kept in the state store with a content
hash, so that what goes out after the review is what was reviewed.

A run that waits for an editor stores its draft edition here (keyed by the flow run) when the review starts.
When the run resumes, on this worker or any other that shares the state store, the approved edition is built
from this snapshot, never from re-collected or re-drafted data: a PR retitled during the review does not
change what is sent, and no LLM or GitHub call is made again. The editor's decision carries the hash it was
given, so a decision taken on other content is refused; a missing or altered snapshot fails the run before
anything is sent.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone

from pydantic import ValidationError

from prdigest.errors import ReviewError
from prdigest.models import Edition
from prdigest.store import Store

#: Append-only: migrations[i] takes the "snapshot" schema from version i to i + 1 (portable SQL: both dialects).
MIGRATIONS = [
    """
    CREATE TABLE review_snapshots (
        run_id      TEXT PRIMARY KEY,      -- the flow run waiting for (or resumed from) the review
        edition     TEXT NOT NULL,         -- Edition.key, for operators reading the table
        hash        TEXT NOT NULL,         -- content_hash of body
        body        TEXT NOT NULL,         -- the edition as canonical JSON (canonical_json)
        created_at  TEXT NOT NULL
    );
    CREATE INDEX review_snapshots_edition ON review_snapshots (edition)
    """,
]

_INSERT = ("INSERT INTO review_snapshots (run_id, edition, hash, body, created_at) VALUES (?, ?, ?, ?, ?) "
           "ON CONFLICT (run_id) DO NOTHING")
_SELECT = "SELECT hash, body, created_at FROM review_snapshots WHERE run_id = ?"


class SnapshotError(ReviewError):
    """The reviewed snapshot is missing, altered, or not the one the editor decided on: nothing is sent."""


def canonical_json(edition: Edition) -> str:
    """The edition as JSON with sorted keys and no spacing: the same text for the same content, after any
    round trip through JSON (a flow-run input, the state store)."""
    return json.dumps(edition.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def content_hash(edition: Edition) -> str:
    """``sha256:<hex>`` of the edition's canonical JSON: what an editor's decision names as the content it saw."""
    return _digest(canonical_json(edition))


def content_hash_of_json(text: str) -> str:
    """The :func:`content_hash` of an edition given as the JSON text a run published (``digest approve`` reads
    the draft so), hashed as received: a reader whose pr-digest version models the edition differently (a new
    field with a default) still names the content the run showed."""
    return _digest(json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True, separators=(",", ":")))


def _digest(body: str) -> str:
    return "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    """One stored snapshot: the flow run it belongs to, the edition as shown, its content hash."""

    run_id: str
    edition: Edition
    hash: str
    created_at: datetime

    def check_decision(self, decided_on: str) -> None:
        """Raise :class:`SnapshotError` unless ``decided_on`` (the hash the decision carries) is this snapshot's."""
        if decided_on != self.hash:
            raise SnapshotError(
                f"the review decision for {self.edition.name} names content {_short(decided_on)}, but the "
                f"reviewed snapshot of flow run {self.run_id} is {_short(self.hash)}: the editor decided on "
                "another version of the draft. Nothing was sent; start a new run and review it again")


def _short(value: str) -> str:
    return f"'{value[:19]}…'" if value else "(none)"


def save_snapshot(store: Store, run_id: str, edition: Edition) -> Snapshot:
    """Store ``edition`` as the snapshot of ``run_id`` unless one is stored already; return the stored one.

    Write-once: a second call for the same run (a resumed run, a retry, a concurrent worker) never replaces
    what the editor was shown; it gets the first snapshot back, checked.
    """
    store.migrate("snapshot", MIGRATIONS)
    body = canonical_json(edition)
    store.execute(_INSERT, (run_id, edition.key, _digest(body), body, datetime.now(timezone.utc).isoformat()))
    snapshot = load_snapshot(store, run_id)
    if snapshot is None:  # the row was inserted or already there: only a concurrent delete gets here
        raise SnapshotError(f"the reviewed snapshot of flow run {run_id} vanished right after it was stored: "
                            "is another process deleting rows of review_snapshots?")
    return snapshot


def load_snapshot(store: Store, run_id: str) -> Snapshot | None:
    """The snapshot of ``run_id``, or None when none was stored. Raises :class:`SnapshotError` when the stored
    content no longer matches its hash (edited in the database) or is not an edition this version reads."""
    store.migrate("snapshot", MIGRATIONS)
    row = store.fetchone(_SELECT, (run_id,))
    if row is None:
        return None
    stored_hash, body, created_at = row[0], row[1], row[2]
    if _digest(body) != stored_hash:
        raise SnapshotError(f"the reviewed snapshot of flow run {run_id} was altered in the state store (its "
                            f"content no longer matches {_short(stored_hash)}): nothing was sent; start a new run "
                            "and review it again")
    try:
        edition = Edition.model_validate_json(body)
    except ValidationError as exc:
        raise SnapshotError(f"the reviewed snapshot of flow run {run_id} cannot be read by this pr-digest "
                            f"({exc.error_count()} problem(s), first: {exc.errors()[0]['msg']}): resume it with the "
                            "version that started the review, or start a new run") from None
    if content_hash(edition) != stored_hash:  # e.g. a field this version drops or defaults differently
        raise SnapshotError(f"the reviewed snapshot of flow run {run_id} does not read back identically with this "
                            "pr-digest: resume it with the version that started the review, or start a new run")
    return Snapshot(run_id, edition, stored_hash, datetime.fromisoformat(created_at))


def missing_snapshot(run_id: str, edition_hint: str, state: str) -> SnapshotError:
    """The error of a resumed review whose snapshot is not in the state store (``state``: redacted location)."""
    return SnapshotError(
        f"flow run {run_id} ({edition_hint}) was resumed from its review, but the state store {state} holds no "
        "snapshot of what the editor was shown. Nothing was sent. Does this worker use the same DIGEST_STATE as "
        "the one that started the review? Set it in the worker's environment, or start a new run and review it")
