"""The delivery ledger: one row per (edition, reader, medium) in the state database, so that every
reader gets each edition once, across crashes and re-runs, and ``digest status`` can say what happened.

A row goes ``pending`` → ``sent`` (the provider accepted it; its id is kept) or ``failed`` (the
provider refused it for good; the reason is kept). A transient failure leaves it ``pending`` with the
error, for the next run. Every write commits at once: a row marked sent is sent even if the process
dies on the next line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from rich.table import Table
from rich.text import Text

from prdigest.errors import ConfigError
from prdigest.store import StateLocation, Store, open_store
from prdigest.text import slug

COMPONENT = "delivery-ledger"
MIGRATIONS = [
    """
    CREATE TABLE delivery_ledger (
        edition      TEXT NOT NULL,
        reader       TEXT NOT NULL,
        medium       TEXT NOT NULL,
        variant      TEXT NOT NULL,
        recipient    TEXT NOT NULL,
        status       TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
        attempts     INTEGER NOT NULL DEFAULT 0,
        error        TEXT,
        provider_id  TEXT,
        message_id   TEXT,
        checkpoint   TEXT,
        created_at   TEXT NOT NULL,
        attempted_at TEXT,
        sent_at      TEXT,
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (edition, reader, medium)
    );
    CREATE INDEX delivery_ledger_status ON delivery_ledger (edition, status)
    """,
]

STATUSES = ("pending", "sent", "failed")
Key = tuple[str, str]  # (reader id, medium)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def edition_key(text: str) -> str:
    """Accept an edition's key (``vllm-project-vllm-2026-W47``) or name (``vllm-project/vllm 2026-W47``)."""
    return slug(text, lower=False)


@dataclass(frozen=True)
class LedgerRow:
    """One (edition, reader, medium) delivery as recorded."""

    edition: str
    reader: str
    medium: str
    variant: str
    recipient: str
    status: str
    attempts: int
    error: str | None
    provider_id: str | None
    message_id: str | None
    checkpoint: str | None
    created_at: str
    attempted_at: str | None
    sent_at: str | None
    updated_at: str

    @property
    def key(self) -> Key:
        return (self.reader, self.medium)


_COLUMNS = ", ".join(LedgerRow.__dataclass_fields__)


