"""The delivery ledger: one row per (edition, reader, medium) in the state database, so that every
reader gets each edition once, across crashes, re-runs and concurrent deliverers, and ``digest status``
can say what happened.

A row goes ``pending`` → ``sending`` (claimed by one deliverer, its ``owner``, until ``lease_until``)
→ ``sent`` (the provider accepted it; its id is kept), ``failed`` (refused for good; the reason is kept)
or ``uncertain`` (it may have reached the provider: never sent again unless an operator asks with
``digest resend --uncertain``). A message is pushed only under a claim, and only after
``push_started_at`` is recorded: a claim whose lease ran out goes back to ``pending`` when its push
provably never started, and becomes ``uncertain`` otherwise. A transient failure puts the row back to
``pending`` with the reason, for the next run. Every write commits at once, except the outcomes of a batch
pushed to a local channel (the outbox: :meth:`Ledger.outcomes`), which commit together once it is written.
"""

from __future__ import annotations

import functools
import json
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import TypeVar

from prdigest.deliver.ledger_schema import COMPONENT, MIGRATIONS, STATUSES, Key
from prdigest.deliver.owners import end_owner, new_owner, owner_gone
from prdigest.deliver.owners import stamp as _stamp
from prdigest.kernel.errors import ConfigError, DigestError
from prdigest.kernel.models import EditionId
from prdigest.kernel.storage import Store
from prdigest.kernel.text import slug
from prdigest.state.store import StoreUnavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

__all__ = ["Key", "Ledger", "LedgerRow", "LedgerUnavailable", "STATUSES", "end_owner", "new_owner"]


