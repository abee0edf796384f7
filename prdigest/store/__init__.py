"""The state store: one database (``--state``) shared by the collector cache, the draft cache, the review
record and the delivery ledger: a SQLite file on one machine, or PostgreSQL shared by a team's workers.
Each component owns its tables and migrates them with :meth:`Store.migrate`."""

from __future__ import annotations

import os
from collections.abc import Sequence

from prdigest.errors import ConfigError
from prdigest.store.connection import Result, Store, StoreUnavailable
from prdigest.store.drivers import Driver, PostgresDriver, SqliteDriver
from prdigest.store.location import DEFAULT_STATE, SETTING, Dialect, StateLocation, redact_url
from prdigest.store.sql import Migration

__all__ = ["DEFAULT_STATE", "Dialect", "Migration", "Result", "StateLocation", "Store", "StoreUnavailable",
           "migrate", "open_store", "redact_url"]


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


def migrate(store: Store, component: str, migrations: Sequence[Migration]) -> None:
    """Same as ``store.migrate(component, migrations)`` (kept for callers of the earlier function)."""
    store.migrate(component, migrations)
