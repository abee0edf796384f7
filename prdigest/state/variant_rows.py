"""An edition record's variants in rows of their own (``edition_variants``), one per variant, beside the record's
row, which keeps the rest of the edition and the list of its variants' hashes (its *parts*).

At 10,000 readers an edition has thousands of variants (each with its readers, entries, read-first and lede):
held inside the record's body, every load and save parsed or serialised all of them. Here a save writes only the
rows whose content changed, a load that needs no variant reads none of them, and one variant is read and checked
on its own (``digest resend`` of one reader).

The record's content hash is unchanged: the SHA-256 of the edition's canonical JSON, variants included, computed
from the pieces (``"variants"`` is the last key of the canonical JSON). A record stored before (its variants in its
body, no parts) still reads as it did.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prdigest.kernel.models import Edition, VariantRecord
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import hash_bytes

#: How the canonical JSON of an edition without variants ends: the variants go between the brackets.
_TAIL = '"variants":[]}'


def _canonical(data: object) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def digest(text: str) -> str:
    """``sha256:<hex>`` of ``text`` (as :func:`prdigest.state.record.content_hash` hashes a body)."""
    return "sha256:" + hashlib.sha256(hash_bytes(text)).hexdigest()


@dataclass(frozen=True)
class Piece:
    """One variant as stored: its key, canonical JSON and that JSON's hash."""

    variant: str
    body: str
    hash: str


@dataclass(frozen=True)
class Split:
    """An edition as stored in parts: its canonical JSON without variants, its variants' pieces, the hash of the
    whole (the edition's content hash) and the parts text the record's row keeps."""

    head: str
    pieces: list[Piece]
    hash: str
    parts: str


def split(edition: Edition) -> Split | None:
    """``edition`` in parts, or None when it has no variant, or when its canonical JSON does not end with its
    variants (a field named after ``variants``): then it is stored whole, as before."""
    if not edition.variants:
        return None
    head = _canonical(edition.model_copy(update={"variants": []}).model_dump(mode="json"))
    if not head.endswith(_TAIL):
        return None
    pieces = []
    for record in edition.variants:
        body = _canonical(record.model_dump(mode="json"))
        pieces.append(Piece(record.key, body, digest(body)))
    return Split(head, pieces, whole_hash(head, (p.body for p in pieces)), parts_text(head, pieces))


def whole_hash(head: str, bodies: Iterable[str]) -> str:
    """The content hash of the edition whose canonical JSON without variants is ``head`` and whose variants'
    canonical JSON are ``bodies``: the hash of the whole JSON, fed piece by piece."""
    sha = hashlib.sha256(hash_bytes(head[:-len("[]}")] + "["))
    for i, body in enumerate(bodies):
        sha.update(hash_bytes("," + body if i else body))
    sha.update(b"]}")
    return "sha256:" + sha.hexdigest()


def parts_text(head: str, pieces: Sequence[Piece]) -> str:
    """What the record's row keeps of its parts: the head's hash and each variant's key and hash, in order."""
    return _canonical({"head": digest(head), "variants": [[p.variant, p.hash] for p in pieces]})


@dataclass(frozen=True)
class Parts:
    """A record's parts as read from its row: the head's hash and its variants' keys and hashes, in order."""

    head: str
    variants: list[tuple[str, str]]

    @classmethod
    def parse(cls, text: str) -> "Parts":
        data = json.loads(text)
        return cls(str(data["head"]), [(str(k), str(h)) for k, h in data["variants"]])


def write(tx: Store, key: str, pieces: Sequence[Piece]) -> None:
    """Store ``pieces`` as the variants of record ``key``: only the rows whose content changed are written, and
    the rows past the last piece deleted."""
    stored = dict(tx.fetchall("SELECT position, hash FROM edition_variants WHERE key = ?", (key,)))
    tx.execute("DELETE FROM edition_variants WHERE key = ? AND position >= ?", (key, len(pieces)))
    changed = [(i, p) for i, p in enumerate(pieces) if stored.get(i) != p.hash]
    tx.executemany("DELETE FROM edition_variants WHERE key = ? AND position = ?",
                   [(key, i) for i, _ in changed if i in stored])
    tx.executemany("INSERT INTO edition_variants (key, position, variant, hash, body) VALUES (?, ?, ?, ?, ?)",
                   [(key, i, p.variant, p.hash, p.body) for i, p in changed])


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
    """One stored variant as a model."""
    return VariantRecord.model_validate_json(body)
