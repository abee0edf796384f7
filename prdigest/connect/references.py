"""References in prose: every ``#N`` and same-repo PR link in a PR's title and body, with the kind of link
the words around it say (English and Chinese).

A reference is found syntactically here; whether ``N`` is a PR at all is decided by the caller
(:mod:`prdigest.connect.relations`: only PRs of this edition or of the history count, so an issue number never
becomes a relation). What is never a reference: text in code blocks and inline code, HTML comments, URLs
(other than a link to a PR of the same repo), another repo's ``owner/repo#N``, hex colours, counters and
ordinals ("step #1", "PR count #300", "the #1 complaint", "job #4512") and issues named as such
("issue #31913", "RFC #3130").

The kind comes from a cue right before the reference (``Revert #N``, ``second try at #N``, ``回滚 #N``), a
cue right after it (``#N 引入的问题``, ``#N broke …``, ``#N 的后续``), or a tag of the title
(``[Cherry-pick]``, ``[Reland]``); references joined by ``+``, ``,``, ``and``, ``、`` share the cue
("Revert #A + #B" reverts both). Without a cue a reference is a follow-up of the PR it names. One number
named twice keeps its strongest kind (:data:`STRENGTH`). Every pattern is linear and sees a bounded
window, so a 65 KB body costs milliseconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import cast

from prdigest.connect.cues import POST, PRE, TITLE_TAG
from prdigest.kernel.links import page_pattern
from prdigest.kernel.models import RelationKind

#: The kinds a PR's prose can give a reference, strongest first: a number named twice keeps the strongest.
STRENGTH = ("reverts", "relands", "ports", "fixes", "part-of-series", "followed-up-by", "follow-up-of")
DEFAULT_KIND = "follow-up-of"
MAX_SCAN = 65_536
MAX_REFERENCES = 400
_WINDOW = 120

#: Spans that are not prose: fenced code, inline code, HTML comments.
_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]{0,400}`|<!--.*?(?:-->|\Z)", re.DOTALL)
#: URLs: a PR link of the same repo is a reference, any other URL is masked.
_URL = re.compile(r"(?i)\b(?:https?://|www\.)[^\s<>\"'`)\]\u3000-\u9fff\uff00-\uffef]+")
_PR_LINK = re.compile(r"(?i)^" + page_pattern() + r"(?!\d)")
#: ``#N`` or ``owner/repo#N``; what precedes and follows is checked by :func:`_plausible`.
_HASH = re.compile(r"(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?#(?P<n>\d{1,9})(?![\w-])")
#: Words that make the ``#N`` after them a counter, a CI number or an issue, not a PR.
_NOT_A_PR_BEFORE = re.compile(
    r"(?i)(?:\b(?:issues?|bugs?|tickets?|rfcs?|discussions?|steps?|items?|no|nos|num|number|numbers|ranks?|ranked|"
    r"top|counts?|lines?|rows?|cols?|columns?|options?|cases?|tests?|jobs?|runs?|builds?|pipelines?|stages?|"
    r"phases?|versions?|ver|rounds?|pages?|slides?|fig|figures?|tables?|rules?|comments?|threads?|nodes?|gpus?|"
    r"workers?|days?|weeks?|places?|levels?|tasks?|examples?|samples?|questions?|q|tips?|points?|entry|entries|"
    r"epochs?|iterations?|iters?|batch|batches|process|pid|than|about|over|under|around|approximately|"
    r"nearly|almost|only|just)|[~≈]|第|问题|议题|工单)[\s(（]*$")
#: An article before a small number makes it an ordinal ("the #1 complaint"); PR numbers that small are rare.
_ARTICLE_BEFORE = re.compile(r"(?i)\b(?:the|our|their|my|your|its|a|an|is|was)\s*$")
_ORDINAL_AFTER = re.compile(
    r"(?i)^\s*(?:complaint|priority|cause|reason|choice|pick|spot|place|fan|request|concern|goal|thing|tip|"
    r"rule|problem|issue|contributors?|users?|stars?|downloads?|people|times|most|名|位)\b")
_COLOUR = re.compile(r"(?i)\b(?:colou?rs?|background|foreground|border|fill|stroke|hex|rgb|css|theme|accent|"
                     r"palette|shade)\b|颜色|色值|背景")
_CONNECTOR = re.compile(r"(?i)^\s*(?:[,，、+&/]|and|or|plus|和|与|及|以及|或)?\s*(?:,?\s*(?:and|or)\s+)?(?:PR\s*)?$")
_NEGATION = re.compile(r"(?i)(?:\b(?:not|never|without|instead\s+of|rather\s+than|no\s+need\s+to)|n't|"
                       r"不|没有|无需|并非|而非|不是)\s*(?:\w+\s+)?$")
_CLAUSE_END = re.compile(r"[.!?;](?:\s|$)|[。！？；\n]")


@dataclass(frozen=True)
class Reference:
    """One PR number a text names, with the kind of link the words around it give."""

    number: int
    kind: RelationKind
    #: True when a cue decided the kind; False for the default (a plain mention).
    cued: bool = True


@dataclass(frozen=True)
class _Hit:
    number: int
    start: int
    end: int
    in_title: bool


def _masked(text: str, repo: str) -> tuple[str, list[_Hit]]:
    """``text`` with code, comments and URLs blanked (same length), and the same-repo PR links in it."""
    chars = list(text)

    def blank(start: int, end: int) -> None:
        chars[start:end] = " " * (end - start)

    for m in _CODE.finditer(text):
        blank(m.start(), m.end())
    links = []
    masked = "".join(chars)
    for m in _URL.finditer(masked):
        link = _PR_LINK.match(m.group())
        if link and link.group("repo").lower() == repo.lower():
            links.append(_Hit(int(link.group("n")), m.start(), m.end(), False))
        blank(m.start(), m.end())
    return "".join(chars), links


def _plausible(text: str, start: int, end: int, number: int, qualified: bool = False) -> bool:
    """False for an ``#N`` that its words or a colour make something else than a PR (see the module doc)."""
    before = text[max(0, start - 24):start]
    if qualified:
        return True  # "owner/repo#N" names a PR or an issue of that repo: nothing else
    if start and text[start - 1].isalnum() and not re.search(r"(?i)\bPR$", before):
        return False  # "abc#12" (but "PR#12" is a PR)
    if _NOT_A_PR_BEFORE.search(before):
        return False
    if number < 1000 and (_ARTICLE_BEFORE.search(before) or _ORDINAL_AFTER.match(text[end:end + 24])):
        return False
    digits = text[start + 1:end]
    if digits.startswith("0"):
        return False  # "#000", "#0366": a colour or a code, never a PR number
    if len(digits) in (3, 4, 6, 8) and _COLOUR.search(text[max(0, start - 80):end + 40]):
        return False
    return True