class Ledger:
    """The ``delivery_ledger`` table of one state database."""

    def __init__(self, store: Store) -> None:
        self.conn = store
        store.migrate(COMPONENT, MIGRATIONS)

    @classmethod
    def open(cls, location: StateLocation | str | Path) -> "Ledger":
        """The ledger in the state database at ``location`` (``--state``: a SQLite file or PostgreSQL URL),
        created if missing."""
        return cls(open_store(location))

    def close(self) -> None:
        self.conn.close()

    def register(self, edition: str, planned: Iterable[tuple[str, str, str, str, str | None]]) -> None:
        """Add a pending row for each planned (reader, medium, variant, recipient, Message-ID) not yet in
        the ledger, in one transaction.

        Sent rows never change. A failed row whose recipient has since changed (the readers file was
        fixed) becomes pending again; a pending row follows the current variant and recipient. The first
        Message-ID recorded for a row is kept for good.
        """
        now = _now()
        rows = [(edition, reader, medium, variant, recipient, message_id, now, now)
                for reader, medium, variant, recipient, message_id in planned]
        self.conn.executemany(  # one transaction
            "INSERT INTO delivery_ledger AS l (edition, reader, medium, variant, recipient, message_id, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            # The existing row's columns are qualified: PostgreSQL finds a bare name ambiguous here.
            "ON CONFLICT (edition, reader, medium) DO UPDATE SET "
            "  status = CASE WHEN l.status = 'failed' AND l.recipient <> excluded.recipient "
            "                THEN 'pending' ELSE l.status END, "
            "  error = CASE WHEN l.status = 'failed' AND l.recipient <> excluded.recipient "
            "               THEN NULL ELSE l.error END, "
            "  variant = CASE WHEN l.status = 'sent' THEN l.variant ELSE excluded.variant END, "
            "  recipient = CASE WHEN l.status = 'sent' THEN l.recipient ELSE excluded.recipient END, "
            "  message_id = COALESCE(l.message_id, excluded.message_id), "
            "  updated_at = CASE WHEN l.status <> 'sent' AND l.recipient <> excluded.recipient "
            "                    THEN excluded.updated_at ELSE l.updated_at END",
            rows,
        )

    def rows(self, edition: str) -> dict[Key, LedgerRow]:
        """Every row of the edition, by (reader, medium)."""
        cursor = self.conn.execute(
            f"SELECT {_COLUMNS} FROM delivery_ledger WHERE edition = ? ORDER BY reader, medium", (edition,))
        return {(r[1], r[2]): LedgerRow(*r) for r in cursor}

    def editions(self) -> list[str]:
        """The editions the ledger knows, newest first."""
        return [r[0] for r in self.conn.execute(
            "SELECT edition FROM delivery_ledger GROUP BY edition ORDER BY MAX(updated_at) DESC, edition")]

    def counts(self, edition: str) -> dict[str, int]:
        """Rows per status."""
        found = dict(self.conn.execute(
            "SELECT status, COUNT(*) FROM delivery_ledger WHERE edition = ? GROUP BY status", (edition,)).fetchall())
        return {s: found.get(s, 0) for s in STATUSES}

    # One write per outcome, committed before the next message is tried: the only window in which a
    # crash can lead to a second copy is between the provider's acceptance and this commit.

    def sent(self, edition: str, key: Key, provider_id: str) -> None:
        """The provider accepted the message: it is never sent again."""
        now = _now()
        self.conn.execute(
            "UPDATE delivery_ledger SET status = 'sent', provider_id = ?, error = NULL, attempts = attempts + 1, "
            "attempted_at = ?, sent_at = ?, updated_at = ? WHERE edition = ? AND reader = ? AND medium = ? "
            "AND status = 'pending'", (provider_id, now, now, now, edition, *key))

    def failed(self, edition: str, key: Key, error: str) -> None:
        """The provider refused it for good: not retried (unless the recipient changes)."""
        now = _now()
        self.conn.execute(
            "UPDATE delivery_ledger SET status = 'failed', error = ?, attempts = attempts + 1, attempted_at = ?, "
            "updated_at = ? WHERE edition = ? AND reader = ? AND medium = ? AND status = 'pending'",
            (error[:500], now, now, edition, *key))

    def retry_later(self, edition: str, key: Key, error: str, *, attempted: bool = True) -> None:
        """A transient failure (or, with ``attempted=False``, not tried at all): the row stays pending
        with the reason, for the next run."""
        now = _now()
        self.conn.execute(
            "UPDATE delivery_ledger SET error = ?, attempts = attempts + ?, "
            "attempted_at = CASE WHEN ? THEN ? ELSE attempted_at END, updated_at = ? "
            "WHERE edition = ? AND reader = ? AND medium = ? AND status = 'pending'",
            (error[:500], int(attempted), attempted, now, now, edition, *key))  # a bool: PostgreSQL's CASE wants one

    def checkpoint(self, edition: str, key: Key, value: dict, provider_id: str | None = None) -> None:
        """Record how far a multi-part delivery (a Slack thread) got, so a re-run resumes there."""
        self.conn.execute(
            "UPDATE delivery_ledger SET checkpoint = ?, provider_id = COALESCE(?, provider_id), updated_at = ? "
            "WHERE edition = ? AND reader = ? AND medium = ?",
            (json.dumps(value), provider_id, _now(), edition, *key))


_STYLE = {"sent": "green", "failed": "red", "pending": "yellow"}


def status_table(state: StateLocation | str | Path, edition: str) -> Table:
    """``digest status EDITION``: the ledger of one edition as a table (reader, medium, status, …).

    The state location is shown with its password masked (``StateLocation`` never prints it).
    """
    location = StateLocation.parse(state)
    if not location.exists():
        raise ConfigError(f"--state {location}: no state database here, so nothing was delivered from it")
    key = edition_key(edition)
    ledger = Ledger.open(location)
    try:
        rows = ledger.rows(key)
        counts = ledger.counts(key)
        known = ledger.editions() if not rows else []
    finally:
        ledger.close()
    title = f"{key}: " + ", ".join(f"{counts[s]} {s}" for s in ("sent", "failed", "pending"))
    table = Table(title=title)
    for column, justify in (("reader", "left"), ("medium", "left"), ("recipient", "left"), ("variant", "left"),
                            ("status", "left"), ("attempts", "right"), ("provider id", "left"),
                            ("error", "left"), ("updated (UTC)", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows.values():
        # Text, not markup: an SMTP reply or a Slack error may contain "[…]".
        table.add_row(*(Text(v) for v in (row.reader, row.medium, row.recipient, row.variant)),
                      Text(row.status, style=_STYLE[row.status]), str(row.attempts),
                      Text(row.provider_id or ""), Text(row.error or ""), row.updated_at.replace("+00:00", ""))
    if not rows:
        table.caption = (f"no deliveries recorded for {key}"
                         + (f"; editions in the ledger: {', '.join(known[:10])}" if known else ""))
    return table
