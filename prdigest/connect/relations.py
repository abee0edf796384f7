"""Relations between entries: reverts, follow-ups and fixes, in this edition and every stored earlier one.

What counts (from a PR's title and body; review comments never):

- GitHub's revert format: the title ``Revert "<original title>"`` (``git revert`` and the Revert button), whose
  quoted title ends with the original's ``(#N)`` in a squash-merging repo, or the body line ``Reverts #N`` /
  ``Reverts owner/repo#N`` (the Revert button). ``This reverts commit <sha>.`` alone names a commit: the
  sources do not carry merge-commit SHAs, so a SHA is never mapped; the quoted title is matched instead
  against the exact title of a PR of this edition or of the history. ``Revert "Revert "X (#A)" (#B)"``
  reverts the revert #B and relands #A.
- Every other ``#N`` or same-repo PR link in prose (:mod:`prdigest.connect.references`), its kind from the words
  around it: reverts, relands, ports, fixes, part-of-series, follow-up-of (the default), or followed-up-by
  ("needed by #N"); a ``[k/N]`` series' earlier part is part-of-series.

Untrusted text cannot forge a relation: only numbers of PRs in this edition or in the history count (an issue
number or an unknown number does not), a PR never relates to itself, never reverts, relands or fixes a PR
merged after it (a plain mention of a later PR is read the other way round: that PR follows this one up), and
the related PR's edition and verdict come from the history, never from the text.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from prdigest.connect.references import STRENGTH, find_references
from prdigest.kernel.i18n import catalog, messages
from prdigest.kernel.models import Edition, EditionId, Entry, PullRequest, Relation, RelationKind, Verdict
from prdigest.kernel.prtext.restate import restated

log = logging.getLogger(__name__)

_REPO = r"(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+))?"
#: ``Revert "…"``, after optional ``[tag]`` prefixes, with the revert PR's own ``(#M)`` optionally after it.
REVERT_TITLE = re.compile(r'^\s*(?:\[[^\]\n]{0,40}\]\s*)*Revert\s+"(?P<quoted>.+)"\s*(?:\(#\d+\))?\s*$')
_QUOTED_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
REVERTS_LINE = re.compile(rf"^\s*Reverts\s+{_REPO}#(?P<n>\d+)\b", re.MULTILINE)
REVERTS_COMMIT = re.compile(r"^\s*This reverts commit (?P<sha>[0-9a-f]{7,40})\b", re.MULTILINE)
#: Most relation lines shown under one entry; the rest are counted in one more line.
MAX_LINES = 8
#: The relation the other PR gets; a port or a fix is, seen from the original, a follow-up.
INVERSE: dict[RelationKind, RelationKind] = {"reverts": "reverted-by", "relands": "relanded-by",
           "follow-up-of": "followed-up-by", "fixes": "followed-up-by", "ports": "followed-up-by",
           "followed-up-by": "follow-up-of", "part-of-series": "part-of-series"}
#: Kinds that only point back in time: a PR cannot revert, re-land or fix one merged after it.
_BACKWARD_ONLY = {"reverts", "relands", "fixes"}


@dataclass(frozen=True)
class Known:
    """A PR a relation may point at: one of this edition, or one published in an earlier edition."""

    number: int
    edition: str
    title: str
    author: str
    merged_at: datetime
    verdict: Verdict | None  # None for a PR of this edition (the review may still change it)


def _mine(match: re.Match[str], repo: str) -> bool:
    named = match.group("repo")
    return named is None or named.lower() == repo.lower()


def revert_targets(pr: PullRequest, repo: str) -> tuple[list[int], str | None]:
    """The PR numbers ``pr`` says it reverts (GitHub's formats), and the quoted original title if any."""
    numbers: list[int] = []
    quoted = None
    title = REVERT_TITLE.match(pr.title)
    if title:
        quoted = title.group("quoted").strip()
        inner = _QUOTED_NUMBER.search(quoted)
        if inner:
            numbers.append(int(inner.group(1)))
    numbers += [int(m.group("n")) for m in REVERTS_LINE.finditer(pr.body) if _mine(m, repo)]
    if not numbers and quoted is None and not REVERTS_COMMIT.search(pr.body):
        return [], None
    return list(dict.fromkeys(numbers)), quoted


def _relanded(quoted: str | None) -> list[int]:
    """``#A`` of ``Revert "Revert "X (#A)" (#B)"``: reverting a revert re-lands the original."""
    inner = REVERT_TITLE.match(quoted or "")
    number = _QUOTED_NUMBER.search(inner.group("quoted").strip()) if inner else None
    return [int(number.group(1))] if number else []


def is_revert(pr: PullRequest, repo: str) -> bool:
    """True when ``pr`` is written in one of GitHub's revert formats (title, ``Reverts #N`` or the commit line)."""
    numbers, quoted = revert_targets(pr, repo)
    return bool(numbers or quoted is not None or REVERTS_COMMIT.search(pr.body))


def references(pr: PullRequest, repo: str) -> list[tuple[RelationKind, int]]:
    """(kind, number) pairs ``pr``'s title and body name, one per number (its strongest kind), GitHub's
    revert formats first; numbers unchecked (an issue's number is dropped by :func:`find_relations`)."""
    targets, quoted = revert_targets(pr, repo)
    kinds: dict[int, RelationKind] = {n: "reverts" for n in targets}
    for n in _relanded(quoted):
        kinds.setdefault(n, "relands")
    for ref in find_references(pr.title, pr.body, repo):
        if ref.number not in kinds:
            kinds[ref.number] = ref.kind
        elif STRENGTH.index(ref.kind) < STRENGTH.index(kinds[ref.number]) and ref.number not in targets:
            kinds[ref.number] = ref.kind
    return [(kind, n) for n, kind in kinds.items() if n != pr.number]


def candidate_numbers(prs: Iterable[PullRequest], repo: str) -> set[int]:
    """Every number the PRs reference: the history is asked about these only."""
    return {n for pr in prs for _, n in references(pr, repo)}


def _normal(title: str) -> str:
    return " ".join(title.split())


def find_relations(edition: Edition, prs: Sequence[PullRequest], past: Iterable[Known],
                   series_links: Iterable[tuple[int, int]] = ()) -> dict[int, list[Relation]]:
    """Each entry's relations (both directions inside the edition), keyed by PR number.

    ``past`` are the history's PRs that may be referenced (newest edition first: a PR published twice is
    taken from its newest edition); ``series_links`` are (later part, earlier part) pairs of ``[k/N]`` series.
    """
    here = EditionId(edition.repo, edition.since, edition.until).window
    known: dict[int, Known] = {}
    for k in past:
        known.setdefault(k.number, k)
    for e in edition.entries:  # this edition's own PRs win over a stale history row of the same number
        known[e.number] = Known(e.number, here, e.title, e.author, e.merged_at, None)
    by_title: dict[str, int] = {}
    for k in sorted(known.values(), key=lambda k: k.merged_at):
        by_title[_normal(k.title)] = k.number  # the latest PR of a title wins
    numbers = {e.number for e in edition.entries}
    relations: dict[int, list[Relation]] = {n: [] for n in numbers}

    def link(source: PullRequest | Entry, kind: RelationKind, target: int) -> None:
        other = known.get(target)
        if other is None or target == source.number:
            return  # an issue, an unknown number, or itself: nothing to link
        if other.merged_at > source.merged_at:
            if kind in _BACKWARD_ONLY:
                return  # nothing reverts, re-lands or fixes what was merged after it: forged or mistaken
            kind = "followed-up-by" if kind == "follow-up-of" else kind
        elif kind == "followed-up-by":
            kind = "follow-up-of"  # "needed by #N" of a PR merged before: it is the earlier one
        relations[source.number].append(Relation(kind=kind, number=target, edition=other.edition,
                                                 verdict=other.verdict))
        if target in numbers:
            relations[target].append(Relation(kind=INVERSE[kind], number=source.number, edition=here))

    for pr in prs:
        if pr.number not in numbers:
            continue
        refs = references(pr, edition.repo)
        targets, quoted = revert_targets(pr, edition.repo)
        if quoted is not None and not targets:
            # "This reverts commit <sha>": the SHA is not mapped; the exact original title is.
            original = by_title.get(_normal(quoted))
            if original is not None:
                refs = [("reverts", original), *[r for r in refs if r[1] != original]]
            else:
                log.info("PR #%s reverts a commit no PR of this edition or history matches by title", pr.number)
        for kind, target in refs:
            link(pr, kind, target)
    entries = {e.number: e for e in edition.entries}
    for later, earlier in series_links:
        if later in entries and not any(r.number == earlier for r in relations[later]):
            link(entries[later], "part-of-series", earlier)
    return {n: _unique(rs) for n, rs in relations.items()}


def _unique(relations: list[Relation]) -> list[Relation]:
    seen: dict[tuple[str, int], Relation] = {}
    for r in relations:
        seen.setdefault((r.kind, r.number), r)
    return list(seen.values())


def demote_reverted(entries: list[Entry], relations: dict[int, list[Relation]], here: str,
                    language: str = "en") -> list[Entry]:
    """Entries with the relations set, and each PR reverted within this edition demoted: to skim when the
    revert is itself a deep read (it teaches something, and the original is its context), else to skip.

    A PR re-landed after its revert (``relanded-by``, or its revert reverted again) keeps its verdict, as
    editors do: the revert and the re-land show the cost was real, and the entry links to the re-land. A
    demoted entry's rationale is restated from its new verdict, opening with that verdict's own words.

    Action required is what a reader pulling main at the end of the edition must do: a PR reverted within it (and
    not re-landed) asks nothing, and neither does a revert of a PR of this edition (an upgrade and its revert in
    one week leave the reader where they were).
    """
    verdicts = {e.number: e.verdict for e in entries}
    reverted_again = {n for n, rs in relations.items() if any(r.kind == "reverted-by" for r in rs)}
    out = []
    for entry in entries:
        mine = relations.get(entry.number, [])
        update: dict[str, object] = {"relations": mine}
        reverts = [r.number for r in mine if r.kind == "reverted-by" and r.edition == here
                   and r.number not in reverted_again]
        relanded = [r.number for r in mine if r.kind == "relanded-by"]
        undoes_here = any(r.kind == "reverts" and r.edition == here for r in mine)
        if entry.action and ((reverts and not relanded) or undoes_here):
            log.info("PR #%s and its revert are both in this edition: its Action required items are dropped",
                     entry.number)
            update["action"] = []
        if reverts and not relanded:
            teaches = any(verdicts.get(n) is Verdict.DEEP_READ for n in reverts)
            cap = Verdict.SKIM if teaches else Verdict.SKIP
            if entry.verdict.rank > cap.rank:
                log.info("PR #%s is reverted by #%s in this edition: %s -> %s", entry.number, reverts[0],
                         entry.verdict.value, cap.value)
                reason = messages(catalog(language).whole("restate", "verdict").language,
                                  "restate")["reverted"].format(n=reverts[0])
                update["verdict"] = cap
                update["rationale"] = restated(entry.rationale, cap, language, reason)
        out.append(entry.model_copy(update=update))
    return out


def with_backlinks(editions: list[Edition]) -> list[Edition]:
    """The editions with the inverse of every later edition's relation added to the earlier entry ("Reverted by
    #41377 in 2026-W47"), for the archive, which shows every edition as of now."""
    index: dict[tuple[str, str, int], list[Relation]] = {}
    for ed in editions:
        here = EditionId(ed.repo, ed.since, ed.until).window
        for e in ed.entries:
            for r in e.relations:
                if r.kind in INVERSE and r.edition != here:
                    index.setdefault((ed.repo, r.edition, r.number), []).append(
                        Relation(kind=INVERSE[r.kind], number=e.number, edition=here, verdict=e.verdict))
    if not index:
        return editions
    out = []
    for ed in editions:
        here = EditionId(ed.repo, ed.since, ed.until).window
        entries = [e.model_copy(update={"relations": _unique([*e.relations, *index[(ed.repo, here, e.number)]])})
                   if (ed.repo, here, e.number) in index else e for e in ed.entries]
        out.append(ed.model_copy(update={"entries": entries}))
    return out


def relation_line(r: Relation, language: str) -> str:
    """``Reverts #41234 (2026-W46, skim)``; a PR of this edition (no stored verdict) is "this edition"."""
    # The line, its "where" and the verdict label in it: one language, the reader's or else English.
    lang = catalog(language).whole("relations", "verdict").language
    w = messages(lang, "relations")
    if r.verdict is None:
        where = when = w["this"]
    else:
        when = r.edition
        where = w["where"].format(when=when, verdict=r.verdict.label(lang))
    return w[r.kind].format(n=r.number, where=where, when=when)


def relation_lines(relations: list[Relation], language: str, limit: int = MAX_LINES) -> list[str]:
    """Each relation as one line, reverts and re-lands first (what readers must know before reading it); past
    ``limit`` lines, one line says how many more (a release-notes PR may name a hundred PRs)."""
    order = {kind: i for i, kind in enumerate(("reverted-by", "relanded-by", "reverts", "relands", "fixes", "ports",
                                               "part-of-series", "follow-up-of", "followed-up-by"))}
    ranked = sorted(relations, key=lambda r: (order[r.kind], r.number))
    lines = [relation_line(r, language) for r in ranked[:limit]]
    if len(ranked) > limit:
        more = len(ranked) - limit
        lines.append(messages(language, "relations")["more"].format(n=more))
    return lines
