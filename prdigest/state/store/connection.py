"""One API over the state database, whichever it is: SQLite file or PostgreSQL server.

SQL uses ``?`` placeholders and portable syntax (``INSERT … ON CONFLICT … DO UPDATE``, ``CASE``,
``COALESCE``); a migration that needs dialect-specific DDL gives one script per dialect.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from prdigest.kernel.errors import ConfigError, DigestError
from prdigest.kernel.location import SETTING, Dialect, StateLocation
from prdigest.state.store.drivers import Driver, Row
from prdigest.state.store.sql import Migration, statements

T = TypeVar("T")
log = logging.getLogger(__name__)

# Any fixed 64-bit number: the PostgreSQL advisory lock that serialises migrations between workers.
_MIGRATION_LOCK = 0x70726469_67657374  # "prdigest"


class StoreUnavailable(DigestError):
    """The state database stayed busy (locked, serialization failures) through every retry; shown to users."""


class Result:
    """The rows of one statement, already fetched, and how many rows it changed."""

    __slots__ = ("rows", "rowcount")

    def __init__(self, rows: list[Row], rowcount: int) -> None:
        self.rows = rows
        self.rowcount = rowcount

    def fetchone(self) -> Row | None:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[Row]:
        return self.rows

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)


class Store:
    """A connection to the state database; safe to share between threads (statements are serialised, and a
    transaction holds the connection until it ends)."""

    def __init__(self, location: StateLocation, driver: Driver, *, retries: int = 5, backoff: float = 0.05,
                 reconnect_for: float = 120.0) -> None:
        self.location = location
        self.dialect: Dialect = driver.dialect
        self._driver = driver
        self._retries = retries
        self._backoff = backoff
        #: How long a lost PostgreSQL connection is re-opened for (a restart for a minor upgrade, a failover).
        self._reconnect_for = reconnect_for
        self._lock = threading.RLock()
        self._depth = 0  # transaction nesting of the thread holding the lock
        self._closed = False

    def __repr__(self) -> str:
        return f"Store({self.dialect}, {self.location})"

    # statements -------------------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run one statement. Outside a transaction it commits at once, and is retried with backoff while
        the database is busy (nothing was written then); inside one, errors propagate to ``transaction``.

        After a lost connection (a PostgreSQL restart or failover) the store reconnects and runs the statement
        (or :meth:`atomic`'s whole transaction) again. So every statement must be idempotent: safe to run twice
        when the first run committed but its answer was lost. The ledger's are (each update is guarded by the
        row's status and owner), and so are the caches' upserts.
        """
        with self._lock:
            if self._depth:
                return Result(*self._driver.run(sql, params))
            return self._retrying(lambda: Result(*self._driver.run(sql, params)), sql)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Run one statement per parameter row, atomically (in a transaction); the total rowcount."""
        batch = [tuple(r) for r in rows]
        return self.atomic(lambda store: store._driver.run_many(sql, batch))

    def fetchone(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, or None."""
        return self.execute(sql, params).fetchone()

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query."""
        return self.execute(sql, params).rows

    @property
    def skip_locked(self) -> str:
        """``" FOR UPDATE SKIP LOCKED"`` on PostgreSQL, ``""`` on SQLite (where a transaction already holds the
        only write lock): append it to the sub-select of a claim, e.g. ``UPDATE t SET owner = ? WHERE id IN
        (SELECT id FROM t WHERE owner IS NULL LIMIT ?{store.skip_locked}) RETURNING id`` inside ``atomic``."""
        return " FOR UPDATE SKIP LOCKED" if self.dialect == "postgresql" else ""

    # transactions -----------------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def transaction(self) -> Iterator["Store"]:
        """A transaction around the block: committed when it ends, rolled back if it raises.

        SQLite: ``BEGIN IMMEDIATE`` (the write lock is taken at once, waiting out a busy database with
        retries); PostgreSQL: a READ COMMITTED transaction. A nested ``transaction()`` joins the outer one.
        The block is not re-run on a conflict: use :meth:`atomic` for that.
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self
                finally:
                    self._depth -= 1
                return
            self._retrying(self._driver.begin, "BEGIN")
            self._depth = 1
            try:
                yield self
            except BaseException:
                self._depth = 0
                self._driver.rollback()
                raise
            self._depth = 0
            try:
                self._driver.commit()
            except BaseException:
                self._driver.rollback()
                raise

    def atomic(self, work: Callable[["Store"], T]) -> T:
        """``work(store)`` in a transaction, re-run from the start (after a rollback, with backoff) when the
        database reports a transient conflict (busy, serialization failure, deadlock). ``work`` must only
        touch the database. Inside an outer transaction it simply runs (the outer one decides)."""
        with self._lock:
            if self._depth:
                return work(self)

            def attempt() -> T:
                with self.transaction():
                    return work(self)

            return self._retrying(attempt, "transaction")

    def _retrying(self, call: Callable[[], T], what: str) -> T:
        attempt = reconnects = 0
        while True:
            try:
                return call()
            except Exception as exc:
                if self._driver.is_lost(exc) and not self._depth and reconnects < 3:
                    reconnects += 1
                    log.warning("%s %s: the connection to the state database was lost (%s); reconnecting",
                                SETTING, self.location, self.location.redact(" ".join(str(exc).split()))[:200])
                    try:
                        self._driver.reconnect(self._reconnect_for)
                    except ConnectionError as lost:
                        raise StoreUnavailable(str(lost)) from None
                    continue
                if not self._driver.is_transient(exc):
                    raise
                if attempt == self._retries:
                    raise StoreUnavailable(
                        f"{SETTING} {self.location}: the state database stayed busy through {attempt + 1} "
                        f"attempts ({self.location.redact(str(exc))}); another process holds it: try again "
                        "when it is done") from exc
                # Exponential backoff with jitter, so competing workers do not retry in lockstep.
                time.sleep(min(2.0, self._backoff * 2 ** attempt) * (0.5 + random.random()))
                attempt += 1

    # schema -----------------------------------------------------------------------------------------
    def migrate(self, component: str, migrations: Sequence[Migration]) -> None:
        """Bring ``component``'s tables to ``len(migrations)``, applying each step not yet applied in its own
        transaction. ``migrations[i]`` takes the schema from version ``i`` to ``i + 1``: append, never edit.
        Safe when several processes start at once (each step re-checks the version under a lock)."""
        self._schema_table()
        row = self.fetchone("SELECT version FROM schema_versions WHERE component = ?", (component,))
        current = row[0] if row else 0
        if current > len(migrations):
            raise ConfigError(f"{SETTING} {self.location}: the schema of '{component}' is version {current}, "
                              f"newer than this pr-digest knows ({len(migrations)}): upgrade pr-digest or use "
                              "another state database")
        for version in range(current, len(migrations)):
            def step(store: "Store", v: int = version) -> None:
                store._step(component, v, migrations[v])
            self.atomic(step)

    def _step(self, component: str, version: int, migration: Migration) -> None:
        if self.dialect == "postgresql":
            self.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
        row = self.fetchone("SELECT version FROM schema_versions WHERE component = ?", (component,))
        if (row[0] if row else 0) > version:  # another process applied it meanwhile
            return
        for statement in statements(migration, self.dialect, component=component):
            self.execute(statement)
        self.execute("INSERT INTO schema_versions (component, version) VALUES (?, ?) "
                     "ON CONFLICT (component) DO UPDATE SET version = excluded.version", (component, version + 1))

    def _schema_table(self) -> None:
        def create(store: Store) -> None:
            if store.dialect == "postgresql":  # concurrent CREATE … IF NOT EXISTS can still collide there
                store.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            store.execute("CREATE TABLE IF NOT EXISTS schema_versions "
                          "(component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
        self.atomic(create)

    # lifetime ---------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._driver.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
