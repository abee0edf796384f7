"""Sealed rows: what the state store keeps for later runs and later runs deliver (the draft cache, the model's
cached answers, the editor's kept edits) carries a seal, checked when the row is read.

The edition record is sealed (:mod:`prdigest.state.seal`), but a record is made from these rows: a row written
straight into the database (a shared PostgreSQL account, a restored backup) would be applied, sealed into the
next record and sent unflagged. Each such row is sealed with the same key as the records (kept outside the
database), over its table and its values as stored; a row whose seal does not check is never used as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class RowSealer(Protocol):
    """Makes and checks the seal of one row of a state table (``prdigest.state.seal.SealKey`` is one)."""

    def seal_row(self, table: str, values: Sequence[object]) -> str:
        """The seal of a row of ``table`` holding ``values`` (as stored), under the current key."""
        ...

    def accepts_row(self, seal: str | None, table: str, values: Sequence[object]) -> bool:
        """Whether ``seal`` is the seal of that row under the current key or a previous one (constant time);
        a row without a seal (None) is never accepted."""
        ...


def row_content(table: str, values: Sequence[object]) -> bytes:
    """The bytes a row's seal is made over: a domain, the table and each value, unambiguously separated
    (a value's length before it, so no two rows share the bytes)."""
    parts = ["pr-digest/state-row", table, *("" if v is None else str(v) for v in values)]
    return b"".join(f"{len(p.encode('utf-8', 'surrogatepass'))}:".encode() + p.encode("utf-8", "surrogatepass")
                    for p in parts)
