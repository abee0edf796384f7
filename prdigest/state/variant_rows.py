"""An edition record's variants in rows of their own (``edition_variants``), one per variant, beside the record's
row, which keeps the rest of the edition and the list of its variants' hashes (its *parts*).

At 10,000 readers an edition has thousands of variants (each with its readers, entries, read-first and lede):
held inside the record's body, every load and save parsed or serialised all of them. Here a save writes only the
rows whose content changed, a load that needs no variant reads none of them, and one variant is read and checked
on its own (``digest resend`` of one reader).

The record's content hash is unchanged: the SHA-256 of the edition's canonical JSON, variants included, computed
from the pieces (``"variants"`` is the last key of the canonical JSON) as a save goes, one variant serialised,
hashed and written at a time (:func:`store`: it never holds every variant's JSON at once; serialising 3,000 takes
~0.1 s, so doing it inside the save's transaction holds the write lock no longer than writing the rows did). A
record stored before (its variants in its body, no parts) still reads as it did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from prdigest.kernel.models import Edition, VariantRecord
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import hash_bytes
from prdigest.state.fields_set import one_fields_set

#: How the canonical JSON of an edition without variants ends: the variants go between the brackets.
_TAIL = '"variants":[]}'


def _canonical(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def digest(text: str) -> str:
    """``sha256:<hex>`` of ``text`` (as :func:`prdigest.state.record.content_hash` hashes a body)."""
    return "sha256:" + hashlib.sha256(hash_bytes(text)).hexdigest()


#: Variant rows written per statement: a save holds this many variants' JSON at once, never the whole edition's.
WRITE_BATCH = 64


def head_of(edition: Edition) -> str | None:
    """The canonical JSON of ``edition`` without its variants, or None when it has no variant, or when that JSON
    does not end with its variants (a field named after ``variants``): then it is stored whole, as before."""
    if not edition.variants:
        return None
    head = _canonical(edition.model_copy(update={"variants": []}).model_dump(mode="json"))
    return head if head.endswith(_TAIL) else None


class WholeHash:
    """The content hash of an edition fed piece by piece: its canonical JSON without variants (``head``), then
    each variant's canonical JSON in order; the same as hashing the whole JSON at once."""

    def __init__(self, head: str) -> None:
        self._sha = hashlib.sha256(hash_bytes(head[:-len("[]}")] + "["))
        self._count = 0

    def add(self, body: str) -> None:
        """Feed the next variant's canonical JSON."""
        self._sha.update(hash_bytes("," + body if self._count else body))
        self._count += 1

    def digest(self) -> str:
        """``sha256:<hex>`` of the whole JSON fed so far (more may be fed after)."""
        sha = self._sha.copy()
        sha.update(b"]}")
        return "sha256:" + sha.hexdigest()


def whole_hash(head: str, bodies: Iterable[str]) -> str:
    """The content hash of the edition whose canonical JSON without variants is ``head`` and whose variants'
    canonical JSON are ``bodies``: the hash of the whole JSON, fed piece by piece."""
    whole = WholeHash(head)
    for body in bodies:
        whole.add(body)
    return whole.digest()


@dataclass(frozen=True)
class Stored:
    """What :func:`store` wrote: the whole edition's content hash and the parts text the record's row keeps."""

    hash: str
    parts: str


