"""The edition record: one edition stored once, in the state store, with its content hash and a status that
only moves forward.

``collected → drafted → in_review → approved → published → delivering → delivered`` (or ``held`` after the
review, or ``partial`` while a delivery row is still pending). Everything else is a view of the record:
``digest.json`` is written from it, the review binds to its hash, the archive and later editions read the
published ones, ``digest status`` shows its status beside the ledger, ``digest resend`` rebuilds messages
from it. A run that starts an edition anew on purpose (``--resend-edition``) opens a new *revision*; within
a revision the status never goes back.

SQL is portable (both dialects of :mod:`prdigest.state.store`); the body is the edition's canonical JSON, so its
hash is the same after any round trip.

**The seal.** Every record pr-digest writes also carries a seal (:mod:`prdigest.state.seal`, where the threat
model is written down), checked before anything of it is delivered or resent (:meth:`EditionRecord.check_seal`).
"""

from __future__ import annotations

import hashlib
import json
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from prdigest.kernel.errors import ReviewError
from prdigest.kernel.models import Edition, EditionId, VariantRecord
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import hash_bytes
from prdigest.state import variant_rows
from prdigest.state.seal import SealKey  # re-exported: callers seal and check through this module

COMPONENT = "record"

#: Append only (see :meth:`prdigest.state.store.Store.migrate`).
MIGRATIONS = [
    """
    CREATE TABLE edition_records (
        key         TEXT PRIMARY KEY,      -- Edition.key: the exact repo and window
        repo        TEXT NOT NULL,
        since       TEXT NOT NULL,
        until       TEXT NOT NULL,
        name        TEXT NOT NULL,
        revision    INTEGER NOT NULL,      -- a new one only when an edition is run again on purpose
        status      TEXT NOT NULL,
        hash        TEXT NOT NULL,         -- content_hash of body
        body        TEXT NOT NULL,         -- the edition as canonical JSON
        run_id      TEXT,                  -- the flow run that reviews (or reviewed) this revision
        updated_at  TEXT NOT NULL
    );
    CREATE INDEX edition_records_repo ON edition_records (repo, until);
    CREATE INDEX edition_records_run ON edition_records (run_id)
    """,
    # The seal (see the module docstring): NULL for records written before pr-digest sealed them.
    "ALTER TABLE edition_records ADD COLUMN seal TEXT",
    # The variants in rows of their own (prdigest/state/variant_rows.py): ``parts`` lists their hashes (NULL:
    # a record stored before, its variants in its body).
    """
    ALTER TABLE edition_records ADD COLUMN parts TEXT;
    CREATE TABLE edition_variants (
        key         TEXT NOT NULL,         -- the record's key
        position    INTEGER NOT NULL,      -- the variant's place in the edition's list
        variant     TEXT NOT NULL,         -- VariantRecord.key
        hash        TEXT NOT NULL,         -- sha256 of body
        body        TEXT NOT NULL,         -- the variant as canonical JSON
        PRIMARY KEY (key, position)
    );
    CREATE INDEX edition_variants_variant ON edition_variants (key, variant)
    """,
]


class Status(StrEnum):
    """Where an edition stands; see the module docstring for the order."""

    COLLECTED = "collected"
    DRAFTED = "drafted"
    IN_REVIEW = "in_review"
    APPROVED = "approved"
    HELD = "held"
    PUBLISHED = "published"
    DELIVERING = "delivering"
    PARTIAL = "partial"
    DELIVERED = "delivered"


#: The legal moves of a record within one revision, listed: (from → to). Anything else is refused, in
#: :func:`save` and in :func:`mark` alike. A new revision (``--resend-edition``) starts again at collected or
#: drafted from any status; a tool re-publishing an edition (``replace``) may put it at published.
#: partial ⇄ delivering: a pending row is retried; held ends a revision.
TRANSITIONS: dict[Status | None, frozenset[Status]] = {
    None: frozenset({Status.COLLECTED, Status.DRAFTED, Status.IN_REVIEW, Status.PUBLISHED, Status.DELIVERED}),
    Status.COLLECTED: frozenset({Status.COLLECTED, Status.DRAFTED}),
    Status.DRAFTED: frozenset({Status.DRAFTED, Status.IN_REVIEW, Status.APPROVED, Status.HELD}),
    Status.IN_REVIEW: frozenset({Status.APPROVED, Status.HELD}),
    Status.APPROVED: frozenset({Status.APPROVED, Status.PUBLISHED}),
    Status.HELD: frozenset(),
    Status.PUBLISHED: frozenset({Status.PUBLISHED, Status.DELIVERING, Status.PARTIAL, Status.DELIVERED}),
    Status.DELIVERING: frozenset({Status.DELIVERING, Status.PARTIAL, Status.DELIVERED}),
    Status.PARTIAL: frozenset({Status.PARTIAL, Status.DELIVERING, Status.DELIVERED}),
    Status.DELIVERED: frozenset({Status.DELIVERED}),
}
#: Where a new revision may begin, and where a tool may re-publish.
_RESTART = frozenset({Status.COLLECTED, Status.DRAFTED})


