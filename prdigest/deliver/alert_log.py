"""The watch's memory in the state store: each watch run's window and the (PR, reader) pairs it alerted.

A watch run is recorded together with every (PR, reader) it will alert, in one transaction, only after the
facts and impacts are known: a crash before that leaves nothing (the next run's window covers the same PRs
again); a crash after it leaves the run ``delivering`` with its alerts' lines kept here, so the next run
delivers them from this record (the ledger skips what was sent) without collecting anything again. A
(PR, reader) pair is alerted by one run only (its primary key), so two runs, or a re-run over the same
window, never alert a reader about a PR twice. The weekly edition reads the same rows ("alerted on DATE"),
and ``digest impact`` the fixes found later ("fixed in your abc123").
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

from prdigest.state.store import Migration, Store

COMPONENT = "watch-alerts"
MIGRATIONS: list[Migration] = ["""
    CREATE TABLE watch_runs (
        key        TEXT PRIMARY KEY,
        repo       TEXT NOT NULL,
        since_at   TEXT NOT NULL,
        until_at   TEXT NOT NULL,
        status     TEXT NOT NULL CHECK (status IN ('delivering', 'done')),
        created_at TEXT NOT NULL,
        done_at    TEXT
    );
    CREATE INDEX watch_runs_repo ON watch_runs (repo, until_at);
    CREATE TABLE watch_alerts (
        repo        TEXT NOT NULL,
        reader      TEXT NOT NULL,
        number      INTEGER NOT NULL,
        run_key     TEXT NOT NULL,
        downstream  TEXT NOT NULL,
        commit_sha  TEXT NOT NULL,
        alerted_at  TEXT NOT NULL,
        detail      TEXT NOT NULL,
        fixed_sha   TEXT,
        fixed_at    TEXT,
        PRIMARY KEY (repo, reader, number)
    );
    CREATE INDEX watch_alerts_run ON watch_alerts (run_key)
"""]


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class AlertLine:
    """One downstream line a PR breaks: the reader's ``path:line``, the upstream name, its old → new shape."""

    path: str
    line: int
    symbol: str
    how: str
    fact: str
    before: str = ""
    after: str = ""
    #: The downstream's text of that line when the alert was made (a later fix changes it).
    text: str = ""


@dataclass(frozen=True)
class AlertItem:
    """One PR in one reader's alert."""

    number: int
    url: str
    title: str
    lines: tuple[AlertLine, ...]

    def data(self) -> str:
        return json.dumps({"url": self.url, "title": self.title, "lines": [asdict(x) for x in self.lines]},
                          separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_data(cls, number: int, data: str) -> "AlertItem":
        payload = json.loads(data)
        return cls(number, payload["url"], payload["title"], tuple(AlertLine(**x) for x in payload["lines"]))


@dataclass(frozen=True)
class WatchRun:
    """One watch run: its ledger key and window."""

    key: str
    repo: str
    since: datetime
    until: datetime


@dataclass(frozen=True)
class Alerted:
    """A (PR, reader) pair alerted: when, about which downstream commit, and the fix found since."""

    repo: str
    reader: str
    number: int
    downstream: str
    commit: str
    alerted_at: datetime
    item: AlertItem
    fixed_sha: str | None = None
    fixed_at: datetime | None = None

    @property
    def lead_days(self) -> float | None:
        """Days from the alert to the downstream's fix, when one was found."""
        if self.fixed_at is None:
            return None
        return round((self.fixed_at - self.alerted_at).total_seconds() / 86400, 2)


class AlertLog:
    """The ``watch_runs`` and ``watch_alerts`` tables of one state store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(COMPONENT, MIGRATIONS)

    def last_until(self, repo: str) -> datetime | None:
        """The end of the latest watch window of ``repo`` (where the next one starts)."""
        row = self.store.fetchone("SELECT MAX(until_at) FROM watch_runs WHERE repo = ?", (repo,))
        return datetime.fromisoformat(row[0]) if row and row[0] else None

    def unfinished(self, repo: str) -> list[WatchRun]:
        """Runs of ``repo`` whose alerts were recorded but not all settled (a crash, a channel down)."""
        return [WatchRun(r[0], repo, datetime.fromisoformat(r[1]), datetime.fromisoformat(r[2]))
                for r in self.store.fetchall("SELECT key, since_at, until_at FROM watch_runs WHERE repo = ? AND "
                                             "status = 'delivering' ORDER BY until_at", (repo,))]

    def record(self, run: WatchRun, alerts: dict[tuple[str, str, str], list[AlertItem]], now: datetime) -> None:
        """Record ``run`` and its alerts ((reader, downstream, commit) → items) in one transaction; a (PR, reader)
        pair an earlier run alerted stays that run's."""
        def work(store: Store) -> None:
            store.execute("INSERT INTO watch_runs (key, repo, since_at, until_at, status, created_at) "
                          "VALUES (?, ?, ?, ?, 'delivering', ?) ON CONFLICT (key) DO NOTHING",
                          (run.key, run.repo, _stamp(run.since), _stamp(run.until), _stamp(now)))
            rows = [(run.repo, reader, item.number, run.key, downstream, commit, _stamp(now), item.data())
                    for (reader, downstream, commit), items in alerts.items() for item in items]
            if rows:
                store.executemany("INSERT INTO watch_alerts (repo, reader, number, run_key, downstream, commit_sha, "
                                  "alerted_at, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                                  "ON CONFLICT (repo, reader, number) DO NOTHING", rows)

        self.store.atomic(work)

    def of_run(self, key: str) -> dict[str, tuple[str, str, list[AlertItem]]]:
        """Each reader's alert of one run: (downstream, its commit, the items by PR number)."""
        out: dict[str, tuple[str, str, list[AlertItem]]] = {}
        for reader, number, downstream, commit, data in self.store.fetchall(
                "SELECT reader, number, downstream, commit_sha, detail FROM watch_alerts WHERE run_key = ? "
                "ORDER BY reader, number", (key,)):
            out.setdefault(reader, (downstream, commit, []))[2].append(AlertItem.from_data(int(number), data))
        return out

    def finish(self, key: str, now: datetime) -> None:
        self.store.execute("UPDATE watch_runs SET status = 'done', done_at = ? WHERE key = ?", (_stamp(now), key))

    def alerted(self, repo: str, reader: str | None = None) -> list[Alerted]:
        """Every (PR, reader) alerted for ``repo`` (one reader's with ``reader``), oldest first."""
        sql = ("SELECT repo, reader, number, downstream, commit_sha, alerted_at, detail, fixed_sha, fixed_at "
               "FROM watch_alerts WHERE repo = ?")
        params: tuple = (repo,)
        if reader is not None:
            sql, params = sql + " AND reader = ?", (repo, reader)
        return [Alerted(r[0], r[1], int(r[2]), r[3], r[4], datetime.fromisoformat(r[5]),
                        AlertItem.from_data(int(r[2]), r[6]), r[7],
                        datetime.fromisoformat(r[8]) if r[8] else None)
                for r in self.store.fetchall(sql + " ORDER BY alerted_at, number", params)]

    def fixed(self, alerted: Alerted, sha: str, when: datetime) -> None:
        """Record the downstream commit that changed the alerted lines."""
        self.store.execute("UPDATE watch_alerts SET fixed_sha = ?, fixed_at = ? WHERE repo = ? AND reader = ? AND "
                           "number = ? AND fixed_sha IS NULL",
                           (sha, _stamp(when), alerted.repo, alerted.reader, alerted.number))