def store(tx: Store, key: str, head: str, variants: Iterable[VariantRecord]) -> Stored:
    """Store ``variants`` as the rows of record ``key`` whose head is ``head``, one variant serialised at a time:
    each is hashed into the whole edition's hash as it goes, only the rows whose content changed are written (a
    few at a time, :data:`WRITE_BATCH`), and the rows past the last variant deleted. At 10,000 readers an edition
    has thousands of variants: serialising all of them before writing any held every one's JSON at once."""
    stored = dict(tx.fetchall("SELECT position, hash FROM edition_variants WHERE key = ?", (key,)))
    whole = WholeHash(head)
    listed = PartsText(head)
    batch: list[tuple[int, str, str, str]] = []

    def flush() -> None:
        tx.executemany("DELETE FROM edition_variants WHERE key = ? AND position = ?",
                       [(key, i) for i, *_ in batch if i in stored])
        tx.executemany("INSERT INTO edition_variants (key, position, variant, hash, body) VALUES (?, ?, ?, ?, ?)",
                       [(key, *row) for row in batch])
        batch.clear()

    count = 0
    for position, record in enumerate(variants):
        body = _canonical(record.model_dump(mode="json"))
        sha = digest(body)
        whole.add(body)
        listed.add(record.key, sha)
        count += 1
        if stored.get(position) != sha:
            batch.append((position, record.key, sha, body))
            if len(batch) >= WRITE_BATCH:
                flush()
    flush()
    tx.execute("DELETE FROM edition_variants WHERE key = ? AND position >= ?", (key, count))
    return Stored(whole.digest(), listed.text())


class PartsText:
    """What the record's row keeps of its parts, written as the variants go: the canonical JSON of the head's
    hash and each variant's key and hash, in order (``{"head":…,"variants":[[key,hash],…]}``), kept as UTF-8
    bytes until it is complete (a tenth of what a list of pairs encoded at the end held)."""

    def __init__(self, head: str) -> None:
        self._text = bytearray(_canonical({"head": digest(head), "variants": []})[:-2].encode("utf-8"))
        self._count = 0

    def add(self, variant: str, sha: str) -> None:
        """The next variant's key and hash."""
        self._text += (("," if self._count else "") + _canonical([variant, sha])).encode("utf-8")
        self._count += 1

    def text(self) -> str:
        """The parts text so far."""
        self._text += b"]}"
        try:
            return self._text.decode("utf-8")
        finally:
            del self._text[-2:]


def parts_text(head: str, variants: Iterable[tuple[str, str]]) -> str:
    """What the record's row keeps of its parts: the head's hash and each variant's key and hash, in order."""
    listed = PartsText(head)
    for variant, sha in variants:
        listed.add(variant, sha)
    return listed.text()


@dataclass(frozen=True)
class Parts:
    """A record's parts as read from its row: the head's hash and its variants' keys and hashes, in order."""

    head: str
    variants: list[tuple[str, str]]

    @classmethod
    def parse(cls, text: str) -> "Parts":
        data = json.loads(text)
        return cls(str(data["head"]), [(str(k), str(h)) for k, h in data["variants"]])


def forget(tx: Store, key: str) -> None:
    """Delete the variant rows of record ``key`` (stored whole again)."""
    tx.execute("DELETE FROM edition_variants WHERE key = ?", (key,))


def read(store: Store, key: str, variants: Iterable[str] | None = None) -> list[tuple[int, str, str, str]]:
    """(position, variant, hash, body) of record ``key``'s rows, in order: all of them, or those of ``variants``."""
    if variants is None:
        return [(int(r[0]), r[1], r[2], r[3]) for r in store.fetchall(
            "SELECT position, variant, hash, body FROM edition_variants WHERE key = ? ORDER BY position", (key,))]
    wanted = sorted(set(variants))
    rows: list[tuple[int, str, str, str]] = []
    for start in range(0, len(wanted), 500):  # bounded IN lists, for either database
        chunk = wanted[start:start + 500]
        marks = ", ".join("?" for _ in chunk)
        rows += [(int(r[0]), r[1], r[2], r[3]) for r in store.fetchall(
            f"SELECT position, variant, hash, body FROM edition_variants WHERE key = ? AND variant IN ({marks})",
            (key, *chunk))]
    return sorted(rows)


def parse(body: str) -> VariantRecord:
    """One stored variant as a model (it and its filter with their class's one set of fields set)."""
    record = one_fields_set(VariantRecord.model_validate_json(body))
    if record.filter is not None:
        one_fields_set(record.filter)
    return record
