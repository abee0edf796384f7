"""The lede: two to four sentences that open an edition, in its language.

Offline, it is written from the first reads (prdigest/connect/readfirst.py) and the busiest subsystems. With a model
(``--drafter openai``), the model writes it from the entries under the same grounding rule as a draft: it may
cite only PR numbers (``#N``) and ``@names`` of this edition, in two to four sentences; a lede that breaks the rule is
rejected and the offline lede is used, with the reason logged. The editor may rewrite it in the review.
Each reader variant has its own lede, written the same way from that variant's entries only and citing only
them (:func:`variant_lede`).
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from prdigest.kernel.hostile import hostile_span
from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.links import NAME, all_urls, allowed_parts
from prdigest.kernel.models import Edition, Entry, EntryStatus, Verdict
from prdigest.kernel.prompts import load_prompt
from prdigest.kernel.surrogates import scrub
from prdigest.kernel.vocabulary import Vocabulary

log = logging.getLogger(__name__)

MAX_CHARS = 700
_CITED = re.compile(r"(?<![\w&])#(\d+)\b")
_NAMED = re.compile(r"(?<![\w.])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
#: A PR's or issue's page (any sub-page) as :func:`prdigest.kernel.links.allowed_parts` resolves it.
_PAGE = re.compile(rf"^/(?P<repo>{NAME}/{NAME})/(?:pull|issues)/(?P<n>[1-9][0-9]{{0,9}})(?:/[\w./-]*)?$")
#: A sentence ends at Chinese end punctuation, or at Latin end punctuation before a space ("3.0" does not end one).
_SENTENCE_END = re.compile(r"(?<=[。！？])\s*|(?<=[.!?][”\"’)）])\s+|(?<=[.!?])\s+")

def _opening(words: Section, n: int, d: int, mine: int | None) -> str:
    """The opening sentence: how many PRs (and how many reach the reader), how many worth a deep read; each
    case its own message, so that every language can make its nouns and verbs agree."""
    of = n if mine is None else mine
    case = ("one_deep" if d else "one_skim") if of == 1 else "none" if d == 0 else "all" if d == of else "some"
    return words[f"{'count' if mine is None else 'mine'}_{case}"].format(n=n, m=of, d=d, of=of)


def _live(edition: Edition) -> list[Entry]:
    return [e for e in edition.entries if e.status is not EntryStatus.REJECTED]


@dataclass(frozen=True)
class LedeBasis:
    """What every variant's lede of one plan reads of the edition (its live entries and their numbers, and the
    numbers of the entries the plan selects from), read once for all of them instead of once per variant."""

    live: list[Entry]
    live_numbers: frozenset[int]
    everything_numbers: frozenset[int]

    @classmethod
    def of(cls, edition: Edition, everything: list[Entry]) -> "LedeBasis":
        live = _live(edition)
        return cls(live, frozenset(e.number for e in live), frozenset(e.number for e in everything))


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split()).rstrip("。.;；:：")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first(entries: list[Entry], ranking: list[int]) -> list[Entry]:
    """The entries to name first: in the edition's ranking order, else the deep reads, largest first."""
    mine = {e.number: e for e in entries}
    ranked = [mine[n] for n in ranking if n in mine]
    if ranked:
        return ranked
    return sorted((e for e in entries if e.verdict is Verdict.DEEP_READ),
                  key=lambda e: (-(e.additions + e.deletions), e.number))


def offline_lede(edition: Edition, vocabulary: Vocabulary | None = None, entries: list[Entry] | None = None,
                 first: list[Entry] | None = None, *, basis: LedeBasis | None = None) -> str:
    """The lede from the first reads (the ranking's two best), the busiest subsystems and the reverts.

    ``entries`` narrows it to one variant's entries (default: every live entry of the edition), and
    ``first`` gives that variant's read-first (default: the edition's ranking over ``entries``); ``basis``:
    the edition's live entries, read once for a plan's variants.
    """
    # Sentences put together from many messages: all in the edition's language, or all in English.
    language = catalog(edition.language).whole("lede").language
    words = messages(language, "lede")
    everything = _live(edition) if basis is None else basis.live
    live_numbers = {e.number for e in everything} if basis is None else basis.live_numbers
    narrow = entries is not None and {e.number for e in entries} != live_numbers
    entries = everything if entries is None else entries
    if not entries:
        return ""
    deep = sum(1 for e in entries if e.verdict is Verdict.DEEP_READ)
    mine = len(entries) if narrow else None
    sentences = [_opening(words, len(everything), deep, mine)]
    first = _first(entries, edition.ranking) if first is None else first
    if first:
        items = [words["item"].format(n=e.number, headline=_short(e.headline)) for e in first[:2]]
        sentences.append(words["top"].format(items=words["join"].join(items)))
    busy = Counter(s for e in entries for s in e.subsystems).most_common(3)
    if busy:
        names = (vocabulary or Vocabulary.open()).shown([n for n, _ in busy], language)
        areas = [words["area"].format(name=shown, n=n) for shown, (_, n) in zip(names, busy)]
        sentences.append(words["busy"].format(areas=words["areas"].join(areas)))
    reverts = sum(1 for e in entries if any(r.kind == "reverts" for r in e.relations))
    done = 0 if narrow else sum(1 for i in edition.earlier_followups if i.status == "done")
    if reverts and len(sentences) < 4:
        sentences.append(words["reverts"].format(n=reverts))
    if done and len(sentences) < 4:
        sentences.append(words["done"].format(n=done))
    if len(sentences) < 2:  # one entry and no subsystem: still two sentences, as every lede has
        sentences.append(words["top"].format(items=words["item"].format(n=entries[0].number,
                                                                        headline=_short(entries[0].headline))))
    return words["sentences"].join(sentences)


