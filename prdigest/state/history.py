"""Edition history: the published editions, read from their records (:mod:`prdigest.state.record`), and an index of
their published entries by PR number, title, author and subsystem.

The archive site is rebuilt from it alone (no earlier output folder needed), and later editions look up
earlier entries by PR number (relations, follow-ups across weeks). The index holds no content: an entry is
always read from its edition's record, so what the archive and later editions show is what was published,
and an entry rejected when an edition is published again is gone from both. An edition is identified by its
exact repo and window (``since``, ``until``); publishing the same edition again replaces it.

SQL stays portable (``ON CONFLICT … DO UPDATE``, ``?`` parameters, TEXT timestamps in one fixed ISO
format so they sort as strings) so that a PostgreSQL store can run the same statements.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone

from prdigest.kernel.models import Edition, EditionId, Entry, utc
from prdigest.kernel.storage import Store
from prdigest.state import record as records

COMPONENT = "history"

#: Append only (see :func:`prdigest.state.store.migrate`).
MIGRATIONS: list[str] = [
    """
    CREATE TABLE history_editions (
        repo TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        name TEXT NOT NULL,
        week TEXT NOT NULL,
        language TEXT NOT NULL,
        approver TEXT,
        approved_at TEXT,
        generated_at TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        entry_count INTEGER NOT NULL,
        edition_json TEXT NOT NULL,
        PRIMARY KEY (repo, since, until)
    );
    CREATE INDEX history_editions_until ON history_editions (until);
    CREATE TABLE history_entries (
        repo TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        number INTEGER NOT NULL,
        position INTEGER NOT NULL,
        verdict TEXT NOT NULL,
        title TEXT NOT NULL,
        headline TEXT NOT NULL,
        author TEXT NOT NULL,
        url TEXT NOT NULL,
        merged_at TEXT NOT NULL,
        subsystems TEXT NOT NULL,
        entry_json TEXT NOT NULL,
        PRIMARY KEY (repo, since, until, number),
        FOREIGN KEY (repo, since, until) REFERENCES history_editions (repo, since, until) ON DELETE CASCADE
    );
    CREATE INDEX history_entries_number ON history_entries (repo, number);
    CREATE TABLE history_subsystems (
        repo TEXT NOT NULL,
        since TEXT NOT NULL,
        until TEXT NOT NULL,
        number INTEGER NOT NULL,
        subsystem TEXT NOT NULL,
        PRIMARY KEY (repo, since, until, number, subsystem),
        FOREIGN KEY (repo, since, until, number) REFERENCES history_entries (repo, since, until, number)
            ON DELETE CASCADE
    );
    CREATE INDEX history_subsystems_name ON history_subsystems (subsystem, repo)
    """,
    # v2: the content lives in the edition record; the history keeps only the index (adopt_legacy runs first).
    """
    ALTER TABLE history_editions DROP COLUMN edition_json;
    ALTER TABLE history_entries DROP COLUMN entry_json
    """,
]


def ensure_schema(store: Store) -> None:
    """Create or upgrade the history tables (editions published before the record are adopted into it)."""
    records.ensure_schema(store)
    row = store.fetchone("SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,))
    if row is not None and row[0] == 1:
        store.atomic(_adopt_legacy)
    store.migrate(COMPONENT, MIGRATIONS)


def _adopt_legacy(store: Store) -> None:
    """Editions the history stored in full (schema v1) become delivered records, unless recorded already."""
    row = store.fetchone("SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,))
    if row is None or row[0] != 1:
        return  # another process adopted them meanwhile
    for repo, since, until, meta in store.fetchall(
            "SELECT repo, since, until, edition_json FROM history_editions").copy():
        entries = [json.loads(r[0]) for r in store.fetchall(
            "SELECT entry_json FROM history_entries WHERE repo = ? AND since = ? AND until = ? ORDER BY position",
            (repo, since, until))]
        edition = records.tolerant(Edition, {**json.loads(meta), "entries": entries})
        if records.load(store, edition.key) is None:
            records.save(store, edition, records.Status.DELIVERED)


def stamp(dt: datetime) -> str:
    """``dt`` in UTC as fixed-width ISO text (microseconds always present), so text order is time order."""
    return utc(dt).isoformat(timespec="microseconds")


@dataclass(frozen=True)
class EditionRef:
    """Which edition an entry was published in: exact repo and window, plus its human name."""

    repo: str
    since: datetime
    until: datetime
    week: str
    name: str


@dataclass(frozen=True)
class PastEntry:
    """An entry as it was published, with the edition it was published in."""

    edition: EditionRef
    entry: Entry


def record_edition(store: Store, edition: Edition, *, expect: records.EditionRecord | None = None,
                   now: datetime | None = None, seal: records.SealKey | None = None) -> records.EditionRecord:
    """Publish ``edition``: its record at ``published`` and the index of its published entries, in one
    transaction. An edition published before (same repo and window) is replaced, entries the editor has since
    rejected included. ``expect``: the approved record this run read (compare and set); None replaces whatever
    is stored (tests, tools). ``seal``: the key the record is sealed with (:func:`prdigest.state.record.save`)."""
    ensure_schema(store)
    key = (edition.repo, stamp(edition.since), stamp(edition.until))
    published = edition.published
    recorded = stamp(now or datetime.now(timezone.utc))

    def write(tx: Store) -> records.EditionRecord:
        stored = records.save(tx, edition, records.Status.PUBLISHED, expect=expect, replace=expect is None,
                              seal=seal)
        tx.execute(
            "INSERT INTO history_editions (repo, since, until, name, week, language, approver, approved_at, "
            "generated_at, recorded_at, entry_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (repo, since, until) DO UPDATE SET name = excluded.name, week = excluded.week, "
            "language = excluded.language, approver = excluded.approver, approved_at = excluded.approved_at, "
            "generated_at = excluded.generated_at, recorded_at = excluded.recorded_at, "
            "entry_count = excluded.entry_count",
            (*key, edition.name, edition.week, edition.language, edition.approver,
             stamp(edition.approved_at) if edition.approved_at else None, stamp(edition.generated_at),
             recorded, len(published)),
        )
        # Entries the editor rejected on a second publication must disappear: replace the whole set.
        tx.execute("DELETE FROM history_subsystems WHERE repo = ? AND since = ? AND until = ?", key)
        tx.execute("DELETE FROM history_entries WHERE repo = ? AND since = ? AND until = ?", key)
        tx.executemany(
            "INSERT INTO history_entries (repo, since, until, number, position, verdict, title, headline, "
            "author, url, merged_at, subsystems) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*key, e.number, position, e.verdict.value, e.title, e.headline, e.author, e.url, stamp(e.merged_at),
              json.dumps(e.subsystems, ensure_ascii=False))
             for position, e in enumerate(published)])
        tx.executemany("INSERT INTO history_subsystems (repo, since, until, number, subsystem) VALUES (?, ?, ?, ?, ?)",
                       [(*key, e.number, name) for e in published for name in dict.fromkeys(e.subsystems)])
        return stored

    return store.atomic(write)


def editions(store: Store, repo: str | None = None, *, before: datetime | None = None,
             limit: int | None = None) -> list[Edition]:
    """Published editions with their published entries (in publication order), newest window first, read from
    their records. ``repo`` keeps one repository's; ``before`` keeps editions whose window ends at or before it."""
    ensure_schema(store)
    found = [r.edition for r in records.published(store, repo)
             if before is None or utc(r.edition.until) <= utc(before)]
    found = found[:limit] if limit is not None else found
    return [e.model_copy(update={"entries": e.published}) for e in found]


