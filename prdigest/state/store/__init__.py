"""The state store: one database (``--state``) shared by the collector cache, the draft cache, the review
record and the delivery ledger: a SQLite file on one machine, or PostgreSQL shared by a team's workers.
Each component owns its tables and migrates them with :meth:`Store.migrate`; a run opens the store once
(:class:`LazyStore`) and hands it to each of them."""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.kernel.location import DEFAULT_STATE, SETTING, Dialect, StateLocation
from prdigest.kernel.text import redact_url
from prdigest.state.store.connection import Result, Store, StoreUnavailable
from prdigest.state.store.opening import LazyStore, open_store, state_store
from prdigest.state.store.sql import Migration

__all__ = ["DEFAULT_STATE", "SETTING", "Dialect", "LazyStore", "Migration", "Result", "StateLocation", "Store",
           "StoreUnavailable", "migrate", "open_store", "redact_url", "state_store"]


def migrate(store: Store, component: str, migrations: Sequence[Migration]) -> None:
    """Same as ``store.migrate(component, migrations)`` (kept for callers of the earlier function)."""
    store.migrate(component, migrations)
