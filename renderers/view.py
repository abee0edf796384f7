"""The reader-facing view of an edition, shared by every medium: its strings, entries, grouping, subject.

Untrusted text is cleaned and capped here once (:class:`EntryView`); each medium then only escapes it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta

from prdigest.connect.variants import Variant
from prdigest.kernel.factlines import fact_lines
from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.models import Edition, Entry, Verdict
from prdigest.kernel.vocabulary import Vocabulary
from renderers.escape import DEFAULT_LINK_HOSTS, clean, defanged, one_line, pr_url, truncate
from renderers.relation_lines import relation_lines
from renderers.shared import shared

# --- reader-facing strings: the catalogs' ``view.*`` (prdigest/kernel/catalogs/<language>.yaml) ----------

#: Longest text, in characters, any medium shows of one field: a 200 KB rationale must not reach a reader.
LIMITS = {"headline": 200, "title": 200, "author": 60, "rationale": 2000, "item": 500, "items": 10}


def strings(language: str) -> Section:
    """The shared reader-facing strings for ``language`` (``view.*``; English for a message it lacks)."""
    return messages(language, "view")


# --- the shared view ------------------------------------------------------------------------------


@dataclass(frozen=True)
class EntryView:
    """One entry as readers see it: untrusted text cleaned and capped, the link checked, still unescaped."""

    number: int
    url: str | None
    title: str
    author: str
    headline: str
    verdict: Verdict
    badge: str
    rationale: list[str]
    focus: list[str]
    followups: list[str]
    additions: int
    deletions: int
    files_changed: int
    subsystems: list[str]
    #: "Reverts #41234 (2026-W46, skim)", … (renderers/relation_lines.py: relation_lines); cleaned, unescaped.
    relations: tuple[str, ...] = ()
    #: The code facts, at most five lines then "+N more" (prdigest/kernel/factlines.py); `code` spans inside.
    facts: tuple[str, ...] = ()
    #: True when the entry asks something of a reader (its ``action[]``, not cleared by the editor): the entry is in
    #: "Action required".
    breaking: bool = False
    #: The entry's actions, one sentence each, for the Action required block.
    breaking_facts: tuple[str, ...] = ()
    #: What the drafter saw of the PR (``7 of 41 files, 3 clipped; …``), "" when not recorded (the archive shows it).
    coverage: str = ""

    @property
    def size(self) -> str:
        """``+12 / −3`` (a real minus sign)."""
        return f"+{self.additions:,} / \u2212{self.deletions:,}"

    @property
    def ref(self) -> str:
        """``#123 Title``, the label of the PR link."""
        return f"#{self.number} {self.title}"


def _items(values: list[str]) -> list[str]:
    items = [truncate(one_line(v), LIMITS["item"]) for v in values]
    items = [v for v in items if v]
    if len(items) > LIMITS["items"]:
        items = items[: LIMITS["items"] - 1] + ["…"]
    return items


def _paragraphs(text: str) -> list[str]:
    body = truncate(clean(text).strip(), LIMITS["rationale"])
    # A blank line separates paragraphs; single newlines are soft wraps (PR bodies are hard-wrapped).
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", body) if p.strip()]


def view(entry: Entry, language: str, link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS,
         vocabulary: Vocabulary | None = None, repo: str | None = None) -> EntryView:
    """The reader-facing view of ``entry``: every untrusted field cleaned, capped and given a fallback.

    Subsystems appear as the repo's ``vocabulary`` says (labels or names; names without one). URLs in prose
    stay links only when they are a PR, issue or commit of ``repo`` (the edition's). Made once per entry in a
    render step, however many variants and media show it (:mod:`renderers.shared`).
    """
    return shared("view", (entry, vocabulary), (language, link_hosts, repo),
                  lambda: _view(entry, language, link_hosts, vocabulary, repo))


def _view(entry: Entry, language: str, link_hosts: tuple[str, ...], vocabulary: Vocabulary | None,
          repo: str | None) -> EntryView:
    shown = (vocabulary or Vocabulary.open()).shown(entry.subsystems, language)
    ui = strings(language)
    entry = defanged(entry, link_hosts, repo)  # URLs off the link hosts: readable, never clickable
    title = truncate(one_line(entry.title), LIMITS["title"]) or ui["untitled"]
    headline = truncate(one_line(entry.headline), LIMITS["headline"]) or (
        title if title != ui["untitled"] else f"#{entry.number}")
    return EntryView(
        number=entry.number,
        url=pr_url(entry.url, entry.number, link_hosts),
        title=title,
        author=truncate(one_line(entry.author), LIMITS["author"]) or "ghost",
        headline=headline,
        verdict=entry.verdict,
        badge=entry.verdict.label(language),
        rationale=_paragraphs(entry.rationale),
        focus=_items(entry.focus),
        followups=_items(entry.followups),
        additions=entry.additions,
        deletions=entry.deletions,
        files_changed=entry.files_changed,
        subsystems=[s for s in (one_line(s) for s in shown) if s],
        relations=tuple(one_line(line) for line in relation_lines(entry.relations, language)),
        facts=tuple(fact_lines(entry.changes, language)),
        # The Action required block shows exactly the entry's actions (prdigest/kernel/actions.py).
        breaking=bool(entry.action),
        breaking_facts=tuple(one_line(a) for a in entry.action),
        coverage=entry.coverage.summary(language) if entry.coverage is not None else "",
    )


