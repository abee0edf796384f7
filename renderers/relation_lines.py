"""What connects an edition to others, as readers see it in every medium: relation lines, the lede, stories
and earlier follow-ups. Text is cleaned and capped here, still unescaped: each medium escapes it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from prdigest.connect.relations import relation_line, relation_lines  # noqa: F401  (the media's entry lines)
from prdigest.connect.variants import Filter, Variant
from prdigest.kernel.i18n import Section, messages
from prdigest.kernel.links import DEFAULT_LINK_HOSTS, defang
from prdigest.kernel.models import Edition, Entry
from renderers.escape import one_line as _one_line
from renderers.escape import pr_url, truncate
from renderers.shared import latest

SHOWN_DONE = 10
SHOWN_OPEN = 3
LEDE_MAX = 800


def words(language: str) -> Section:
    """The connection words for ``language`` (the catalog's ``connections.*``)."""
    return messages(language, "connections")


@dataclass(frozen=True)
class StoryView:
    """A story as shown: its title and the variant's entries in it (number, headline)."""

    title: str
    entries: list[tuple[int, str]]


@dataclass(frozen=True)
class FirstView:
    """One read-first entry as shown: its number, headline (cleaned, unescaped) and checked PR link."""

    number: int
    headline: str
    url: str | None


@dataclass(frozen=True)
class Connections:
    """The edition-level connections for one variant: its lede and read-first come first."""

    lede: str = ""
    read_first: list[FirstView] = field(default_factory=list)
    stories: list[StoryView] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    open_count: int = 0
    open: list[str] = field(default_factory=list)

    @property
    def any(self) -> bool:
        return bool(self.lede or self.read_first or self.stories or self.done or self.open_count)


def variant_connections(edition: Edition, variant: Variant,
                        link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> "Connections":
    """A reader variant's connections (its lede, read-first, stories and follow-ups): made once per variant in a
    render step, whichever media show it, and kept only until the next variant's are made
    (:func:`renderers.shared.latest`; the block is frozen)."""
    return latest("variant-connections", (edition, variant), (link_hosts,), lambda: connections(
        edition, variant.entries, link_hosts, lede=variant.lede or None, first=variant.read_first,
        variant_filter=variant.filter))


def connections(edition: Edition, entries: Sequence[Entry], link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, *,
                lede: str | None = None, first: Sequence[Entry] = (),
                variant_filter: Filter | None = None) -> Connections:
    """The lede (``lede``: a variant's own, else the edition's), the read-first entries (``first``), the stories
    with the ``entries`` shown (a variant's, or the edition's published) in them, and the earlier follow-ups
    (done ones listed, open ones counted with a few examples): a short section. Drafted text (lede, titles,
    follow-ups) has its URLs defanged unless they are the repo's own PRs, issues or commits, as in the entries.

    ``variant_filter``: a reader variant's filter: only the follow-ups of the entries it selects are listed and
    counted (:meth:`Filter.shows_followup`); None (the archive) lists the edition's."""
    w = words(edition.language)

    def one_line(text: str) -> str:
        return defang(_one_line(text), link_hosts, edition.repo)

    read_first = [FirstView(e.number, truncate(one_line(e.headline), 160) or f"#{e.number}",
                            pr_url(e.url, e.number, link_hosts)) for e in first]
    # Only the entries some story holds need their headline (a variant of 300 entries, a story of three).
    in_stories = {n for s in edition.stories for n in s.numbers}
    headlines = {e.number: truncate(one_line(e.headline), 120) or f"#{e.number}" for e in entries
                 if e.number in in_stories}
    stories = []
    for s in edition.stories:
        shown = [(n, headlines[n]) for n in s.numbers if n in headlines]
        if shown:
            stories.append(StoryView(truncate(one_line(s.title), 200), shown))
    numbers = {e.number for e in entries}
    items = [i for i in edition.earlier_followups
             if variant_filter is None or variant_filter.shows_followup(i, numbers)]
    done = [w["done"].format(n=i.from_number, ed=one_line(i.from_edition), text=truncate(one_line(i.text), 200),
                             by=i.by_number) for i in items if i.status == "done"]
    still = [i for i in items if i.status == "open"]
    opened = [w["open_item"].format(n=i.from_number, ed=one_line(i.from_edition), text=truncate(one_line(i.text), 160))
              for i in still[:SHOWN_OPEN]]
    if len(done) > SHOWN_DONE:
        done = done[: SHOWN_DONE - 1] + ["…"]
    text = edition.lede if lede is None else lede
    return Connections(lede=truncate(one_line(text), LEDE_MAX), read_first=read_first, stories=stories, done=done,
                       open_count=len(still), open=opened)