def variant_lede(edition: Edition, entries: list[Entry], first: list[Entry], vocabulary: Vocabulary | None = None,
                 *, drafted: str = "", everything: list[Entry] | None = None, basis: LedeBasis | None = None) -> str:
    """One variant's lede: the edition's own when the variant holds every entry (the editor may have
    rewritten it), else ``drafted`` (the model's, from the connect step) while it is still grounded in the
    variant's entries, else the offline lede of the variant. ``basis``: :meth:`LedeBasis.of` the edition and
    ``everything``, made once for a plan's variants."""
    if everything is not None and edition.lede:
        numbers = {e.number for e in entries}
        if numbers == ({e.number for e in everything} if basis is None else basis.everything_numbers):
            return edition.lede
    if drafted and not check_lede(drafted, edition, entries):
        return drafted
    return offline_lede(edition, vocabulary, entries, first, basis=basis)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (Chinese or Latin punctuation)."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def check_lede(text: str, edition: Edition, entries: list[Entry] | None = None) -> list[str]:
    """Why ``text`` cannot open ``edition`` (empty when it can): a PR number, PR link or @name not of this
    edition's live entries (of ``entries``, one variant's, when given), a link anywhere else, markup, a mass
    mention, injected instructions or a command to run (the checks an entry passes), fewer than two or more
    than four sentences, more than :data:`MAX_CHARS` characters."""
    where = edition.name if entries is None else f"this reader's part of {edition.name}"
    entries = _live(edition) if entries is None else entries
    numbers = {e.number for e in entries}
    names = {e.author.lower() for e in entries}
    problems = [f"cites #{n}, which is not in {where}" for n in
                dict.fromkeys(int(m) for m in _CITED.findall(text)) if n not in numbers]
    problems += [f"names @{n}, who wrote no PR of {where}" for n in
                 dict.fromkeys(_NAMED.findall(text)) if n.lower() not in names]
    problems += _link_problems(text, edition.repo, numbers, where)
    if (hostile := hostile_span(text)) is not None:
        problems.append(f"contains markup, a mass mention, injected instructions or a command: {hostile!r}")
    count = len(sentences(text))
    if not 2 <= count <= 4:
        problems.append(f"has {count} sentences (two to four)")
    if len(text) > MAX_CHARS:
        problems.append(f"has {len(text)} characters (at most {MAX_CHARS})")
    if "\n" in text.strip() or "<" in text:
        problems.append("is not plain prose (line breaks or markup)")
    return problems


def _link_problems(text: str, repo: str, numbers: set[int], where: str) -> list[str]:
    """A lede cites PRs as ``#N``; a link may only be to one of its own PRs (or issues) of ``repo``: a link to a
    rejected PR, to another page of the host or to any other host is refused, named as the reader would see it."""
    problems = []
    for url in dict.fromkeys(all_urls(text)):
        parts = allowed_parts(url)
        page = _PAGE.match(parts.path) if parts is not None else None
        if page is None or page["repo"].lower() != repo.lower():
            problems.append(f"links to {url[:80]}, which is not a PR of {repo}")
        elif int(page["n"]) not in numbers:
            problems.append(f"links to #{page['n']}, which is not in {where}")
    return problems


Complete = Callable[[list[dict[str, str]]], str]


def lede_messages(edition: Edition, entries: list[Entry] | None = None) -> list[dict[str, str]]:
    """The chat messages asking a model for the lede (``prompts/lede.yaml``) of ``entries`` (default: every
    live entry; a variant's entries for its own lede)."""
    first = {n: i for i, n in enumerate(edition.ranking)}
    rows = [{"number": e.number, "author": e.author, "verdict": e.verdict.value, "headline": e.headline,
             "subsystems": e.subsystems, "first": first.get(e.number)}
            for e in (_live(edition) if entries is None else entries)]
    order = {Verdict.DEEP_READ: 0, Verdict.SKIM: 1, Verdict.SKIP: 2}
    rows.sort(key=lambda e: (e["first"] is None, e["first"] or 0, order[Verdict(e["verdict"])], e["number"]))
    return load_prompt("lede").messages({"language": edition.language, "edition": edition.name,
                                         "entries": rows[:80]})


def write_lede(edition: Edition, complete: Complete | None = None, vocabulary: Vocabulary | None = None,
               entries: list[Entry] | None = None, first: list[Entry] | None = None) -> str:
    """The edition's lede (or, with ``entries``, one variant's): the model's (``complete`` answers chat
    messages) when it passes :func:`check_lede` over those entries, else the offline lede (reason logged)."""
    fallback = offline_lede(edition, vocabulary, entries, first)
    if complete is None or not (_live(edition) if entries is None else entries):
        return fallback
    try:
        text = scrub(" ".join(complete(lede_messages(edition, entries)).split()))  # set by model_copy: unchecked
    except Exception as exc:  # the lede is never worth failing an edition for: say why, use the offline one
        log.warning("lede: the model failed (%s): the offline lede is used", type(exc).__name__)
        return fallback
    problems = check_lede(text, edition, entries)
    if problems:
        log.warning("lede rejected by grounding (%s): the offline lede is used", "; ".join(problems))
        return fallback
    return text