#: Most entries an "Action required" block lists; the others are counted (a week of removals stays readable).
ACTION_SHOWN = 20


@dataclass(frozen=True)
class Action:
    """A variant's "Action required" block: its first breaking entries, in its order, and how many there are."""

    entries: list[EntryView]
    total: int

    @property
    def more(self) -> int:
        return self.total - len(self.entries)

    def __bool__(self) -> bool:
        return bool(self.entries)


def action_required(entries: list[EntryView], shown: int = ACTION_SHOWN) -> Action:
    """The entries of a variant the reader must act on (breaking, mark kept by the editor), at most ``shown``."""
    marked = [e for e in entries if e.breaking]
    return Action(marked[:shown], len(marked))


@dataclass(frozen=True)
class Group:
    """The entries of one verdict, in the variant's order."""

    verdict: Verdict
    label: str
    entries: list[EntryView]


def read_first_order(entries: list[Entry], first: list[Entry]) -> list[Entry]:
    """``entries`` with the read-first ones ahead, best first, and the rest in their order: under each verdict
    the body then opens with what the numbered read-first list at its top names, in that list's order."""
    rank = {e.number: i for i, e in enumerate(first)}
    return sorted(entries, key=lambda e: rank.get(e.number, len(rank)))  # stable: the rest keep their order


def groups(entries: list[EntryView], language: str) -> list[Group]:
    """Entries grouped by verdict, most important first; empty groups left out."""
    order = sorted(Verdict, key=lambda v: -v.rank)
    return [Group(v, v.label(language), [e for e in entries if e.verdict is v])
            for v in order if any(e.verdict is v for e in entries)]


def counts(entries: list[Entry] | list[EntryView]) -> dict[Verdict, int]:
    """How many entries have each verdict (every verdict present, most important first)."""
    tally = Counter(e.verdict for e in entries)  # one pass: each entry's verdict read once
    return {v: tally[v] for v in sorted(Verdict, key=lambda v: -v.rank)}


def subject(edition: Edition, variant: Variant) -> str:
    """One-line subject naming repo, ISO week and deep-read count, at most 150 characters."""
    ui = strings(edition.language)  # one message: it falls back to English whole
    deep = counts(variant.entries)[Verdict.DEEP_READ]
    repo = truncate(one_line(edition.repo), 80)
    text = ui["subject"].format(repo=repo, week=edition.week, deep=deep, total=len(variant.entries))
    downstream = variant.filter.downstream
    if downstream and any(i.downstream == downstream and i.severity == "breaks"
                          for e in variant.entries for i in e.impact):
        # Something breaks the readers' own code: the subject says so before anything else.
        text = ui["subject_breaks"].format(downstream=truncate(one_line(downstream), 40)) + text
    return truncate(one_line(text), 150)


def window(edition: Edition) -> str:
    """The edition's dates, e.g. ``2026-11-16 至 2026-11-22`` (``until`` is exclusive)."""
    last = edition.until - timedelta(microseconds=1) if edition.until > edition.since else edition.until
    return strings(edition.language)["window"].format(since=edition.since.date().isoformat(),
                                                      until=last.date().isoformat())


def summary(edition: Edition, variant: Variant) -> str:
    """``本期 58 个 PR：值得精读 12 · 值得快速阅读 30 · 可略过 16`` (zero counts left out)."""
    # Counts, verdict labels and the line that joins them, all in one language.
    lang = catalog(edition.language).whole("view.summary", "view.total", "verdict").language
    ui = strings(lang)
    parts = [f"{v.label(lang)} {n}" for v, n in counts(variant.entries).items() if n]
    return ui["summary"].format(total=ui["total"].format(total=len(variant.entries)), counts=" · ".join(parts))


def meta(e: EntryView, language: str, subsystems: bool = True) -> str:
    """``@author · +12 / −3 · 4 个文件 · kernels, moe`` (subsystems optional: the email shows them above).

    The subsystems are as :func:`view` made them: the repo's labels or names.
    """
    parts = [f"@{e.author}", e.size]
    if e.files_changed:
        parts.append(strings(language)["files"].format(n=f"{e.files_changed:,}"))
    if subsystems and e.subsystems:
        parts.append(", ".join(e.subsystems))
    return " · ".join(parts)