def legal(current: Status | None, status: Status) -> bool:
    """True when a record at ``current`` (None: no record yet) may move to ``status`` within its revision."""
    return status in TRANSITIONS[current]


#: Statuses whose edition is published: the archive and later editions read these.
PUBLISHED = (Status.PUBLISHED, Status.DELIVERING, Status.PARTIAL, Status.DELIVERED)


class RecordError(ReviewError):
    """The edition record is altered, unreadable, or asked to move backwards: nothing is sent (shown to users)."""


def canonical_json(edition: Edition) -> str:
    """The edition as JSON with sorted keys and no spacing: the same text for the same content."""
    return json.dumps(edition.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def content_hash(edition: Edition) -> str:
    """``sha256:<hex>`` of the edition's canonical JSON: what a review decision names as the content it saw."""
    return _digest(canonical_json(edition))


def content_hash_of_json(text: str) -> str:
    """The :func:`content_hash` of an edition given as JSON text (the draft a run showed its editor)."""
    return _digest(json.dumps(json.loads(text), ensure_ascii=False, sort_keys=True, separators=(",", ":")))


def _digest(body: str) -> str:
    return "sha256:" + hashlib.sha256(hash_bytes(body)).hexdigest()


def short(value: str) -> str:
    """A hash as people read it in an error."""
    return f"'{value[:19]}…'" if value else "(none)"




@dataclass(frozen=True)
class EditionRecord:
    """One stored edition: its content, the content's hash, status and revision, the reviewing run."""

    edition: Edition
    status: Status
    hash: str
    revision: int
    run_id: str | None
    updated_at: datetime
    #: The record's seal as stored (None: written before records were sealed, or without a key).
    seal: str | None = None
    #: Its variants' hashes as its row keeps them (:mod:`prdigest.state.variant_rows`); None: a record stored
    #: before, its variants in its body.
    parts: str | None = None
    #: Loaded without its variants (``edition.variants`` is empty): :func:`variants_of` reads the ones asked for.
    partial: bool = False

    @property
    def sealed(self) -> str:
        """What the seal binds: the content hash, and the hash of the parts list when the variants are apart."""
        return sealed_content(self.hash, self.parts)

    @property
    def key(self) -> str:
        return self.edition.key

    def check_seal(self, key: SealKey) -> None:
        """Raise :class:`RecordError` unless pr-digest sealed this very content at this status with ``key``:
        called before anything of the record is delivered or resent."""
        name = self.edition.name
        if not self.seal:
            raise RecordError(f"the edition record of {name} carries no seal (written before pr-digest sealed "
                              "records, or its seal was removed in the state store): nothing is sent; run the "
                              "edition again with --resend-edition and review it (readers already sent are skipped)")
        if not key.accepts(self.seal, self.key, self.revision, self.status.value, self.sealed):
            raise RecordError(f"the edition record of {name} ({self.status}, revision {self.revision}, content "
                              f"{short(self.hash)}) is not what pr-digest stored: it was rewritten in the state "
                              f"store after it was sealed, or sealed with another key than {key.origin}. "
                              "Nothing is sent; run the edition again with --resend-edition and review it")

    @property
    def published(self) -> bool:
        return self.status in PUBLISHED

    def check_shown(self, shown: str, decided_on: str = "") -> None:
        """Raise :class:`RecordError` unless this record's content is the draft its editor was shown (``shown``:
        the hash of the draft as the run published it for review) and the decision, when it names a hash
        (``digest approve`` does), names that one."""
        name = self.edition.name
        if not shown:
            raise RecordError(f"{name}: the draft shown for review is missing from the flow run, so the decision "
                              "cannot be bound to what the editor saw: nothing is sent; run the edition again")
        if decided_on and decided_on != shown:
            raise RecordError(f"the review decision for {name} names content {short(decided_on)}, but the editor "
                              f"was shown {short(shown)}: nothing is sent; review the current draft again")
        if self.hash != shown:
            raise RecordError(f"the edition record of {name} is {short(self.hash)}, not the draft {short(shown)} "
                              "its editor was shown: it was changed in the state store during the review. Nothing "
                              "is sent; run the edition again (--resend-edition) and review it")


_COLUMNS = "key, repo, since, until, name, revision, status, hash, body, run_id, updated_at, seal, parts"


def sealed_content(digest: str, parts: str | None) -> str:
    """The content a record's seal binds: its hash, and with its variants apart the hash of their list too (a
    variant read on its own is checked against that list)."""
    return digest if parts is None else f"{digest} {_digest(parts)}"


def ensure_schema(store: Store) -> None:
    """Create or upgrade the record's table."""
    store.migrate(COMPONENT, MIGRATIONS)


def load(store: Store, edition: EditionId | str, *, variants: bool = True) -> EditionRecord | None:
    """The record of ``edition`` (its identity or key), checked against its hash; None when none is stored.
    ``variants=False``: without its variants (none of their rows read; see :func:`variants_of`)."""
    ensure_schema(store)
    key = edition if isinstance(edition, str) else edition.key
    row = store.fetchone(f"SELECT {_COLUMNS} FROM edition_records WHERE key = ?", (key,))
    return None if row is None else _record(store, row, variants=variants)


def load_by_run(store: Store, run_id: str) -> EditionRecord | None:
    """The record a flow run reviews (a run resumed from its review finds its edition here)."""
    ensure_schema(store)
    row = store.fetchone(f"SELECT {_COLUMNS} FROM edition_records WHERE run_id = ? ORDER BY updated_at DESC",
                         (run_id,))
    return None if row is None else _record(store, row)


def resolve(store: Store, asked: str, *, variants: bool = True) -> EditionRecord | None:
    """The record named by its key, its name as ``digest run`` prints it (newest when two share it), or its
    exact identity ``repo@since..until`` (``variants``: as :func:`load`)."""
    found = load(store, asked, variants=variants)
    if found is not None:
        return found
    row = store.fetchone(f"SELECT {_COLUMNS} FROM edition_records WHERE name = ? ORDER BY until DESC", (asked,))
    if row is not None:
        return _record(store, row, variants=variants)
    for record in published(store):
        if record.edition.id.exact == asked:
            return load(store, record.key, variants=variants) if variants else record
    return None


def published(store: Store, repo: str | None = None) -> list[EditionRecord]:
    """Every published record (of ``repo``), newest window first, without their variants (the archive and later
    editions read none: :func:`load` or :func:`variants_of` gives them)."""
    ensure_schema(store)
    marks = ", ".join("?" for _ in PUBLISHED)
    sql = f"SELECT {_COLUMNS} FROM edition_records WHERE status IN ({marks})"
    params: list[object] = [s.value for s in PUBLISHED]
    if repo is not None:
        sql += " AND repo = ?"
        params.append(repo)
    rows = store.fetchall(sql + " ORDER BY until DESC, since DESC, repo", params)
    return [_record(store, r, variants=False) for r in rows]


def variants_of(store: Store, record: EditionRecord, keys: Iterable[str] | None = None) -> list[VariantRecord]:
    """The variants of ``record`` (those of ``keys``, in the edition's order), each checked against the record's
    list of their hashes: only their rows are read."""
    wanted = None if keys is None else set(keys)
    if record.parts is None or not record.partial:
        return [v for v in record.edition.variants if wanted is None or v.key in wanted]
    listed = variant_rows.Parts.parse(record.parts).variants
    rows = variant_rows.read(store, record.key, wanted)
    found = []
    for position, variant, digest, body in rows:
        if position >= len(listed) or listed[position] != (variant, digest) or _digest(body) != digest:
            raise RecordError(f"the edition record {record.key} was altered in the state store (its variant "
                              f"'{variant}' no longer matches the record): nothing is sent; run the edition again")
        found.append(_parsed_variant(record.key, body))
    return found


class Conflict(RecordError):
    """Another run moved the record meanwhile: the caller reads it again and follows it."""


#: Work in progress before a review: a run may replace another's draft of the same revision.
_EARLY = (Status.COLLECTED, Status.DRAFTED)


def save(store: Store, edition: Edition, status: Status, *, run_id: str | None = None,
         expect: EditionRecord | None = None, new_revision: bool = False, replace: bool = False,
         seal: SealKey | None = None) -> EditionRecord:
    """Store ``edition`` at ``status`` and return the record as stored.

    ``expect``: the record this step read (None: none, or a draft in progress). The write happens only if the
    stored record is still that revision and status (compare and set; drafts before the review may replace one
    another), otherwise :class:`Conflict`. ``new_revision``: the edition is run again on purpose. Moving to a
    lower status is refused. ``replace``: store it whatever is stored (publishing an edition again from a tool).
    ``seal``: the key the record is sealed with (None: stored unsealed, and never delivered as it is).
    """
    ensure_schema(store)
    if _PARTIAL.get(id(edition)) is edition:
        raise RecordError(f"{edition.name}: an edition read without its variants cannot be stored (it would lose "
                          "them): read its record with its variants")
    # The variants in rows of their own; the body keeps the rest (the hash is the whole edition's all the same).
    head = variant_rows.head_of(edition)
    body = canonical_json(edition) if head is None else head
    now = datetime.now(timezone.utc).isoformat()

    def write(tx: Store) -> EditionRecord:
        # The stored record's place only, not its content: parsing an edition with thousands of variants again to
        # learn its status doubled the memory of each save at 10,000 readers.
        row = tx.fetchone("SELECT revision, status, run_id FROM edition_records WHERE key = ?", (edition.key,))
        current = None if row is None else _Place(int(row[0]), Status(row[1]), row[2])
        if new_revision and status not in _RESTART:
            raise RecordError(f"{edition.name}: a new revision starts at collected or drafted, not '{status}'")
        if replace and status != Status.PUBLISHED:
            raise RecordError(f"{edition.name}: only publishing may replace a stored record, not '{status}'")
        if current is None and not replace and not legal(None, status):
            raise RecordError(f"{edition.name}: a new edition record cannot start at '{status}'")
        if current is not None and not new_revision and not replace:
            _check_expected(edition, current, expect, status)
        revision = (current.revision + 1 if new_revision else current.revision) if current else 1
        owner = run_id if run_id is not None else (current.run_id if current and not new_revision else None)
        if head is None:
            variant_rows.forget(tx, edition.key)
            digest, listed = _digest(body), None
        else:  # each variant serialised, hashed and written (when changed) one at a time
            stored = variant_rows.store(tx, edition.key, head, edition.variants)
            digest, listed = stored.hash, stored.parts
        content = sealed_content(digest, listed)
        sealed = seal.seal(edition.key, revision, status.value, content) if seal is not None else None
        values = (edition.key, edition.repo, _stamp(edition.since), _stamp(edition.until), edition.name, revision,
                  status.value, digest, body, owner, now, sealed, listed)
        if current is None:
            tx.execute(f"INSERT INTO edition_records ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       values)
        else:
            tx.execute("UPDATE edition_records SET repo = ?, since = ?, until = ?, name = ?, revision = ?, status = ?, "
                       "hash = ?, body = ?, run_id = ?, updated_at = ?, seal = ?, parts = ? WHERE key = ?",
                       (*values[1:], edition.key))
        return EditionRecord(edition, status, digest, revision, owner, datetime.fromisoformat(now), sealed, listed)

    return store.atomic(write)


@dataclass(frozen=True)
class _Place:
    """Where a stored record stands: what a save checks before it writes."""

    revision: int
    status: Status
    run_id: str | None


def _check_expected(edition: Edition, current: _Place, expect: EditionRecord | None, status: Status) -> None:
    same = expect is not None and (current.revision, current.status) == (expect.revision, expect.status)
    # Two runs drafting the same week before any review: the later draft replaces the earlier one.
    drafting = current.status in _EARLY and (expect is None or (expect.status in _EARLY
                                                                 and expect.revision == current.revision))
    if not (same or drafting):
        raise Conflict(f"{edition.name}: another run moved the edition record to '{current.status}' (revision "
                       f"{current.revision}) meanwhile")
    if not legal(current.status, status):
        raise RecordError(f"{edition.name}: the edition record is '{current.status}' and cannot move to "
                          f"'{status}'")


def mark(store: Store, record: EditionRecord, status: Status, seal: SealKey | None = None) -> None:
    """Move the published ``record`` to a delivery status (``delivering``, ``partial``, ``delivered``), sealed
    anew at that status. Only the revision and content this run delivers are marked.

    Compare and set on the status it read, checked against :data:`TRANSITIONS`: a record already further
    (delivered, when a concurrent deliverer finishes later and says partial) is left as it is, so concurrent
    deliverers of one edition never conflict here (the ledger orders their messages); a record that is not
    published at all is refused."""
    ensure_schema(store)
    sealed = seal.seal(record.key, record.revision, status.value, record.sealed) if seal is not None else None
    for _ in range(20):
        row = store.fetchone("SELECT status FROM edition_records WHERE key = ? AND revision = ? AND hash = ?",
                             (record.key, record.revision, record.hash))
        if row is None:
            return  # another revision or content: not this run's to mark
        current = Status(row[0])
        if current not in PUBLISHED:
            raise RecordError(f"{record.edition.name}: the edition record is '{current}', not published: cannot "
                              f"mark '{status}'")
        if current == status and seal is None or not legal(current, status):
            return  # already there, or further along (delivered is final)
        done = store.execute("UPDATE edition_records SET status = ?, seal = ?, updated_at = ? WHERE key = ? AND "
                             "revision = ? AND hash = ? AND status = ?",
                             (status.value, sealed, datetime.now(timezone.utc).isoformat(), record.key,
                              record.revision, record.hash, current.value))
        if done.rowcount:
            return
    raise Conflict(f"{record.edition.name}: the edition record kept moving while it was marked '{status}'")


M = TypeVar("M", bound=BaseModel)


def tolerant(model: type[M], data: dict[str, Any]) -> M:
    """``data`` validated as ``model``, leaving out top-level keys the model forbids: an edition stored by
    another version of pr-digest (a field dropped since) still loads."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        extra = {e["loc"][0] for e in exc.errors() if e["type"] == "extra_forbidden" and len(e["loc"]) == 1}
        if not extra:
            raise
        return model.model_validate({k: v for k, v in data.items() if k not in extra})


def _stamp(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds")


def _altered(key: str, stored_hash: str) -> RecordError:
    return RecordError(f"the edition record {key} was altered in the state store (its content no longer matches "
                       f"{short(stored_hash)}): nothing is sent; run the edition again")


def _unreadable(key: str, exc: ValidationError) -> RecordError:
    return RecordError(f"the edition record {key} cannot be read by this pr-digest ({exc.error_count()} "
                       f"problem(s), first: {exc.errors()[0]['msg']}): use the version that wrote it, or run "
                       "the edition again")


def _parsed_variant(key: str, body: str) -> VariantRecord:
    try:
        return variant_rows.parse(body)
    except ValidationError as exc:
        raise _unreadable(key, exc) from None


#: Editions read without their variants (:func:`published`, ``load(..., variants=False)``): never stored as they are.
#: By id: a model is not hashable; the weak value says whether that very object is still alive.
_PARTIAL: "weakref.WeakValueDictionary[int, Edition]" = weakref.WeakValueDictionary()


def _record(store: Store, row: tuple, *, check: bool = True, variants: bool = True) -> EditionRecord:
    key, body, stored_hash, listed = row[0], row[8], row[7], row[12]
    parts = None if listed is None else variant_rows.Parts.parse(listed)
    if check and (_digest(body) != stored_hash if parts is None else _digest(body) != parts.head):
        raise _altered(key, stored_hash)
    try:
        edition = tolerant(Edition, json.loads(body))
    except ValidationError as exc:
        raise _unreadable(key, exc) from None
    partial = parts is not None and not variants
    if parts is not None and variants:
        rows = variant_rows.read(store, key)
        if [(v, h) for _, v, h, _ in rows] != parts.variants or any(_digest(b) != h for _, _, h, b in rows) or (
                check and variant_rows.whole_hash(body, (b for *_, b in rows)) != stored_hash):
            raise _altered(key, stored_hash)
        edition = edition.model_copy(update={"variants": [_parsed_variant(key, b) for *_, b in rows]})
    if partial:
        _PARTIAL[id(edition)] = edition
    return EditionRecord(edition, Status(row[6]), stored_hash, int(row[5]), row[9],
                         datetime.fromisoformat(row[10]), row[11], listed, partial)
