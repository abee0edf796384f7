"""The delivery ledger's tables and their migrations (both dialects; append steps, never edit one)."""

from __future__ import annotations

from prdigest.state.store import Migration

COMPONENT = "delivery-ledger"

_V1 = """
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
"""

_OLD_COLUMNS = ("edition, reader, medium, variant, recipient, status, attempts, error, provider_id, message_id, "
                "checkpoint, created_at, attempted_at, sent_at, updated_at")

# v2: claims (sending, with an owner and a lease; uncertain), and editions identified by their exact repo and
# window. The table is rebuilt (SQLite cannot change a CHECK constraint in place); the same portable SQL
# runs on PostgreSQL. Rows keep their old edition keys; Ledger.edition adopts them (see EditionId.legacy_key).
_V2 = f"""
    CREATE TABLE delivery_ledger_v2 (
        edition         TEXT NOT NULL,
        reader          TEXT NOT NULL,
        medium          TEXT NOT NULL,
        variant         TEXT NOT NULL,
        recipient       TEXT NOT NULL,
        status          TEXT NOT NULL DEFAULT 'pending'
                        CHECK (status IN ('pending', 'sending', 'sent', 'failed', 'uncertain')),
        attempts        INTEGER NOT NULL DEFAULT 0,
        error           TEXT,
        provider_id     TEXT,
        message_id      TEXT,
        checkpoint      TEXT,
        created_at      TEXT NOT NULL,
        attempted_at    TEXT,
        sent_at         TEXT,
        updated_at      TEXT NOT NULL,
        owner           TEXT,
        lease_until     TEXT,
        push_started_at TEXT,
        PRIMARY KEY (edition, reader, medium)
    );
    INSERT INTO delivery_ledger_v2 ({_OLD_COLUMNS}) SELECT {_OLD_COLUMNS} FROM delivery_ledger;
    DROP TABLE delivery_ledger;
    ALTER TABLE delivery_ledger_v2 RENAME TO delivery_ledger;
    CREATE INDEX delivery_ledger_status ON delivery_ledger (edition, status);
    CREATE TABLE delivery_editions (
        edition    TEXT PRIMARY KEY,
        repo       TEXT NOT NULL,
        since_at   TEXT NOT NULL,
        until_at   TEXT NOT NULL,
        name       TEXT NOT NULL,
        exact      TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL
    );
    CREATE INDEX delivery_editions_name ON delivery_editions (name)
"""

MIGRATIONS: list[Migration] = [_V1, _V2]

STATUSES = ("pending", "sending", "sent", "failed", "uncertain")
Key = tuple[str, str]  # (reader id, medium)
