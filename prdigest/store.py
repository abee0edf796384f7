"""The state store: one SQLite file (``--state``) shared by the collector cache, the draft cache and
the delivery ledger. Each component owns its tables and registers its migrations here."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from prdigest.errors import ConfigError


def open_store(path: Path) -> sqlite3.Connection:
    """Open (creating) the state database; WAL so a reader never blocks the writer."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
    except (OSError, sqlite3.Error) as exc:
        raise ConfigError(f"--state {path}: cannot open the state database: {exc}") from exc
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)")
    return conn


def migrate(conn: sqlite3.Connection, component: str, migrations: Sequence[str]) -> None:
    """Apply the component's migrations not yet applied, each in its own transaction.

    ``migrations[i]`` brings the component's schema from version ``i`` to ``i + 1``; append, never edit.
    """
    row = conn.execute("SELECT version FROM schema_versions WHERE component = ?", (component,)).fetchone()
    current = row[0] if row else 0
    if current > len(migrations):
        raise ConfigError(f"state database schema for '{component}' is version {current}, newer than this "
                          f"pr-digest knows ({len(migrations)}): upgrade pr-digest or use another --state")
    for version in range(current, len(migrations)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in filter(None, (s.strip() for s in migrations[version].split(";"))):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_versions(component, version) VALUES (?, ?) "
                "ON CONFLICT(component) DO UPDATE SET version = excluded.version",
                (component, version + 1),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
