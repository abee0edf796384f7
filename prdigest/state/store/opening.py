"""Opening the state store: :func:`open_store` for one connection, and :class:`LazyStore`, the store as a
run holds it: opened once, on first use, handed to every component (ledger, GitHub cache, draft cache,
history), closed once.

The composition root (``prdigest.pipeline.compose``) keeps one; a command that runs without services (``digest eval``,
``digest site``, ``digest review``) takes one through :func:`state_store` rather than calling ``open_store``.
"""

from __future__ import annotations

import os
import threading
from types import TracebackType

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.location import SETTING, StateLocation
from prdigest.state.store.connection import Store
from prdigest.state.store.drivers import Driver, PostgresDriver, SqliteDriver


def open_store(location: StateLocation | str | os.PathLike[str], *, busy_timeout: float = 30.0,
               retries: int = 5, backoff: float = 0.05) -> Store:
    """Open (creating a SQLite file if missing) the state database at ``location``.

    ``busy_timeout``: seconds SQLite waits for a lock (PostgreSQL: the connect timeout); ``retries``:
    further attempts, with exponential backoff from ``backoff`` seconds, while it stays busy.
    """
    try:
        where = StateLocation.parse(location)
    except ValueError as exc:
        raise ConfigError(f"{SETTING}: {exc}") from None
    driver: Driver = (PostgresDriver(where, busy_timeout) if where.dialect == "postgresql"
                      else SqliteDriver(where, busy_timeout))
    return Store(where, driver, retries=retries, backoff=backoff)


class LazyStore:
    """One state store for ``location``: calling it opens the database the first time (safe from any thread)
    and returns the same :class:`Store` after; :meth:`close` closes it if it was opened."""

    def __init__(self, location: StateLocation | str | os.PathLike[str]) -> None:
        self.location = location
        self._store: Store | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Store:
        with self._lock:
            if self._store is None:
                self._store = open_store(self.location)
            return self._store

    @property
    def opened(self) -> bool:
        """Whether something has used the store (and so opened it)."""
        return self._store is not None

    def close(self) -> None:
        """Close the store if it was opened (safe to call twice)."""
        with self._lock:
            store, self._store = self._store, None
        if store is not None:
            store.close()

    def __enter__(self) -> "LazyStore":
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def state_store(location: StateLocation | str | os.PathLike[str]) -> LazyStore:
    """The state store of a command that has no services: opened on first use, closed by ``with``."""
    return LazyStore(location)
