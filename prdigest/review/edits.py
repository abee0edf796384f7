"""Edits that stick: an editor's edit of an entry is kept per (repo, PR) and applied again to every later draft
of the same PR (the week run again with ``--resend-edition``, a new prompt version, another model).

Three tables of the state store (component ``entry-edits``):

- ``draft_sources``: for each (repo, PR), the hash of the model's latest draft and of the PR content it was
  drafted from, written by every draft step (:func:`note_drafts`), and ``edition_sources`` the same per edition
  (the draft its editor was shown); each row sealed like the edits, a row that does not check not used;
- ``entry_edits``: for each (repo, PR), the fields the editor changed (headline, verdict, rationale, focus
  points, follow-ups, a place in read-first), the hash of the draft they replaced and of the PR content then
  (:func:`remember`, called with the review).

:func:`apply_edits` puts the kept fields over a new draft. When the PR itself changed since the edit (new
commits, a new description: its content hash differs), the edit is still applied, and the entry is marked for
the editor: the edit may no longer hold.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from prdigest.kernel.models import Edition, Entry, PullRequest, Verdict
from prdigest.kernel.rowseal import RowSealer
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import hash_bytes

log = logging.getLogger(__name__)

COMPONENT = "entry-edits"
MIGRATIONS = [
    """
    CREATE TABLE draft_sources (
        repo TEXT NOT NULL, number INTEGER NOT NULL, draft_hash TEXT NOT NULL, pr_hash TEXT NOT NULL,
        drafted_at TEXT NOT NULL, PRIMARY KEY (repo, number));
    CREATE TABLE entry_edits (
        repo TEXT NOT NULL, number INTEGER NOT NULL, draft_hash TEXT NOT NULL, pr_hash TEXT NOT NULL,
        fields TEXT NOT NULL, editor TEXT, edited_at TEXT NOT NULL, edition TEXT NOT NULL,
        PRIMARY KEY (repo, number))
    """,
    # Each kept edit sealed (prdigest.kernel.rowseal): one written into the table by hand is never applied.
    "ALTER TABLE entry_edits ADD COLUMN seal TEXT",
    # The draft each edition showed its editor, per PR: an edit binds to that draft, not to the PR's latest one
    # (another week's run may have drafted the PR again meanwhile).
    """CREATE TABLE edition_sources (
        edition TEXT NOT NULL, number INTEGER NOT NULL, draft_hash TEXT NOT NULL, pr_hash TEXT NOT NULL,
        drafted_at TEXT NOT NULL, PRIMARY KEY (edition, number))""",
    # The draft and PR each edit binds to, sealed like the edits: a row rewritten by hand would make an edit look
    # made for the PR's new content, and the edit would then reach readers unmarked.
    """ALTER TABLE draft_sources ADD COLUMN seal TEXT;
    ALTER TABLE edition_sources ADD COLUMN seal TEXT""",
]

#: A kept edit's PR hash when the draft source it was bound to did not check its seal: what the PR was when the
#: editor edited it is not known, so every later draft marks the edit for the editor.
UNVERIFIED = "unverified"

#: The entry fields an edit may change, as stored.
FIELDS = ("headline", "verdict", "rationale", "focus", "followups")


def _hash(value: Any) -> str:
    blob = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(hash_bytes(blob)).hexdigest()


def pr_hash(pr: PullRequest) -> str:
    """The hash of what a PR is: title, description, labels and files with their sizes and hunks (new commits
    change the files; a new description changes the body). Comments and timestamps are left out."""
    return _hash({"title": pr.title, "body": pr.body, "labels": sorted(pr.labels),
                  "files": [[f.path, f.previous_path, f.additions, f.deletions, f.status, f.patch] for f in pr.files],
                  "additions": pr.additions, "deletions": pr.deletions})


def draft_hash(entry: Entry) -> str:
    """The hash of an entry's drafted text: the fields an editor may change."""
    return _hash({name: _value(entry, name) for name in FIELDS})


