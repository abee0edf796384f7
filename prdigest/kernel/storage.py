"""The state store as the steps see it: a protocol, so that collect, classify, draft, connect, review and
readers keep their tables without importing the store's implementation (:mod:`prdigest.state.store`).

The composition root (:mod:`prdigest.pipeline.compose`) opens the one store of a run or command and hands it
to every component; a component never opens one itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from prdigest.kernel.location import Dialect, StateLocation

#: A migration step: portable SQL, or one script per dialect (``{"sqlite": …, "postgresql": …}``).
Migration = str | Mapping[str, str]

T = TypeVar("T")


class Rows(Protocol):
    """The rows of one statement, already fetched, and how many rows it changed."""

    rows: list[tuple[Any, ...]]
    rowcount: int

    def fetchone(self) -> tuple[Any, ...] | None: ...

    def fetchall(self) -> list[tuple[Any, ...]]: ...

    def __iter__(self) -> Iterator[tuple[Any, ...]]: ...


class Store(Protocol):
    """A connection to the state database (SQLite or PostgreSQL), with ``?`` placeholders in both dialects.

    Every statement must be idempotent (the store may run it again after a lost connection); each component
    creates and migrates its own tables with :meth:`migrate`.
    """

    location: StateLocation
    dialect: Dialect

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int: ...

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None: ...

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    @property
    def skip_locked(self) -> str: ...

    @property
    def in_transaction(self) -> bool: ...

    def transaction(self) -> AbstractContextManager["Store"]: ...

    def atomic(self, work: Callable[["Store"], T]) -> T: ...

    def migrate(self, component: str, migrations: Sequence[Migration]) -> None: ...

    def close(self) -> None: ...