def _where(repo: str | None, before: datetime | None) -> tuple[str, tuple[str, ...]]:
    clauses, params = [], []
    if repo is not None:
        clauses.append("repo = ?")
        params.append(repo)
    if before is not None:
        clauses.append("until <= ?")
        params.append(stamp(before))
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(params)


def edition_refs(store: Store, repo: str | None = None) -> list[EditionRef]:
    """The stored editions' identities, newest first, without loading their entries."""
    ensure_schema(store)
    where, params = _where(repo, None)
    rows = store.execute(f"SELECT repo, since, until, week, name FROM history_editions{where} "
                        "ORDER BY until DESC, since DESC, repo", params).fetchall()
    return [_ref(r) for r in rows]


def _ref(row: tuple) -> EditionRef:
    return EditionRef(repo=row[0], since=datetime.fromisoformat(row[1]), until=datetime.fromisoformat(row[2]),
                      week=row[3], name=row[4])


def past_entries(store: Store, repo: str, numbers: list[int] | None = None, *,
                 before: datetime | None = None, subsystem: str | None = None) -> list[PastEntry]:
    """Published entries of ``repo``, newest edition first: those of the PRs in ``numbers`` (all when None),
    in editions ending at or before ``before``, of ``subsystem``. Relations and follow-ups across weeks
    start here: "was #41234 published before, in which edition, with which verdict and follow-ups?"."""
    ensure_schema(store)
    sql = ("SELECT e.repo, e.since, e.until, h.week, h.name, e.number FROM history_entries e "
           "JOIN history_editions h ON h.repo = e.repo AND h.since = e.since AND h.until = e.until "
           "WHERE e.repo = ?")
    params: list[object] = [repo]
    if before is not None:
        sql += " AND e.until <= ?"
        params.append(stamp(before))
    if subsystem is not None:
        sql += (" AND EXISTS (SELECT 1 FROM history_subsystems s WHERE s.repo = e.repo AND s.since = e.since "
                "AND s.until = e.until AND s.number = e.number AND s.subsystem = ?)")
        params.append(subsystem)
    found: list[PastEntry] = []
    loaded: dict[tuple[str, datetime, datetime], dict[int, Entry]] = {}
    wanted = None if numbers is None else sorted(set(numbers))
    # Chunks keep the statement under every database's parameter limit (SQLite's default is 999).
    chunks = [None] if wanted is None else [wanted[i:i + 500] for i in range(0, len(wanted), 500)]
    for chunk in chunks:
        chunk_sql, chunk_params = sql, list(params)
        if chunk is not None:
            chunk_sql += f" AND e.number IN ({', '.join('?' for _ in chunk)})"
            chunk_params += chunk
        for r in store.execute(chunk_sql + " ORDER BY e.until DESC, e.since DESC, e.number", chunk_params):
            ref = _ref(r[:5])
            entry = _published_entry(store, ref, int(r[5]), loaded)
            if entry is not None:
                found.append(PastEntry(ref, entry))
    found.sort(key=lambda p: (p.edition.until, p.edition.since), reverse=True)
    return found


