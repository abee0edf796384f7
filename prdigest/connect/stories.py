"""Stories: an edition's related entries shown as one block.

Four kinds, in this order of precedence (a number belongs to at most one story):

1. a ``[k/N]`` series (also ``(k/N)``, ``k/N:``) by one author: its parts in this edition, with the earlier
   parts found in the history named in the title;
2. a change merged, reverted and perhaps re-landed inside this edition (reverts / relands relations, any
   authors): readers need the three together to know what stands at the end of the week;
3. one author's chain of follow-ups inside this edition (follow-up-of, fixes, part-of-series relations
   between their PRs);
4. PRs that reference one tracking issue ("Part of #N", "Tracking issue #N" where N is not a PR we know).

Titles are in the edition's language; they quote PR text, which each medium escapes like any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from prdigest.kernel.i18n import catalog, messages
from prdigest.kernel.models import Entry, PullRequest, Relation, Story

_SERIES = re.compile(r"(?:\[(\d{1,2})\s*/\s*(\d{1,2})\]|\((\d{1,2})\s*/\s*(\d{1,2})\)|^\s*(\d{1,2})/(\d{1,2}):)")
_TAGS = re.compile(r"^\s*(?:\[[^\]\n]{0,40}\]\s*)+")
_TRACKING = re.compile(r"\b(?:part\s+of|tracking(?:\s+issue)?:?|tracked\s+in|see)\s+#(\d+)\b", re.IGNORECASE)

@dataclass(frozen=True)
class SeriesPart:
    """One PR's place in a ``[k/N]`` series."""

    number: int
    author: str
    part: int
    total: int
    stem: str
    edition: str


def series_marker(title: str) -> tuple[int, int] | None:
    """``(k, N)`` from a ``[k/N]``-style marker in ``title`` (1 <= k <= N <= 99, N >= 2), else None."""
    match = _SERIES.search(title)
    if not match:
        return None
    k, n = (int(g) for g in match.groups() if g is not None)
    return (k, n) if 1 <= k <= n and n >= 2 else None


def stem(title: str) -> str:
    """The title without its series marker and ``[tag]`` prefixes: what the parts share."""
    text = _SERIES.sub(" ", title)
    text = _TAGS.sub("", text)
    return " ".join(text.split()).strip(" -:") or title.strip()


def series_part(number: int, title: str, author: str, edition: str) -> SeriesPart | None:
    """``number``'s place in a series, if its title has a marker."""
    marker = series_marker(title)
    return None if marker is None else SeriesPart(number, author, marker[0], marker[1], stem(title), edition)


def series_links(parts: Sequence[SeriesPart], earlier: Iterable[SeriesPart]) -> list[tuple[int, int]]:
    """(later part, the part before it) pairs: each part of this edition follows up the nearest earlier part of
    the same author's series of the same length, in this edition or the history."""
    pool = [*parts, *earlier]
    links = []
    for p in parts:
        before = [q for q in pool if q.author == p.author and q.total == p.total and q.part < p.part
                  and q.number != p.number]
        if before:
            links.append((p.number, max(before, key=lambda q: (q.part, q.number)).number))
    return links


def find_stories(entries: Sequence[Entry], prs: Sequence[PullRequest], relations: dict[int, list[Relation]],
                 language: str, here: str, earlier_parts: Iterable[SeriesPart] = (),
                 known: set[int] | frozenset[int] = frozenset()) -> list[Story]:
    """The edition's stories; ``known`` holds the PR numbers of this edition and the history (a number in it
    is a PR, not a tracking issue)."""
    # A title is put together from several messages (a series' parts, its earlier parts): one language for all.
    words = messages(catalog(language).whole("stories").language, "stories")
    by_number = {e.number: e for e in entries}
    taken: set[int] = set()
    stories: list[Story] = []

    # 1. series, grouped by author and length
    series: dict[tuple[str, int], list[SeriesPart]] = {}
    for e in entries:
        part = series_part(e.number, e.title, e.author, here)
        if part:
            series.setdefault((e.author, part.total), []).append(part)
    earlier = list(earlier_parts)
    for (author, total), parts in series.items():
        before = sorted({q.part: q for q in earlier if q.author == author and q.total == total
                         and q.number not in by_number}.values(), key=lambda q: q.part)
        if len(parts) < 2 and not before:
            continue
        parts.sort(key=lambda p: (p.part, p.number))
        first, last = parts[0].part, parts[-1].part
        shown = (words["parts"] if first != last else words["part"]).format(first=first, last=last)
        title = words["series"].format(author=f"@{author}", parts=shown, total=total, stem=parts[0].stem)
        if before:
            title += words["earlier"].format(earlier=", ".join(str(q.part) for q in before),
                                             editions=", ".join(dict.fromkeys(q.edition for q in before)))
        numbers = [p.number for p in parts]
        stories.append(Story(title=title, numbers=numbers))
        taken |= set(numbers)

    # 2. merged, reverted (and re-landed) inside the edition, whoever wrote each
    for members in _components(by_number, relations, taken, ("reverts", "relands"), same_author=False):
        head = by_number[members[0]]
        relanded = any(r.kind == "relands" for n in members for r in relations.get(n, []))
        stories.append(Story(title=words["relanded" if relanded else "reverted"].format(stem=stem(head.title)),
                             numbers=members))
        taken |= set(members)

    # 3. one author's chain of follow-ups inside the edition (connected components)
    for members in _components(by_number, relations, taken, ("follow-up-of", "fixes", "part-of-series"),
                               same_author=True):
        head = by_number[members[0]]
        stories.append(Story(title=words["chain"].format(author=f"@{head.author}", stem=stem(head.title)),
                             numbers=members))
        taken |= set(members)

    # 4. a tracking issue referenced by two or more PRs
    tracking: dict[int, list[int]] = {}
    for pr in prs:
        if pr.number in by_number and pr.number not in taken:
            for issue in dict.fromkeys(int(m.group(1)) for m in _TRACKING.finditer(f"{pr.title}\n{pr.body}")):
                if issue not in known:
                    tracking.setdefault(issue, []).append(pr.number)
    for issue, members in sorted(tracking.items(), key=lambda i: (-len(i[1]), i[0])):
        members = [n for n in dict.fromkeys(members) if n not in taken]
        if len(members) >= 2:
            stories.append(Story(title=words["tracking"].format(issue=issue, stem=stem(by_number[members[0]].title)),
                                 numbers=members))
            taken |= set(members)
    return stories


def _components(by_number: dict[int, Entry], relations: dict[int, list[Relation]], taken: set[int],
                kinds: tuple[str, ...], *, same_author: bool) -> list[list[int]]:
    """Groups of two or more untaken entries linked by ``kinds`` (optionally only between one author's PRs),
    each in merge order."""
    parent = {n: n for n in by_number}

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n, rels in relations.items():
        for r in rels:
            if (r.kind in kinds and r.number in by_number and n in by_number and not {n, r.number} & taken
                    and (not same_author or by_number[r.number].author == by_number[n].author)):
                parent[root(n)] = root(r.number)
    groups: dict[int, list[int]] = {}
    for n in by_number:
        if n not in taken:
            groups.setdefault(root(n), []).append(n)
    return [sorted(g, key=lambda n: (by_number[n].merged_at, n)) for g in groups.values() if len(g) >= 2]