class LedgerUnavailable(DigestError):
    """The state database could not record a delivery step through every retry (locked past the busy
    timeout, read-only, disk full, connection lost): delivery stops here; shown to users."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@functools.cache  # on the first failure: importing psycopg costs a CLI that never fails a fraction of a second
def _store_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [StoreUnavailable, sqlite3.Error]
    try:
        import psycopg

        errors.append(psycopg.Error)
    except ImportError:  # pragma: no cover - psycopg is a dependency; only PostgreSQL needs it
        pass
    return tuple(errors)


@dataclass(frozen=True, slots=True)
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
    owner: str | None = None
    lease_until: str | None = None
    push_started_at: str | None = None

    @property
    def key(self) -> Key:
        return (self.reader, self.medium)


_COLUMNS = ", ".join(LedgerRow.__dataclass_fields__)
#: Planned rows written per statement by :meth:`Ledger.register`.
REGISTER_BATCH = 1000
_ROW = "edition = ? AND reader = ? AND medium = ?"


class Ledger:
    """The ``delivery_ledger`` table of one state database.

    ``lease``: seconds a claim holds without news from its deliverer; ``patience``: seconds a write is
    retried (with backoff) while the database cannot take it, before :class:`LedgerUnavailable`.
    """

    def __init__(self, store: Store, *, lease: float = 300.0, patience: float = 10.0) -> None:
        self.conn = store
        self.lease = lease
        self.patience = patience
        self._beats: dict[str, float] = {}  # owner -> when its claims were last renewed (monotonic)
        self._batch: list[tuple[str, tuple]] | None = None  # outcomes kept for one commit (see outcomes())
        store.migrate(COMPONENT, MIGRATIONS)

    def close(self) -> None:
        self.conn.close()

    # -- writes that must happen: retried while the store cannot take them ---------------------------
    def _write(self, what: str, work: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.patience
        pause = 0.05
        while True:
            try:
                return work()
            except _store_errors() as exc:
                if time.monotonic() + pause > deadline:
                    reason = self.conn.location.redact(" ".join(str(exc).split()))[:300]
                    raise LedgerUnavailable(
                        f"--state {self.conn.location}: the state database cannot record deliveries ({what}: "
                        f"{reason}) after retrying for {self.patience:g} s; delivery stopped, nothing was "
                        "sent without a claim: run again once the database is writable") from exc
                log.warning("state database unavailable (%s), retrying in %.2f s: %s", what, pause, exc)
                time.sleep(pause)
                pause = min(pause * 2, 2.0)

    def _lease_until(self, seconds: float | None = None) -> str:
        return _stamp(datetime.now(timezone.utc) + timedelta(seconds=self.lease if seconds is None else seconds))

    # -- editions ----------------------------------------------------------------------------------
    def edition(self, edition: EditionId) -> str:
        """Record an edition's identity (exact repo and window) and return its ledger key. Rows written
        before editions had exact identities (under :attr:`EditionId.legacy_key`) are adopted by the
        first edition of that repo and week that delivers, so an upgrade never re-sends them."""
        key, now = edition.key, _now()

        def record(store: Store) -> None:
            # ON CONFLICT: concurrent deliverers of one edition record it at the same moment.
            added = store.execute(
                "INSERT INTO delivery_editions (edition, repo, since_at, until_at, name, exact, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (edition) DO NOTHING",
                (key, edition.repo, _stamp(edition.since), _stamp(edition.until), edition.name, edition.exact,
                 now)).rowcount
            if not added:
                found = store.fetchone("SELECT exact FROM delivery_editions WHERE edition = ?", (key,))
                if found is not None and found[0] != edition.exact:
                    raise ConfigError(f"edition key {key} is taken by {found[0]} in the ledger, not {edition.exact}: "
                                      "report this (two windows whose keys collide)")
                return
            legacy = edition.legacy_key
            taken = store.fetchone("SELECT 1 FROM delivery_editions WHERE edition = ?", (legacy,))
            if taken is None and store.fetchone("SELECT 1 FROM delivery_ledger WHERE edition = ? LIMIT 1",
                                                (legacy,)) is not None:
                store.execute("UPDATE delivery_ledger SET edition = ? WHERE edition = ?", (key, legacy))
                log.warning("%s: adopted the ledger rows recorded as %s before editions were identified by "
                            "their exact window", edition.name, legacy)

        self._write("recording the edition", lambda: self.conn.atomic(record))
        return key

    def resolve(self, text: str) -> str | None:
        """The ledger key of an edition given by key, name (as ``digest run`` prints it) or exact identity;
        None when the ledger knows none."""
        found = self.conn.fetchone("SELECT edition FROM delivery_editions WHERE edition = ? OR name = ? OR exact = ? "
                                   "ORDER BY created_at DESC LIMIT 1", (text, text, text))
        if found is not None:
            return found[0]

        for key in (text, slug(text, lower=False)):  # an old ledger's key, or its name (repo + ISO week)
            if self.conn.fetchone("SELECT 1 FROM delivery_ledger WHERE edition = ? LIMIT 1", (key,)) is not None:
                return key
        return None

    def identity(self, key: str) -> tuple[str, str] | None:
        """``(name, exact)`` of an edition the ledger recorded with its identity."""
        found = self.conn.fetchone("SELECT name, exact FROM delivery_editions WHERE edition = ?", (key,))
        return (found[0], found[1]) if found else None

    # -- rows --------------------------------------------------------------------------------------
    def register(self, edition: str, planned: Iterable[tuple[str, str, str, str, str | None]]) -> None:
        """Add a pending row for each planned (reader, medium, variant, recipient, Message-ID) not yet in
        the ledger, in one transaction.

        Sent, sending and uncertain rows never change. A failed row whose recipient has since changed (the
        readers file was fixed) becomes pending again; a pending row follows the current variant and
        recipient. The first Message-ID recorded for a row is kept for good.

        ``planned`` is read :data:`REGISTER_BATCH` rows at a time (10,000 readers' rows are never one list here),
        and read again if the transaction is retried: a collection, or anything that iterates afresh each time.
        """
        now = _now()
        sql = (
            "INSERT INTO delivery_ledger AS l (edition, reader, medium, variant, recipient, message_id, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            # The existing row's columns are qualified: PostgreSQL finds a bare name ambiguous here.
            "ON CONFLICT (edition, reader, medium) DO UPDATE SET "
            "  status = CASE WHEN l.status = 'failed' AND l.recipient <> excluded.recipient "
            "                THEN 'pending' ELSE l.status END, "
            "  error = CASE WHEN l.status = 'failed' AND l.recipient <> excluded.recipient "
            "               THEN NULL ELSE l.error END, "
            "  variant = CASE WHEN l.status IN ('pending', 'failed') THEN excluded.variant ELSE l.variant END, "
            "  recipient = CASE WHEN l.status IN ('pending', 'failed') THEN excluded.recipient ELSE l.recipient END, "
            "  message_id = COALESCE(l.message_id, excluded.message_id), "
            "  updated_at = CASE WHEN l.status IN ('pending', 'failed') AND l.recipient <> excluded.recipient "
            "                    THEN excluded.updated_at ELSE l.updated_at END")

        def write(store: Store) -> None:
            batch: list[tuple] = []
            for reader, medium, variant, recipient, message_id in planned:
                batch.append((edition, reader, medium, variant, recipient, message_id, now, now))
                if len(batch) >= REGISTER_BATCH:
                    store.executemany(sql, batch)
                    batch = []
            if batch:
                store.executemany(sql, batch)

        self._write("registering the deliveries", lambda: self.conn.atomic(write))

    def rows(self, edition: str) -> dict[Key, LedgerRow]:
        """Every row of the edition, by (reader, medium)."""
        cursor = self.conn.execute(
            f"SELECT {_COLUMNS} FROM delivery_ledger WHERE edition = ? ORDER BY reader, medium", (edition,))
        return {(r[1], r[2]): LedgerRow(*r) for r in cursor}

    def each_key(self, edition: str, statuses: Sequence[str], page: int = 1000) -> Iterator[Key]:
        """The (reader, medium) of the edition's rows at any of ``statuses``, in (reader, medium) order, read
        ``page`` rows at a time: what a deliverer plans its claims from, without reading every column of every row
        (:meth:`rows` makes ~1.5 KB of objects a row) nor holding every row's key at once (11,549 at 10,000 readers,
        read at the start of each delivery pass)."""
        marks = ", ".join("?" for _ in statuses)
        after = ("", "")
        while True:
            found = self.conn.fetchall(
                f"SELECT reader, medium FROM delivery_ledger WHERE edition = ? AND status IN ({marks}) "
                "AND (reader > ? OR (reader = ? AND medium > ?)) ORDER BY reader, medium LIMIT ?",
                (edition, *statuses, after[0], after[0], after[1], page))
            for r in found:
                yield r[0], r[1]
            if len(found) < page:
                return
            after = (found[-1][0], found[-1][1])

    def outcomes_of(self, edition: str, page: int = 500) -> Iterator[tuple[Key, str, str | None, str | None,
                                                                          str | None]]:
        """``((reader, medium), status, error, provider_id, owner)`` of every row of the edition, in (reader,
        medium) order, read ``page`` rows at a time: a run's report of the rows it did not try, never every row's
        every column at once."""
        after = ("", "")
        while True:
            found = self.conn.fetchall(
                "SELECT reader, medium, status, error, provider_id, owner FROM delivery_ledger WHERE edition = ? "
                "AND (reader > ? OR (reader = ? AND medium > ?)) ORDER BY reader, medium LIMIT ?",
                (edition, after[0], after[0], after[1], page))
            for r in found:
                yield (r[0], r[1]), r[2], r[3], r[4], r[5]
            if len(found) < page:
                return
            after = (found[-1][0], found[-1][1])

    def editions(self) -> list[str]:
        """The editions the ledger knows, newest first."""
        return [r[0] for r in self.conn.execute(
            "SELECT edition FROM delivery_ledger GROUP BY edition ORDER BY MAX(updated_at) DESC, edition")]

    def unsent(self, repo: str, besides: str = "",
               statuses: tuple[str, ...] = ("pending",)) -> list[tuple[str, str, int]]:
        """Editions of ``repo`` (``besides`` left out) with rows in ``statuses``, the outbox's own rows not
        counted: ``(key, name, rows)``, newest window first. What a run of any edition points at."""
        marks = ", ".join("?" for _ in statuses)
        return [(r[0], r[1], int(r[2])) for r in self.conn.fetchall(
            "SELECT e.edition, e.name, COUNT(*) FROM delivery_ledger l "
            "JOIN delivery_editions e ON e.edition = l.edition "
            f"WHERE e.repo = ? AND e.edition <> ? AND l.status IN ({marks}) AND l.medium NOT LIKE 'outbox-%' "
            "GROUP BY e.edition, e.name, e.until_at ORDER BY e.until_at DESC", (repo, besides, *statuses))]

    def counts(self, edition: str) -> dict[str, int]:
        """Rows per status."""
        found = dict(self.conn.execute(
            "SELECT status, COUNT(*) FROM delivery_ledger WHERE edition = ? GROUP BY status", (edition,)).fetchall())
        return {s: found.get(s, 0) for s in STATUSES}

    # -- claims ------------------------------------------------------------------------------------
    def recover(self, edition: str) -> tuple[int, int]:
        """Settle claims whose deliverer is gone (lease expired, or a process of this host that ended):
        back to pending when the push never started, uncertain when it did. Returns (released, uncertain)."""
        now = datetime.now(timezone.utc)

        def settle(store: Store) -> tuple[int, int]:
            owners = [r[0] for r in store.fetchall(
                "SELECT DISTINCT owner FROM delivery_ledger WHERE edition = ? AND status = 'sending' "
                "AND owner IS NOT NULL", (edition,))]
            gone = [o for o in owners if owner_gone(o)]
            stamp = _stamp(now)
            released = uncertain = 0
            for owner in [None, *gone]:
                who = "lease_until < ?" if owner is None else "owner = ?"
                arg = stamp if owner is None else owner
                released += store.execute(
                    "UPDATE delivery_ledger SET status = 'pending', owner = NULL, lease_until = NULL, updated_at = ? "
                    f"WHERE edition = ? AND status = 'sending' AND push_started_at IS NULL AND {who}",
                    (_now(), edition, arg)).rowcount
                uncertain += store.execute(
                    "UPDATE delivery_ledger SET status = 'uncertain', "
                    "error = 'the deliverer ' || COALESCE(owner, '?') || ' stopped after it began to push at ' "
                    "|| push_started_at || ': it may have been delivered', updated_at = ? "
                    f"WHERE edition = ? AND status = 'sending' AND push_started_at IS NOT NULL AND {who}",
                    (_now(), edition, arg)).rowcount
            return released, uncertain

        return self._write("settling expired claims", lambda: self.conn.atomic(settle))

    def claim(self, edition: str, owner: str, after: Key | None, limit: int,
              readers: Sequence[str] | None = None) -> list[LedgerRow]:
        """Claim up to ``limit`` pending rows after ``after`` in (reader, medium) order for ``owner`` (only
        rows of ``readers``, when given), atomically: concurrent deliverers never get the same row (PostgreSQL:
        ``FOR UPDATE SKIP LOCKED``; SQLite: the claim runs under the database's write lock). The claimed rows
        as they are now."""
        reader, medium = after or ("", "")
        only = f"AND reader IN ({', '.join('?' * len(readers))}) " if readers else ""
        pick = ("SELECT reader, medium FROM delivery_ledger WHERE edition = ? AND status = 'pending' "
                f"AND (reader > ? OR (reader = ? AND medium > ?)) {only}ORDER BY reader, medium LIMIT ?")
        chosen = tuple(readers or ())
        sets = "status = 'sending', owner = ?, lease_until = ?, push_started_at = NULL, updated_at = ?"
        if self.conn.dialect == "postgresql":
            # A materialised CTE: PostgreSQL may evaluate an IN (… LIMIT n FOR UPDATE SKIP LOCKED) sub-select
            # more than once in an UPDATE and claim more than n rows (seen here: 6 of LIMIT 4).
            columns = ", ".join(f"l.{c}" for c in LedgerRow.__dataclass_fields__)
            sql = (f"WITH picked AS MATERIALIZED ({pick} FOR UPDATE SKIP LOCKED) UPDATE delivery_ledger AS l SET "
                   f"{sets} FROM picked WHERE l.edition = ? AND l.reader = picked.reader "
                   f"AND l.medium = picked.medium AND l.status = 'pending' RETURNING {columns}")
            args = (edition, reader, reader, medium, *chosen, limit, owner, self._lease_until(), _now(), edition)
        else:  # the claim runs under SQLite's one write lock (BEGIN IMMEDIATE): nobody else can claim meanwhile
            # By rowid: matched by (reader, medium), the update scanned every pending row of the edition for each
            # claim (the planner took the status index), 4 ms a claim at 10,000 readers; by rowid, 0.1 ms.
            pick = pick.replace("SELECT reader, medium FROM", "SELECT rowid FROM", 1)
            sql = (f"UPDATE delivery_ledger SET {sets} WHERE rowid IN ({pick}) AND edition = ? "
                   f"AND status = 'pending' RETURNING {_COLUMNS}")
            args = (owner, self._lease_until(), _now(), edition, reader, reader, medium, *chosen, limit, edition)
        rows = self._write("claiming deliveries", lambda: self.conn.atomic(lambda s: s.execute(sql, args).rows))
        return sorted((LedgerRow(*r) for r in rows), key=lambda row: row.key)

    def start(self, edition: str, key: Key, owner: str) -> bool:
        """Record that the push of a claimed row begins (and renew the owner's other claims). False when
        the claim was lost (its lease ran out and another deliverer took it): then it must not be pushed."""
        return key in self.start_many(edition, [key], owner)

    def start_many(self, edition: str, keys: Sequence[Key], owner: str) -> set[Key]:
        """:meth:`start` for several claimed rows in one transaction (a batch pushed to a local channel, the
        outbox): the rows whose push may begin, every one of them recorded as begun before any is pushed."""
        if not keys:
            return set()
        now = datetime.now(timezone.utc)
        # The owner's other claims are renewed a few times per lease, not on every message.
        beat = time.monotonic() - self._beats.get(owner, 0.0) > self.lease / 4

        stamp = _stamp(now)

        def begin(store: Store) -> set[Key]:
            # "Or already ours with this very stamp": run again after a lost connection whose commit went
            # through, the statement still says the push may begin (the store re-runs it after reconnecting).
            started = {key for key in keys if store.execute(
                "UPDATE delivery_ledger SET push_started_at = ?, lease_until = ?, attempts = attempts + 1, "
                f"attempted_at = ?, updated_at = ? WHERE {_ROW} AND status = 'sending' AND owner = ? "
                "AND (push_started_at IS NULL OR push_started_at = ?)",
                (stamp, self._lease_until(), _now(), _now(), edition, *key, owner, stamp)).rowcount == 1}
            if beat and started:
                store.execute("UPDATE delivery_ledger SET lease_until = ? WHERE edition = ? AND status = 'sending' "
                              "AND owner = ? AND push_started_at IS NULL", (self._lease_until(), edition, owner))
            return started

        started = self._write("recording that a push begins", lambda: self.conn.atomic(begin))
        if beat and started:
            self._beats[owner] = time.monotonic()
        return started

    def release(self, edition: str, keys: Iterable[Key], owner: str, error: str | None = None) -> None:
        """Give back claimed rows whose push never started (to pending, with ``error`` if given)."""
        keys = list(keys)
        if not keys:
            return
        self._write("giving back claims", lambda: self.conn.executemany(
            "UPDATE delivery_ledger SET status = 'pending', owner = NULL, lease_until = NULL, "
            f"error = COALESCE(?, error), updated_at = ? WHERE {_ROW} AND status = 'sending' AND owner = ? "
            "AND push_started_at IS NULL", [(error and error[:500], _now(), edition, *k, owner) for k in keys]))

    def release_all(self, edition: str, owner: str) -> int:
        """Give back every claim of ``owner`` whose push never started (the deliverer is stopping)."""
        return self._write("giving back claims", lambda: self.conn.execute(
            "UPDATE delivery_ledger SET status = 'pending', owner = NULL, lease_until = NULL, updated_at = ? "
            "WHERE edition = ? AND status = 'sending' AND owner = ? AND push_started_at IS NULL",
            (_now(), edition, owner)).rowcount)

    # -- outcomes: one write each, committed before the next message is tried ----------------------
    def _outcome(self, what: str, edition: str, key: Key, sets: str, args: tuple, owner: str | None,
                 held: str = "'sending'") -> None:
        # Without an owner (direct use, tests), only a row nobody holds changes.
        where = f"status IN ({held}) AND owner = ?" if owner else "status = 'pending'"
        statement = (f"UPDATE delivery_ledger SET {sets}, owner = NULL, lease_until = NULL, updated_at = ? "
                     f"WHERE {_ROW} AND {where}", (*args, _now(), edition, *key, *((owner,) if owner else ())))
        if self._batch is not None:  # inside outcomes(): committed with the others
            self._batch.append(statement)
            return
        self._write(what, lambda: self.conn.execute(*statement))

    @contextmanager
    def outcomes(self) -> Iterator[None]:
        """Record the outcomes written inside the block (:meth:`sent`, :meth:`failed`, :meth:`uncertain`,
        :meth:`retry_later`) in one transaction when it ends, each as it would be alone: a batch of outbox
        files written, then one commit saying so. Until then they are not recorded: rows whose push began
        stay ``sending``, and a crash leaves them ``uncertain`` when their claim is settled (never sent, never
        lost). When the block raises, the outcomes it knew are still recorded (if the database takes them)."""
        if self._batch is not None:
            yield  # nested: the outer block commits
            return
        self._batch = batch = list[tuple[str, tuple]]()

        def record() -> None:
            if batch:
                self._write("recording outcomes",
                            lambda: self.conn.atomic(lambda store: [store.execute(*st) for st in batch]))

        try:
            yield
        except BaseException:
            self._batch = None
            ledger_error = None
            try:
                record()
            except LedgerUnavailable as exc:  # the block's own error is the one to tell
                ledger_error = exc
            if ledger_error is not None:
                log.warning("could not record the outcomes of a batch while stopping: %s", ledger_error)
            raise
        self._batch = None
        record()

    def sent(self, edition: str, key: Key, provider_id: str, owner: str | None = None) -> None:
        """The provider accepted the message: it is never sent again. The owner's own row that another run
        marked uncertain meanwhile (its lease ran out during a slow push) becomes sent too: the owner knows,
        and ``digest resend --uncertain`` would otherwise send a second copy."""
        self._outcome("recording a sent message", edition, key,
                      "status = 'sent', provider_id = ?, error = NULL, sent_at = ?"
                      + ("" if owner else ", attempts = attempts + 1, attempted_at = ?"),
                      (provider_id, _now()) + (() if owner else (_now(),)), owner, held="'sending', 'uncertain'")

    def failed(self, edition: str, key: Key, error: str, owner: str | None = None) -> None:
        """Refused for good (or the message could not be composed): not retried unless the recipient changes."""
        self._outcome("recording a failure", edition, key,
                      "status = 'failed', error = ?" + ("" if owner else ", attempts = attempts + 1, attempted_at = ?"),
                      (error[:500],) + (() if owner else (_now(),)), owner)

    def uncertain(self, edition: str, key: Key, reason: str, owner: str | None = None) -> None:
        """It may have reached the provider: never sent again unless an operator asks (``digest resend``)."""
        self._outcome("recording an uncertain send", edition, key, "status = 'uncertain', error = ?",
                      (reason[:500],), owner)

    def retry_later(self, edition: str, key: Key, error: str, *, attempted: bool = True,
                    owner: str | None = None) -> None:
        """A transient failure (or, with ``attempted=False``, not tried at all): the row is pending again
        with the reason, for the next run. With an owner the attempt was already counted by :meth:`start`."""
        count = attempted and not owner
        self._outcome("recording a transient failure", edition, key,
                      "status = 'pending', push_started_at = NULL, error = ?, attempts = attempts + ?, "
                      "attempted_at = CASE WHEN ? THEN ? ELSE attempted_at END",
                      (error[:500], int(count), count, _now()), owner)  # a bool: PostgreSQL's CASE wants one

    def checkpoint(self, edition: str, key: Key, value: dict, provider_id: str | None = None,
                   owner: str | None = None) -> None:
        """Record how far a multi-part delivery (a Slack thread) got, so a re-run resumes there (and renew
        the claim: a long thread is still alive)."""
        self._write("recording a part", lambda: self.conn.execute(
            "UPDATE delivery_ledger SET checkpoint = ?, provider_id = COALESCE(?, provider_id), "
            "lease_until = CASE WHEN owner IS NULL THEN lease_until ELSE ? END, updated_at = ? "
            f"WHERE {_ROW}", (json.dumps(value), provider_id, self._lease_until(), _now(), edition, *key)))

    def reopen_uncertain(self, edition: str, keys: Iterable[Key] | None = None) -> list[Key]:
        """``digest resend --uncertain``: uncertain rows (the given ones, or all) become pending, on
        purpose; their Message-ID is kept, so mail clients drop a copy they already have."""
        return self.reopen(edition, keys, "uncertain")

    def reopen(self, edition: str, keys: Iterable[Key] | None = None, status: str = "uncertain") -> list[Key]:
        """``digest resend --uncertain`` / ``--failed``: rows at ``status`` (the given ones, or all) become
        pending, on purpose (a failure fixed since: a Feishu secret, a bot invited to its channel); their
        Message-ID and thread checkpoint are kept."""
        if status not in ("uncertain", "failed"):
            raise ValueError(f"only uncertain or failed rows are reopened, not {status}")
        wanted = set(keys) if keys is not None else None

        def reopen(store: Store) -> list[Key]:
            keys = [(r[0], r[1]) for r in store.fetchall(
                "SELECT reader, medium FROM delivery_ledger WHERE edition = ? AND status = ? "
                "ORDER BY reader, medium", (edition, status))]
            keys = [k for k in keys if wanted is None or k in wanted]
            for key in keys:
                store.execute("UPDATE delivery_ledger SET status = 'pending', push_started_at = NULL, "
                              "error = 'resend asked by an operator; was: ' || COALESCE(error, ''), updated_at = ? "
                              f"WHERE {_ROW} AND status = ?", (_now(), edition, *key, status))
            return keys

        return self._write(f"reopening {status} rows", lambda: self.conn.atomic(reopen))