def _published_entry(store: Store, ref: EditionRef, number: int,
                     loaded: dict[tuple[str, datetime, datetime], dict[int, Entry]]) -> Entry | None:
    """Entry ``number`` as its edition's record published it (each record parsed once per lookup)."""
    key = (ref.repo, ref.since, ref.until)
    if key not in loaded:
        stored = records.load(store, EditionId(ref.repo, ref.since, ref.until))
        loaded[key] = {e.number: e for e in stored.edition.published} if stored is not None else {}
    return loaded[key].get(number)


def delete_edition(store: Store, repo: str, since: datetime, until: datetime) -> bool:
    """Remove one edition (and its entries) from the history; True when it was there."""
    ensure_schema(store)
    key = (repo, stamp(since), stamp(until))

    def remove(tx: Store) -> int:
        tx.execute("DELETE FROM history_subsystems WHERE repo = ? AND since = ? AND until = ?", key)
        tx.execute("DELETE FROM history_entries WHERE repo = ? AND since = ? AND until = ?", key)
        tx.execute("DELETE FROM edition_records WHERE key = ?", (EditionId(repo, since, until).key,))
        return tx.execute("DELETE FROM history_editions WHERE repo = ? AND since = ? AND until = ?", key).rowcount

    return store.atomic(remove) > 0
