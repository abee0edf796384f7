"""Readers' own choices in the state store, and the roster ``digest web`` reads to show them.

Three tables of the component ``reader-selfservice``:

- ``reader_roster``: each reader of a repo's digest as the last run's readers file described them. A run
  writes it when it loads its readers (readers gone from the file are removed, so their links stop
  working: the readers file says who exists).
- ``reader_lists``: per repo, the language and the subsystem vocabulary the preferences form offers.
- ``reader_overrides``: what a reader chose (``unsubscribed``, :class:`Preferences` as JSON).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from prdigest.kernel.i18n import DEFAULT, FALLBACK, languages
from prdigest.kernel.storage import Migration, Store
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.preferences import Preferences

COMPONENT = "reader-selfservice"

_V1 = """
    CREATE TABLE reader_roster (
        repo     TEXT NOT NULL,
        reader   TEXT NOT NULL,
        profile  TEXT NOT NULL,
        seen_at  TEXT NOT NULL,
        PRIMARY KEY (repo, reader)
    );
    CREATE TABLE reader_lists (
        repo       TEXT PRIMARY KEY,
        language   TEXT NOT NULL,
        vocabulary TEXT NOT NULL,
        updated_at TEXT NOT NULL
    );
    CREATE TABLE reader_overrides (
        repo         TEXT NOT NULL,
        reader       TEXT NOT NULL,
        unsubscribed INTEGER NOT NULL DEFAULT 0,
        preferences  TEXT NOT NULL DEFAULT '{}',
        updated_at   TEXT NOT NULL,
        PRIMARY KEY (repo, reader)
    )
"""

#: Unsubscribed per medium (comma-separated medium names): an e-mail's one-click link stops the e-mail only.
_V2 = "ALTER TABLE reader_overrides ADD COLUMN unsubscribed_media TEXT NOT NULL DEFAULT ''"

MIGRATIONS: list[Migration] = [_V1, _V2]


@dataclass(frozen=True)
class Choice:
    """One reader's stored choices."""

    #: Unsubscribed without naming a medium (the preferences form, an older link): the personal media stop.
    unsubscribed: bool = False
    preferences: Preferences = Preferences()
    updated_at: str = ""
    #: Media unsubscribed one by one (the link in an e-mail stops the e-mail).
    unsubscribed_media: tuple[str, ...] = ()

    @property
    def any_unsubscribed(self) -> bool:
        return self.unsubscribed or bool(self.unsubscribed_media)

    def shown(self) -> str:
        """``UNSUBSCRIBED``, ``UNSUBSCRIBED (email)``, or ""."""
        if self.unsubscribed:
            return "UNSUBSCRIBED"
        return f"UNSUBSCRIBED ({', '.join(self.unsubscribed_media)})" if self.unsubscribed_media else ""


@dataclass(frozen=True)
class Listing:
    """What the preferences page offers for a repo: its language and its subsystems (name, labels by language)."""

    language: str
    subsystems: list[tuple[str, dict[str, str]]]

    @staticmethod
    def label(subsystem: tuple[str, dict[str, str]], language: str) -> str:
        """One listed subsystem's label in ``language``: English's when it has none, else its name."""
        name, labels = subsystem
        return labels.get(language) or labels.get(FALLBACK) or name


def _listed(stored: list[Any]) -> tuple[str, dict[str, str]]:
    """A stored subsystem: ``[name, {language: label}]``, or as runs before the catalogs wrote it,
    ``[name, zh-CN label, en label]``."""
    if len(stored) == 2 and isinstance(stored[1], dict):
        return str(stored[0]), {str(k): str(v) for k, v in stored[1].items()}
    return str(stored[0]), dict(zip(_OLD_LISTED, (str(v) for v in stored[1:])))


