"""Connecting an edition to the ones before it: relations, stories, earlier follow-ups and the lede.

:func:`connect_edition` is the pipeline's ``connect`` step (after the draft edition is built, before review).
It reads the history and the follow-up items in the state store and writes nothing: the edition is recorded
(and its follow-ups tracked) only when it is published.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection, Sequence
from datetime import datetime
from typing import Any

from prdigest.connect import followups, readfirst, relations, stories
from prdigest.connect.lede import Complete, write_lede
from prdigest.connect.plans import Plans
from prdigest.connect.variants import draft_variants
from prdigest.kernel.models import (
    DraftEntry,
    EarlierFollowup,
    Edition,
    EditionId,
    Entry,
    PullRequest,
    Relation,
    Verdict,
)
from prdigest.kernel.storage import Store
from prdigest.kernel.superseded import without_superseded
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.kernel.window import Window
from prdigest.readers.file import Reader
from prdigest.state import history

log = logging.getLogger(__name__)

_TRACKING_REF = re.compile(r"#(\d+)\b")


def _window(repo: str, since: str | datetime, until: str | datetime) -> str:
    since = datetime.fromisoformat(since) if isinstance(since, str) else since
    until = datetime.fromisoformat(until) if isinstance(until, str) else until
    return EditionId(repo, since, until).window


def _in_chunks(values: Sequence[Any], size: int = 400) -> list[Sequence[Any]]:
    return [values[i:i + size] for i in range(0, len(values), size)]


def _known_past(store: Store, edition: Edition, numbers: set[int]) -> list[relations.Known]:
    if not numbers:
        return []
    past = history.past_entries(store, edition.repo, sorted(numbers), before=edition.since)
    return [relations.Known(p.entry.number, _window(p.edition.repo, p.edition.since, p.edition.until),
                            p.entry.title, p.entry.author, p.entry.merged_at, p.entry.verdict) for p in past]


def _numbers_by_title(store: Store, edition: Edition, titles: list[str]) -> set[int]:
    found: set[int] = set()
    for chunk in _in_chunks(sorted(set(titles))):
        rows = store.execute(f"SELECT number FROM history_entries WHERE repo = ? AND until <= ? AND title IN "
                             f"({', '.join('?' for _ in chunk)})",
                             (edition.repo, history.stamp(edition.since), *chunk)).fetchall()
        found |= {r[0] for r in rows}
    return found


def _earlier_parts(store: Store, edition: Edition, authors: list[str]) -> list[stories.SeriesPart]:
    parts: list[stories.SeriesPart] = []
    for chunk in _in_chunks(sorted(set(authors))):
        rows = store.execute(f"SELECT number, title, author, since, until FROM history_entries WHERE repo = ? "
                             f"AND until <= ? AND title LIKE '%/%' AND author IN ({', '.join('?' for _ in chunk)})",
                             (edition.repo, history.stamp(edition.since), *chunk)).fetchall()
        for number, title, author, since, until in rows:
            part = stories.series_part(number, title, author, _window(edition.repo, since, until))
            if part is not None:
                parts.append(part)
    return parts


def _relations(edition: Edition, mine: Sequence[PullRequest], store: Store
               ) -> tuple[dict[int, list[Relation]], list[relations.Known], list[stories.SeriesPart]]:
    """Each entry's relations to this edition and the history, the history's PRs they may name, and the earlier
    parts of this edition's ``[k/N]`` series."""
    history.ensure_schema(store)
    repo, here = edition.repo, edition.id.window
    numbers = {e.number for e in edition.entries}
    wanted = relations.candidate_numbers(mine, repo)
    wanted |= {int(n) for pr in mine for n in _TRACKING_REF.findall(f"{pr.title}\n{pr.body}")}
    quoted = [q for pr in mine for ns, q in [relations.revert_targets(pr, repo)] if q is not None and not ns]
    if quoted:
        wanted |= _numbers_by_title(store, edition, quoted)
    here_parts = [p for e in edition.entries
                  if (p := stories.series_part(e.number, e.title, e.author, here)) is not None]
    earlier_parts = _earlier_parts(store, edition, [p.author for p in here_parts]) if here_parts else []
    wanted |= {p.number for p in earlier_parts}
    known = _known_past(store, edition, wanted - numbers)
    links = stories.series_links(here_parts, earlier_parts)
    return relations.find_relations(edition, mine, known, links), known, earlier_parts


