"""The two database drivers behind :class:`prdigest.state.store.Store`: sqlite3 and psycopg 3.

Each one opens its connection in autocommit mode (a statement outside a transaction commits at once),
runs one statement and returns its rows, and says which errors are transient (safe to retry).
"""

from __future__ import annotations

import os
import random
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.location import SETTING, Dialect, StateLocation
from prdigest.state.store.sql import to_pyformat

Row = tuple[Any, ...]


class Driver(Protocol):
    """One open connection of one dialect."""

    dialect: Dialect

    def run(self, sql: str, params: Sequence[Any]) -> tuple[list[Row], int]:
        """Execute one statement (``?`` placeholders); its rows (empty without a result set) and rowcount."""

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        """Execute one statement per parameter row; the total rowcount."""

    def begin(self) -> None:
        """Start a transaction that holds the write lock from the start (no upgrade deadlocks)."""

    def commit(self) -> None: ...
    def rollback(self) -> None: ...

    def is_transient(self, exc: BaseException) -> bool:
        """Whether ``exc`` means "busy, try again" (nothing was written)."""

    def is_lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the connection is gone (a server restart, a failover): reconnect, then retry."""

    def reconnect(self, patience: float) -> None:
        """Open a new connection in place of the lost one, waiting up to ``patience`` seconds for the server."""

    def close(self) -> None: ...


class SqliteDriver:
    """A SQLite file in WAL mode, so readers never block the writer."""

    dialect: Dialect = "sqlite"

    def __init__(self, location: StateLocation, busy_timeout: float) -> None:
        assert location.path is not None
        try:
            location.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # A new state file is its owner's alone (it holds addresses and drafts); SQLite gives its -wal and
            # -shm files the same mode. An existing file keeps the mode its operator chose.
            os.close(os.open(location.path, os.O_RDWR | os.O_CREAT, 0o600))
            self.conn = sqlite3.connect(location.path, timeout=busy_timeout, isolation_level=None,
                                        check_same_thread=False)
            self._wal(busy_timeout)
            self.conn.execute("PRAGMA foreign_keys=ON")
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"{SETTING} {location}: cannot open the state database: {exc}") from exc

    def _wal(self, patience: float) -> None:
        """Switch to WAL. Several processes opening a new file at once race for the lock this takes, and SQLite
        answers "database is locked" at once there, without its busy wait: retry for up to ``patience`` s."""
        deadline = time.monotonic() + patience
        delay = 0.01
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if not self.is_transient(exc) or time.monotonic() + delay > deadline:
                    raise
                time.sleep(delay * (0.5 + random.random()))
                delay = min(0.5, delay * 2)

    def run(self, sql: str, params: Sequence[Any]) -> tuple[list[Row], int]:
        cursor = self.conn.execute(sql, tuple(params))
        try:
            rows = cursor.fetchall() if cursor.description else []
            return rows, cursor.rowcount
        finally:
            cursor.close()

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        cursor = self.conn.executemany(sql, rows)
        try:
            return cursor.rowcount
        finally:
            cursor.close()

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.in_transaction:  # SQLite may already have rolled back (e.g. after SQLITE_FULL)
            self.conn.execute("ROLLBACK")

    def is_transient(self, exc: BaseException) -> bool:
        if not isinstance(exc, sqlite3.OperationalError):
            return False
        text = str(exc).lower()
        return "database is locked" in text or "database table is locked" in text or "busy" in text

    def is_lost(self, exc: BaseException) -> bool:
        return False  # a file does not go away between two statements

    def reconnect(self, patience: float) -> None:
        raise AssertionError("a SQLite connection is never lost")

    def close(self) -> None:
        self.conn.close()


class PostgresDriver:
    """A psycopg 3 connection in autocommit mode; transactions are explicit (READ COMMITTED)."""

    dialect: Dialect = "postgresql"

    def __init__(self, location: StateLocation, connect_timeout: float) -> None:
        import psycopg  # only a PostgreSQL state needs the driver

        self._psycopg = psycopg
        self._location = location
        self._timeout = max(1, int(connect_timeout))
        try:
            self.conn = self._connect()
        except psycopg.Error as exc:
            raise ConfigError(f"{SETTING} {location}: cannot connect to the PostgreSQL state database: "
                              f"{self._reason(exc)}") from None  # the chained error's args may carry the DSN

    def _connect(self) -> Any:
        return self._psycopg.connect(self._location.dsn, autocommit=True, connect_timeout=self._timeout,
                                     application_name="pr-digest")

    def _reason(self, exc: BaseException) -> str:
        text = str(exc).strip()
        return self._location.redact(text.splitlines()[-1] if text else type(exc).__name__)

    def run(self, sql: str, params: Sequence[Any]) -> tuple[list[Row], int]:
        with self.conn.cursor() as cursor:
            cursor.execute(to_pyformat(sql), tuple(params))
            rows = cursor.fetchall() if cursor.description else []
            return rows, cursor.rowcount

    def run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        batch = [tuple(r) for r in rows]
        if not batch:
            return 0
        with self.conn.cursor() as cursor:
            cursor.executemany(to_pyformat(sql), batch)
            return cursor.rowcount

    def begin(self) -> None:
        self.conn.execute("BEGIN")

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if not (self.conn.closed or self.conn.broken):  # a lost connection took its transaction with it
            self.conn.execute("ROLLBACK")

    def is_transient(self, exc: BaseException) -> bool:
        errors = self._psycopg.errors
        return isinstance(exc, (errors.SerializationFailure, errors.DeadlockDetected, errors.LockNotAvailable))

    def is_lost(self, exc: BaseException) -> bool:
        # A restart sends "terminating connection due to administrator command" (57P01) or just closes the
        # socket; either way psycopg marks the connection broken (or closed), and no statement can run on it.
        return isinstance(exc, self._psycopg.OperationalError) and (self.conn.closed or self.conn.broken)

    def reconnect(self, patience: float) -> None:
        try:
            self.conn.close()
        except self._psycopg.Error:
            pass
        deadline, pause = time.monotonic() + patience, 0.1
        while True:
            try:
                self.conn = self._connect()
                return
            except self._psycopg.OperationalError as exc:  # still restarting (57P03), or not listening yet
                if time.monotonic() + pause > deadline:
                    raise ConnectionError(f"{SETTING} {self._location}: the PostgreSQL state database went away "
                                          f"and did not come back within {patience:g} s: {self._reason(exc)}"
                                          ) from None
                time.sleep(pause)
                pause = min(pause * 2, 2.0)

    def close(self) -> None:
        self.conn.close()