#: The languages of a listed subsystem's labels before they were stored by language, in their order.
_OLD_LISTED = ("zh-CN", "en")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class ReaderChoices:
    """Reads and writes the self-service tables (migrated on first use)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        store.migrate(COMPONENT, MIGRATIONS)

    # --- written by a run --------------------------------------------------------------------------
    def record_roster(self, repo: str, readers: Iterable[Reader], vocabulary: Vocabulary, language: str) -> None:
        """The readers file of this run is the roster of ``repo``: upsert each reader, drop the others."""
        readers = list(readers)
        now = _now()
        subsystems = [[n, {lang: vocabulary.label(n, lang) for lang in languages()}]
                      for n in vocabulary.names if n in vocabulary.known]

        def work(store: Store) -> None:
            ids = {r.id for r in readers}
            for (old,) in store.fetchall("SELECT reader FROM reader_roster WHERE repo = ?", (repo,)):
                if old not in ids:
                    store.execute("DELETE FROM reader_roster WHERE repo = ? AND reader = ?", (repo, old))
            for reader in readers:
                store.execute(
                    "INSERT INTO reader_roster (repo, reader, profile, seen_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (repo, reader) DO UPDATE SET profile = excluded.profile, seen_at = excluded.seen_at",
                    (repo, reader.id, reader.model_dump_json(), now))
            store.execute(
                "INSERT INTO reader_lists (repo, language, vocabulary, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (repo) DO UPDATE SET language = excluded.language, vocabulary = excluded.vocabulary, "
                "updated_at = excluded.updated_at", (repo, language, json.dumps(subsystems, ensure_ascii=False), now))
        self.store.atomic(work)

    # --- read by a run and by digest readers ---------------------------------------------------------
    def choices(self, repo: str) -> dict[str, Choice]:
        """Every reader's stored choices for ``repo``, by reader id."""
        rows = self.store.fetchall(f"SELECT reader, {_CHOICE} FROM reader_overrides WHERE repo = ?", (repo,))
        return {row[0]: _choice(*row[1:]) for row in rows}

    def all_choices(self) -> dict[tuple[str, str], Choice]:
        """Every stored choice, by (repo, reader id)."""
        rows = self.store.fetchall(f"SELECT repo, reader, {_CHOICE} FROM reader_overrides ORDER BY repo, reader")
        return {(row[0], row[1]): _choice(*row[2:]) for row in rows}

    # --- read and written by digest web ----------------------------------------------------------------
    def profile(self, repo: str, reader: str) -> Reader | None:
        """The reader as the last run's readers file described them, or None if they are not on it."""
        row = self.store.fetchone("SELECT profile FROM reader_roster WHERE repo = ? AND reader = ?", (repo, reader))
        return Reader.model_validate_json(row[0]) if row else None

    def listing(self, repo: str) -> Listing:
        """The repo's language and vocabulary, as the last run recorded them."""
        row = self.store.fetchone("SELECT language, vocabulary FROM reader_lists WHERE repo = ?", (repo,))
        if row is None:
            return Listing(DEFAULT, [])
        return Listing(row[0], [_listed(s) for s in json.loads(row[1])])

    def choice(self, repo: str, reader: str) -> Choice:
        """One reader's stored choices (defaults when none)."""
        row = self.store.fetchone(f"SELECT {_CHOICE} FROM reader_overrides WHERE repo = ? AND reader = ?",
                                  (repo, reader))
        return _choice(*row) if row else Choice()

    def set_unsubscribed(self, repo: str, reader: str, unsubscribed: bool, medium: str | None = None) -> None:
        """Unsubscribe a reader from ``medium`` (the one a link came in), or without one from their personal
        media (:func:`~prdigest.readers.selfservice.preferences.stopped_media`); resubscribing undoes both. Their
        preferences are kept either way."""
        if unsubscribed and medium:
            def add(store: Store) -> None:
                row = store.fetchone("SELECT unsubscribed_media FROM reader_overrides WHERE repo = ? AND reader = ?",
                                     (repo, reader))
                media = ",".join(sorted({*(row[0].split(",") if row and row[0] else ()), medium}))
                store.execute(
                    "INSERT INTO reader_overrides (repo, reader, unsubscribed_media, updated_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (repo, reader) DO UPDATE SET unsubscribed_media = excluded.unsubscribed_media, "
                    "updated_at = excluded.updated_at", (repo, reader, media, _now()))
            self.store.atomic(add)
            return
        self.store.execute(
            "INSERT INTO reader_overrides (repo, reader, unsubscribed, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (repo, reader) DO UPDATE SET unsubscribed = excluded.unsubscribed, "
            + ("" if unsubscribed else "unsubscribed_media = '', ")
            + "updated_at = excluded.updated_at", (repo, reader, int(unsubscribed), _now()))

    def set_preferences(self, repo: str, reader: str, prefs: Preferences) -> None:
        """Store a reader's preferences (replacing the earlier ones)."""
        self.store.execute(
            "INSERT INTO reader_overrides (repo, reader, preferences, updated_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (repo, reader) DO UPDATE SET preferences = excluded.preferences, "
            "updated_at = excluded.updated_at", (repo, reader, json.dumps(prefs.shown()), _now()))


_CHOICE = "unsubscribed, preferences, updated_at, unsubscribed_media"


def _choice(unsubscribed: int, prefs: str, updated: str, media: str = "") -> Choice:
    return Choice(bool(unsubscribed), Preferences.model_validate_json(prefs or "{}"), updated,
                  tuple(m for m in (media or "").split(",") if m))
