"""Earlier follow-ups tracked across editions, in the state store.

Every published entry's follow-ups become tracked items (:func:`track`, at publication). A later edition
lists the items still open (:func:`earlier_followups`): an item is **done** when a PR of this edition
references the original PR (``#N`` in its title or body; the number is the item's, so no text can forge
another) and **open** otherwise. A semantic match (:mod:`prdigest.connect.embedding`, optional) only *proposes* a PR
as having done it (``proposed_by``); the editor confirms it in the review. Open items age out after
``followup_weeks`` (a setting) and are then marked ``expired``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from prdigest.connect.relations import revert_targets
from prdigest.kernel.models import EarlierFollowup, Edition, EditionId, PullRequest, utc
from prdigest.kernel.storage import Store

log = logging.getLogger(__name__)

COMPONENT = "followups"

#: Append only. Portable SQL: the same statements run on SQLite and PostgreSQL.
MIGRATIONS: list[str] = [
    """
    CREATE TABLE followup_items (
        repo TEXT NOT NULL,
        from_since TEXT NOT NULL,
        from_until TEXT NOT NULL,
        from_number INTEGER NOT NULL,
        position INTEGER NOT NULL,
        from_edition TEXT NOT NULL,
        text TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open',
        by_number INTEGER,
        by_edition TEXT,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (repo, from_since, from_until, from_number, position)
    );
    CREATE INDEX followup_items_open ON followup_items (repo, status, from_until)
    """,
]

#: Cosine similarity above which the semantic match proposes a PR (all-MiniLM-L6-v2; paraphrases score
#: 0.6–0.9, unrelated engineering sentences 0.1–0.4).
PROPOSE_AT = 0.6


def ensure_schema(store: Store) -> None:
    """Create or upgrade the follow-up table."""
    store.migrate(COMPONENT, MIGRATIONS)


def _stamp(dt: datetime) -> str:
    return utc(dt).isoformat(timespec="microseconds")


def track(store: Store, edition: Edition, *, max_weeks: int = 6, now: datetime | None = None) -> int:
    """Record ``edition``'s published follow-ups as open items, close the items its ``earlier_followups`` mark
    done, and expire open items older than ``max_weeks``. Idempotent (publishing again changes nothing).
    Returns how many items the edition added or refreshed."""
    ensure_schema(store)
    here = EditionId(edition.repo, edition.since, edition.until)
    stamp = _stamp(now or datetime.now(timezone.utc))
    key = (edition.repo, _stamp(edition.since), _stamp(edition.until))
    rows = [(*key, e.number, i, here.window, text, stamp)
            for e in edition.published for i, text in enumerate(e.followups)]

    def write(tx: Store) -> None:
        # Follow-ups the editor removed on a second publication disappear with their entry.
        tx.execute("DELETE FROM followup_items WHERE repo = ? AND from_since = ? AND from_until = ? "
                   "AND status = 'open'", key)
        if rows:
            tx.executemany(
                "INSERT INTO followup_items (repo, from_since, from_until, from_number, position, from_edition, "
                "text, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (repo, from_since, from_until, "
                "from_number, position) DO UPDATE SET text = excluded.text, updated_at = excluded.updated_at",
                rows)
        for item in edition.earlier_followups:
            if item.status == "done" and item.by_number is not None:
                tx.execute("UPDATE followup_items SET status = 'done', by_number = ?, by_edition = ?, updated_at = ? "
                           "WHERE repo = ? AND from_number = ? AND from_edition = ? AND text = ? AND status = 'open'",
                           (item.by_number, here.window, stamp, edition.repo, item.from_number, item.from_edition,
                            item.text))
        cutoff = _stamp(edition.since - _weeks(max_weeks))
        tx.execute("UPDATE followup_items SET status = 'expired', updated_at = ? WHERE repo = ? AND status = 'open' "
                   "AND from_until < ?", (stamp, edition.repo, cutoff))

    store.atomic(write)
    return len(rows)


def _weeks(n: int) -> timedelta:
    return timedelta(weeks=n)


def open_items(store: Store, repo: str, since: datetime, max_weeks: int) -> list[EarlierFollowup]:
    """Items still open from editions that ended at or before ``since`` and not older than ``max_weeks``,
    oldest edition first."""
    ensure_schema(store)
    rows = store.execute(
        "SELECT from_number, from_edition, text FROM followup_items WHERE repo = ? AND status = 'open' "
        "AND from_until <= ? AND from_until >= ? ORDER BY from_until, from_number, position",
        (repo, _stamp(since), _stamp(since - _weeks(max_weeks)))).fetchall()
    return [EarlierFollowup(from_number=r[0], from_edition=r[1], text=r[2]) for r in rows]


_REFERENCE = re.compile(r"(?<![\w/])#(\d+)\b|/pull/(\d+)\b")
#: Most earlier follow-ups one PR is proposed for (its best matches): a proposal asks the editor to look.
PROPOSALS_PER_PR = 3


def _referenced(pr: PullRequest, repo: str) -> set[int]:
    """The PR numbers ``pr``'s title and body reference (``#N`` or a pull URL), except those it reverts: a
    revert undoes a PR, it does none of its follow-ups."""
    found = {int(a or b) for a, b in _REFERENCE.findall(f"{pr.title}\n{pr.body}")}
    return found - set(revert_targets(pr, repo)[0])


def resolve(items: Sequence[EarlierFollowup], prs: Sequence[PullRequest], numbers: set[int], repo: str = "",
            embedder: Any = None, texts: dict[int, list[str]] | None = None) -> list[EarlierFollowup]:
    """``items`` with ``status``/``by_number`` set where a PR of this edition (in ``numbers``) references the
    original PR, and ``proposed_by`` where the embedder finds a close match among the other PRs' ``texts``
    (number → its title, its headline). Explicit references decide; a proposal changes no status."""
    by_ref: dict[int, int] = {}
    for pr in sorted((pr for pr in prs if pr.number in numbers), key=lambda pr: pr.number):
        for n in _referenced(pr, repo):
            if n != pr.number:
                by_ref.setdefault(n, pr.number)
    out = [i.model_copy(update={"status": "done", "by_number": by_ref[i.from_number]})
           if i.from_number in by_ref else i for i in items]
    still = [k for k, i in enumerate(out) if i.status == "open"]
    if embedder is None or not still or not texts:
        return out
    pairs = list(dict.fromkeys((n, " ".join(t.split())) for n in sorted(texts) for t in texts[n] if t.strip()))
    wanted = list(dict.fromkeys(out[k].text for k in still))  # the same follow-up text is embedded once
    rows = dict(zip(wanted, embedder.similarity(wanted, [t for _, t in pairs])))
    best: list[tuple[float, int, int]] = []  # (score, item index, PR number)
    for k in still:
        row = rows[out[k].text]
        j = max(range(len(pairs)), key=lambda j: row[j])
        if row[j] >= PROPOSE_AT and pairs[j][0] != out[k].from_number:
            best.append((row[j], k, pairs[j][0]))
    per_pr: dict[int, int] = {}
    for _score, k, number in sorted(best, reverse=True):
        if per_pr.get(number, 0) < PROPOSALS_PER_PR:
            per_pr[number] = per_pr.get(number, 0) + 1
            out[k] = out[k].model_copy(update={"proposed_by": number})
    return out


def confirm(items: Sequence[EarlierFollowup], positions: Sequence[int]) -> list[EarlierFollowup]:
    """The editor's confirmation: the proposals at ``positions`` (1-based) become done by the proposed PR."""
    chosen = set(positions)
    return [i.model_copy(update={"status": "done", "by_number": i.proposed_by, "proposed_by": None})
            if k in chosen and i.status == "open" and i.proposed_by is not None else i
            for k, i in enumerate(items, start=1)]