def _value(entry: Entry, name: str) -> Any:
    value = getattr(entry, name)
    return value.value if isinstance(value, Verdict) else list(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class KeptEdit:
    """One editor's edit of one PR's entry, as kept."""

    repo: str
    number: int
    draft_hash: str
    pr_hash: str
    fields: dict[str, Any]
    editor: str | None
    edited_at: str
    edition: str
    #: Whether its seal checked (True when the store was opened without a key: a dry run checks nothing).
    sealed: bool = True

    @property
    def first(self) -> int | None:
        """The entry's place in the editor's read-first order (0 = first), if the editor gave one."""
        value = self.fields.get("first")
        return int(value) if isinstance(value, int) else None


class EditStore:
    """The two tables over the run's state store; with ``seal`` (the run's record key) each kept edit is sealed
    when stored and checked when read."""

    def __init__(self, store: Store, seal: RowSealer | None = None) -> None:
        store.migrate(COMPONENT, MIGRATIONS)
        self._store = store
        self._seal = seal

    def note_drafts(self, repo: str, drafted: Iterable[tuple[PullRequest, Entry]], edition: str | None = None) -> None:
        """Record, for each PR, the hash of its new draft (before any edit is applied) and of its content; with
        ``edition`` (its key), also as the draft of that edition."""
        now = datetime.now(timezone.utc).isoformat()
        rows = [(repo.lower(), pr.number, draft_hash(entry), pr_hash(pr), now) for pr, entry in drafted]
        if rows:
            self._store.executemany(
                "INSERT INTO draft_sources (repo, number, draft_hash, pr_hash, drafted_at, seal) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (repo, number) DO UPDATE SET draft_hash = excluded.draft_hash, "
                "pr_hash = excluded.pr_hash, drafted_at = excluded.drafted_at, seal = excluded.seal",
                [(*row, self._row_seal("draft_sources", row)) for row in rows])
        if rows and edition is not None:
            shown = [(edition, number, dh, ph, at) for _, number, dh, ph, at in rows]
            self._store.executemany(
                "INSERT INTO edition_sources (edition, number, draft_hash, pr_hash, drafted_at, seal) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (edition, number) DO UPDATE SET "
                "draft_hash = excluded.draft_hash, pr_hash = excluded.pr_hash, drafted_at = excluded.drafted_at, "
                "seal = excluded.seal",
                [(*row, self._row_seal("edition_sources", row)) for row in shown])

    def _row_seal(self, table: str, values: tuple[object, ...]) -> str | None:
        return self._seal.seal_row(table, values) if self._seal is not None else None

    def _checked(self, table: str, row: Sequence[Any] | None, key: tuple[object, ...], what: str
                 ) -> tuple[str, str] | None:
        """(draft hash, PR hash) of a source row read as ``(draft_hash, pr_hash, drafted_at, seal)``; None when
        there is none; ``("", UNVERIFIED)`` when its seal does not check (the row is not used, and said)."""
        if not row:
            return None
        dh, ph, at, seal = row
        if self._seal is not None and not self._seal.accepts_row(seal, table, (*key, dh, ph, at)):
            log.warning("%s: the draft it was made from is kept in the state store's %s without a seal this "
                        "deployment's record key checks (written outside pr-digest, or before these rows were "
                        "sealed): not used; an edit of it is marked for the editor", what, table)
            return "", UNVERIFIED
        return dh, ph

    def shown(self, edition: str, number: int) -> tuple[str, str] | None:
        """(draft hash, PR hash) of the PR's draft in ``edition`` (its key), or None (drafted before this was kept)."""
        row = self._store.fetchone("SELECT draft_hash, pr_hash, drafted_at, seal FROM edition_sources "
                                   "WHERE edition = ? AND number = ?", (edition, number))
        return self._checked("edition_sources", row, (edition, number), f"PR #{number} in {edition}")

    def source(self, repo: str, number: int) -> tuple[str, str] | None:
        """(draft hash, PR hash) of the PR's latest draft, or None."""
        row = self._store.fetchone("SELECT draft_hash, pr_hash, drafted_at, seal FROM draft_sources "
                                   "WHERE repo = ? AND number = ?", (repo.lower(), number))
        return self._checked("draft_sources", row, (repo.lower(), number), f"PR #{number} of {repo}")

    def get(self, repo: str, numbers: Sequence[int]) -> dict[int, KeptEdit]:
        """The kept edits of these PRs."""
        found: dict[int, KeptEdit] = {}
        numbers = list(numbers)
        for start in range(0, len(numbers), 400):
            chunk = numbers[start:start + 400]
            rows = self._store.execute(
                "SELECT number, draft_hash, pr_hash, fields, editor, edited_at, edition, seal FROM entry_edits "
                f"WHERE repo = ? AND number IN ({', '.join('?' for _ in chunk)})", (repo.lower(), *chunk)).fetchall()
            for number, dh, ph, fields, editor, at, edition, seal in rows:
                sealed = self._seal is None or self._seal.accepts_row(
                    seal, "entry_edits", _sealed_values(repo, int(number), dh, ph, fields, editor, at, edition))
                found[int(number)] = KeptEdit(repo, int(number), dh, ph, json.loads(fields), editor, at, edition,
                                              sealed)
        return found

    def put(self, edit: KeptEdit) -> None:
        """Keep ``edit`` (replacing the PR's earlier one), sealed when the store has a key."""
        fields = json.dumps(edit.fields, ensure_ascii=False, sort_keys=True)
        values = _sealed_values(edit.repo, edit.number, edit.draft_hash, edit.pr_hash, fields, edit.editor,
                                edit.edited_at, edit.edition)
        seal = self._seal.seal_row("entry_edits", values) if self._seal is not None else None
        self._store.execute(
            "INSERT INTO entry_edits (repo, number, draft_hash, pr_hash, fields, editor, edited_at, edition, seal) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, number) DO UPDATE SET "
            "draft_hash = excluded.draft_hash, pr_hash = excluded.pr_hash, fields = excluded.fields, "
            "editor = excluded.editor, edited_at = excluded.edited_at, edition = excluded.edition, "
            "seal = excluded.seal",
            (edit.repo.lower(), edit.number, edit.draft_hash, edit.pr_hash, fields, edit.editor, edit.edited_at,
             edit.edition, seal))

    def count(self, repo: str | None = None) -> int:
        """How many edits are kept (of ``repo``, or of every repo)."""
        row = (self._store.fetchone("SELECT COUNT(*) FROM entry_edits WHERE repo = ?", (repo.lower(),)) if repo
               else self._store.fetchone("SELECT COUNT(*) FROM entry_edits"))
        return int(row[0]) if row else 0


def remember(store: Store, draft: Edition, reviewed: Edition, first: Sequence[int] = (),
             seal: RowSealer | None = None) -> list[int]:
    """Keep what the editor changed in ``reviewed`` against ``draft`` (the edition the editor was shown), and
    the read-first order ``first`` the editor gave; returns the PR numbers whose edit was kept or updated.

    An entry shown with an earlier edit already applied keeps that edit's fields and gains the new changes (an
    earlier edit whose seal does not check is not carried over). ``seal``: the run's record key.
    """
    edits = EditStore(store, seal)
    shown = {e.number: e for e in draft.entries}
    numbers = [e.number for e in reviewed.entries]
    kept = edits.get(reviewed.repo, numbers)
    place = {n: i for i, n in enumerate(first)}
    now = (reviewed.approved_at or datetime.now(timezone.utc)).isoformat()
    changed: list[int] = []
    for entry in reviewed.entries:
        before = shown.get(entry.number)
        if before is None or not entry.published:
            continue
        fields = {name: _value(entry, name) for name in FIELDS if _value(entry, name) != _value(before, name)}
        if entry.number in place:
            fields["first"] = place[entry.number]
        if not fields:
            continue
        old = kept.get(entry.number)
        # The draft this edition showed, else (an edition drafted before that was kept) the PR's latest.
        source = edits.shown(draft.key, entry.number) or edits.source(reviewed.repo, entry.number)
        dh, ph = source if source else (draft_hash(before), "")
        dh = dh or draft_hash(before)  # a source row that did not check gives no draft hash
        merged = {**(old.fields if old and old.sealed else {}), **fields}
        edits.put(KeptEdit(reviewed.repo, entry.number, dh, ph, merged, reviewed.approver, now, reviewed.key))
        changed.append(entry.number)
    return changed


def _sealed_values(repo: str, number: int, dh: str, ph: str, fields: str, editor: str | None, at: str,
                   edition: str) -> tuple[object, ...]:
    """A kept edit's values as stored, in the order its seal covers them."""
    return (repo.lower(), number, dh, ph, fields, editor, at, edition)


def _marked(entry: Entry, edit: KeptEdit, changed: bool) -> list[str]:
    who = f" by {edit.editor}" if edit.editor else ""
    day = edit.edited_at[:10]
    note = f"editor's edit{who} of {day} applied again ({', '.join(k for k in edit.fields if k != 'first')})"
    if edit.pr_hash == UNVERIFIED:
        return [f"{note}, but what the PR was when it was edited is not known (its row in the state store did not "
                "check its seal): check the edit still holds"]
    if changed:
        return [f"{note}, but the PR changed since (new commits or a new description): check the edit still holds"]
    return []


def apply_edits(store: Store, repo: str, drafted: Sequence[tuple[PullRequest, Entry]],
                seal: RowSealer | None = None, edition: str | None = None) -> list[Entry]:
    """The entries with every kept edit of their PR applied; an edit made when the PR was different is applied
    and marked for the editor. Records each new draft's hashes first (:meth:`EditStore.note_drafts`). A kept
    edit whose seal does not check (``seal``: the run's record key) is not applied: the entry keeps its draft
    and is marked for the editor, so nothing written into the table outside pr-digest reaches a reader. ``edition``:
    the key of the edition being drafted, so that an edit made in its review binds to these drafts."""
    edits = EditStore(store, seal)
    edits.note_drafts(repo, drafted, edition)
    kept = edits.get(repo, [pr.number for pr, _ in drafted])
    out: list[Entry] = []
    for pr, entry in drafted:
        edit = kept.get(pr.number)
        if edit is None:
            out.append(entry)
            continue
        if not edit.sealed:
            out.append(entry.model_copy(update={"needs_editing": True, "warnings": [*entry.warnings, (
                f"a kept edit of PR #{pr.number} in the state store is not sealed with this deployment's record key "
                "(written outside pr-digest, or by a run without the key): not applied; edit the entry again "
                "if the change is wanted")]}))
            continue
        update: dict[str, Any] = {}
        for name in FIELDS:
            if name in edit.fields:
                value = edit.fields[name]
                update[name] = Verdict(value) if name == "verdict" else value
        changed = bool(edit.pr_hash) and edit.pr_hash != pr_hash(pr)
        warnings = _marked(entry, edit, changed)
        if warnings:
            update["warnings"] = [*entry.warnings, *warnings]
        # The editor's text replaces the model's: its grounding report was about the model's words.
        if {"headline", "rationale", "focus", "followups"} & set(edit.fields):
            update["grounding"] = []
            update["warnings"] = [w for w in update.get("warnings", entry.warnings)
                                  if not w.startswith("cites names not found")]
        out.append(entry.model_copy(update=update))
    return out


def apply_first(store: Store, edition: Edition, seal: RowSealer | None = None) -> Edition:
    """The edition's read-first ranking with the PRs an editor put first at its head, in the editor's order
    (from kept edits whose seal checks)."""
    kept = EditStore(store, seal).get(edition.repo, [e.number for e in edition.entries])
    first = sorted((e.first, n) for n, e in kept.items() if e.first is not None and e.sealed)
    if not first:
        return edition
    head = [n for _, n in first]
    ranking = head + [n for n in edition.ranking if n not in head]
    if ranking == edition.ranking:
        return edition
    # The drafted ledes named the old first reads: each variant's is written again from the new order.
    return edition.model_copy(update={"ranking": ranking,
                                      "variants": [v.model_copy(update={"lede": ""}) for v in edition.variants]})