def known_relations(repo: str, window: Window, prs: Sequence[PullRequest], store: Store) -> dict[int, list[Relation]]:
    """The cheap reference pass run before drafting: each PR's relations to the other PRs of its edition and to
    the published history, from titles and bodies alone (no draft needed), handed to the drafter's prompt."""
    stubs = [Entry.from_draft(pr, [], DraftEntry(number=pr.number, headline=pr.title or f"PR #{pr.number}",
                                                  verdict=Verdict.SKIM, rationale="")) for pr in prs]
    edition = Edition(repo=repo, since=window.since, until=window.until, generated_at=window.until, entries=stubs)
    return _relations(edition, list(prs), store)[0]


def _with_origins(store: Store, edition: Edition, items: list[EarlierFollowup]) -> list[EarlierFollowup]:
    """``items`` with the subsystems and verdict of the published entry each came from (its number in its
    edition), so that each reader's variant shows the follow-ups of the entries it would have got."""
    if not items:
        return items
    past = history.past_entries(store, edition.repo, sorted({i.from_number for i in items}), before=edition.since)
    origin = {(p.entry.number, EditionId(p.edition.repo, p.edition.since, p.edition.until).window): p.entry
              for p in past}
    out = []
    for item in items:
        entry = origin.get((item.from_number, item.from_edition))
        out.append(item.model_copy(update={"subsystems": list(entry.subsystems), "verdict": entry.verdict})
                   if entry is not None else item)
    return out


def connect_edition(edition: Edition, prs: Sequence[PullRequest], store: Store, *, max_weeks: int = 6,
                    embedder: Callable[[], Any] | None = None, complete: Complete | None = None,
                    vocabulary: Vocabulary | None = None, readers: Sequence[Reader] = (),
                    plans: Plans | None = None, cleared: Collection[str] = ()) -> Edition:
    """``edition`` with each entry's relations (reverted PRs demoted), its stories, the earlier follow-ups
    (done, open, or proposed as done by the semantic match), its read-first ranking, its lede, and one
    variant per distinct filter of ``readers`` with its read-first and lede.

    ``embedder`` is called (once) only when open follow-ups need a semantic match; it returns an object with
    ``similarity(texts_a, texts_b) -> rows of scores``, or None. ``complete`` lets a model write the lede.
    ``plans``: the variants' plan is kept there for the run's render step. ``cleared``: the fact keys editors
    cleared from Action required (an upgrade said again on a later PR is made again without them too).
    """
    started = time.perf_counter()
    repo, here = edition.repo, edition.id.window
    numbers = {e.number for e in edition.entries}
    mine = [pr for pr in prs if pr.number in numbers]
    found, known, earlier_parts = _relations(edition, mine, store)
    entries = relations.demote_reverted(edition.entries, found, here, edition.language)
    entries = without_superseded(entries, mine, edition.language, cleared)  # an upgrade asked again later
    story_list = stories.find_stories(entries, mine, found, edition.language, here, earlier_parts,
                                      known=numbers | {k.number for k in known})

    items = followups.open_items(store, repo, edition.since, max_weeks)
    model = None
    if items and embedder is not None:
        unresolved = followups.resolve(items, mine, numbers, repo)
        if any(i.status == "open" for i in unresolved):
            model = embedder()
    texts = {e.number: [e.title, e.headline] for e in entries}
    earlier = _with_origins(store, edition, followups.resolve(items, mine, numbers, repo, model, texts))

    connected = edition.model_copy(update={"entries": entries, "stories": story_list, "earlier_followups": earlier})
    connected = connected.model_copy(update={"ranking": readfirst.edition_ranking(connected, mine, vocabulary,
                                                                                   complete)})
    connected = connected.model_copy(update={"lede": write_lede(connected, complete, vocabulary)})
    if readers:
        connected = connected.model_copy(update={"variants": draft_variants(connected, list(readers), vocabulary,
                                                                            complete, plans)})
    log.info("%s: %d relations, %d stories, %d earlier follow-ups (%d done) in %.2fs", edition.name,
             sum(len(r) for r in found.values()), len(story_list), len(earlier),
             sum(1 for i in earlier if i.status == "done"), time.perf_counter() - started)
    return connected