def _hits(title: str, body: str, repo: str) -> tuple[str, list[_Hit]]:
    text = f"{title}\n{body[:MAX_SCAN]}"
    masked, links = _masked(text, repo)
    cut = len(title)
    hits = [_Hit(h.number, h.start, h.end, h.start < cut) for h in links]
    for m in _HASH.finditer(masked):
        named = m.group("repo")
        if named is not None and named.lower() != repo.lower():
            continue  # another repo's number
        start = m.start() if named is None else m.start() + len(named)
        if _plausible(masked, start, m.end(), int(m.group("n")), named is not None):
            hits.append(_Hit(int(m.group("n")), start, m.end(), start < cut))
        if len(hits) >= MAX_REFERENCES:
            break
    return masked, sorted(hits, key=lambda h: h.start)


def _cue(patterns: tuple[tuple[str, re.Pattern[str]], ...], text: str, before: str = "") -> str | None:
    """The strongest kind whose pattern matches ``text`` and is not negated ("does not revert #N")."""
    found = []
    for kind, pattern in patterns:
        match = pattern.search(text)
        if match and not _NEGATION.search(before + text[:match.start()]):
            found.append(kind)
    return min(found, key=STRENGTH.index) if found else None


def _groups(masked: str, hits: list[_Hit]) -> list[list[_Hit]]:
    """Runs of references joined only by connectors ("#A + #B", "#A, #B and #C", "#A、#B")."""
    groups: list[list[_Hit]] = []
    for hit in hits:
        if groups and groups[-1][-1].in_title == hit.in_title and \
                _CONNECTOR.match(masked[groups[-1][-1].end:hit.start]):
            groups[-1].append(hit)
        else:
            groups.append([hit])
    return groups


def find_references(title: str, body: str, repo: str) -> list[Reference]:
    """Every PR number ``title`` and ``body`` name (code, other repos and near-misses excluded), each once,
    with the strongest kind its mentions give, in order of first mention."""
    masked, hits = _hits(title, body, repo)
    tagged = _cue(TITLE_TAG, title)
    best: dict[int, Reference] = {}
    previous_end = 0
    for group in _groups(masked, hits):
        first, last = group[0], group[-1]
        lower = max(previous_end, first.start - _WINDOW, 0 if first.in_title else len(title) + 1)
        window = masked[lower:first.start]
        clause = _CLAUSE_END.split(window)[-1] if _CLAUSE_END.search(window) else window
        after = masked[last.end:last.end + 48]
        after = after[:m.start()] if (m := re.search(r"[\n。！？]|[.!?](?:\s|$)", after)) else after
        pre, post = _cue(PRE, clause), _cue(POST, after)
        kinds = [k for k in (pre, post) if k is not None]
        if not kinds and tagged is not None and first.in_title:
            kinds = [tagged]
        kind = min(kinds, key=STRENGTH.index) if kinds else DEFAULT_KIND
        for hit in group:
            ref = Reference(hit.number, cast(RelationKind, kind), bool(kinds))  # the cue tables' keys are kinds
            old = best.get(hit.number)
            if old is None or (ref.cued, -STRENGTH.index(ref.kind)) > (old.cued, -STRENGTH.index(old.kind)):
                best[hit.number] = ref
        previous_end = last.end
    return list(best.values())
