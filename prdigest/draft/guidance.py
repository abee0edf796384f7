"""Guidance: for whom the entry is, why the verdict, what to look at and what to follow up (the catalogs' draft.*).

Every sentence is built from what the PR's data shows (its files, the code names its body uses, its
reviewers' remarks), so the grounding check never finds a citation the PR does not support.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.collect.discussion import points
from prdigest.draft.phrasing import (
    MAX_AUDIENCE,
    MAX_FOLLOWUP,
    MAX_POINT,
    MAX_RATIONALE,
    cjk,
    code_names,
    draft_words,
    spaced,
)
from prdigest.draft.verdict import Assessment
from prdigest.kernel.factlines import fact_line, named_by, news_first
from prdigest.kernel.i18n import Section
from prdigest.kernel.models import Language, PullRequest, Verdict
from prdigest.kernel.prtext.signals import (
    BUILD,
    SOURCE,
    FileFact,
    Remark,
    Signals,
    clean_line,
)

_CONFIG_FILE = re.compile(r"(^|/)(config|envs|cli_args|arg_utils|settings)[\w.]*\.py$")
_LATER = re.compile(r"\b(later|follow|future|docs?|documentation|instead|hierarch\w*|separate\w*|"
                    r"other (?:ISA|backends?|platforms?))", re.IGNORECASE)
_SUGGESTS = re.compile(r"\b(suggest\w*|asked|should|could|consider\w*|prefer\w*|concern\w*|pointed out|"
                       r"requested|would like)\b", re.IGNORECASE)


_ALTERNATIVE = re.compile(r"\b(instead|alternative\w*|why not|what about|how about|could we|can we|would it be "
                          r"(?:better|simpler|cleaner)|rather than|another (?:way|approach|option|design)|prefer\w*|"
                          r"simpler (?:way|approach))\b|改为|不如|另一种|换成|为什么不", re.IGNORECASE)
_REQUEST = re.compile(r"\b(please|must|needs? to|should|let'?s (?:not|keep|move|add)|blocking|before (?:we )?merg\w*)\b"
                      r"|请|需要|必须", re.IGNORECASE)
_LOGIN = re.compile(r"[^A-Za-z0-9_.\[\]-]")


@dataclass(frozen=True)
class Ask:
    """A reviewer's alternative or a maintainer's request, from the PR's reviews and conversation."""

    login: str
    quote: str
    kind: str  # "request" | "alternative"


def asks(pr: PullRequest) -> list[Ask]:
    """The reviewers' requests (a review asking for changes, or a request in a review) and proposed alternatives,
    from the reviews and the conversation (bots and the author's own replies left out), strongest first. The
    quote is untrusted text: cleaned, bounded, its backticks made plain so it can never open a code span."""
    found: list[Ask] = []
    for p in points(pr):
        if p.own or p.kind == "inline":  # inline remarks are the review comments the remarks already read
            continue
        text = " ".join(p.text.split())
        if p.kind == "changes-requested" or (p.kind in ("approved", "review") and _REQUEST.search(text)
                                             and not _ALTERNATIVE.search(text)):
            kind = "request"
        elif _ALTERNATIVE.search(text):
            kind = "alternative"
        elif _REQUEST.search(text) and p.kind != "comment":
            kind = "request"
        else:
            continue
        login = _LOGIN.sub("", p.author)[:39] or "ghost"
        found.append(Ask(login, clean_line(text.replace("`", "'"), 110), kind))
    return sorted(found, key=lambda a: a.kind != "request")


def _ask_point(ask: Ask, w: Section) -> str:
    said = w["ask_request"] if ask.kind == "request" else w["ask_alternative"]
    return w["ask"].format(login=ask.login, said=said, quote=ask.quote)


def _suggestion(s: Signals) -> Remark | None:
    """The first review remark that proposes later work (docs, another design, a follow-up)."""
    return next((r for r in s.remarks if _SUGGESTS.search(r.text) and _LATER.search(r.text)), None)


def audience(s: Signals, lang: Language) -> str:
    """Who should read the entry, from its areas, most specific first."""
    w = draft_words(lang)
    vocab = s.vocabulary
    areas = tuple(a for a in s.areas if a != vocab.fallback.name)[:2] or (vocab.fallback.name,)
    return clean_line(w["list"].join(vocab.get(a).audience(w.language) for a in areas), MAX_AUDIENCE)


def _facts(s: Signals, w: Section) -> str:
    size = f"+{s.additions}/−{s.deletions}"
    if not s.files:
        return size
    top = next((f for f in s.files if f.kind == SOURCE), s.files[0])
    folder = (top.path.rsplit("/", 1)[0] if "/" in top.path else top.path).replace("`", "'")
    count = f"{len(s.files)}{'+' if s.files_truncated else ''}"
    return w["facts"].format(size=size, count=count, folder=folder)


def rationale(s: Signals, a: Assessment, lang: Language, lead: str | None = None) -> str:
    """The verdict, the PR's point (``lead``: what it sets out to do, when the headline does not say it), why
    (from the signals) and for whom, in one or two sentences."""
    w = draft_words(lang)
    if a.rule is not None:
        why = [a.rule.text(w)]
        if s.changes:  # the rule says what kind of change; the fact, what it changed
            why.append(fact_line(news_first(s.changes, s.core_title)[0], w.language))
    elif a.verdict is Verdict.SKIP:
        why = [r.text(w) for r in a.reasons if r.weight < 0][:2] or [w["nothing_new"]]
    else:
        why = [r.text(w) for r in a.reasons if r.weight > 0 and r.key != "size"][:3]
        if a.verdict is Verdict.SKIM:
            minus = next((r.text(w) for r in a.reasons if r.weight < 0), w["little_design"])
            why.append(w["but"].format(minus=minus) if why else minus)
    label, who = a.verdict.label(w.language), audience(s, lang)
    text = w["rationale_led" if lead else "rationale"].format(label=label, lead=lead, why=w["why_join"].join(why),
                                                             facts=_facts(s, w), who=who)
    return clean_line(spaced(text, w), MAX_RATIONALE)


def _role(f: FileFact, first: bool = True) -> str:
    if f.status in ("removed", "deleted"):
        return "removed"
    if f.kind != SOURCE:
        return f.kind
    if f.is_new:
        return "new"
    return "kernel" if f.is_kernel else "config" if _CONFIG_FILE.search(f.path) else SOURCE if first else "second"


def _file_names(s: Signals, f: FileFact) -> tuple[str, ...]:
    """Code names tied to a file: what its patch defines, else what the body names next to the file."""
    if f.symbols:
        return f.symbols
    name = f.path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    near: list[str] = []
    for line in [x for x in s.body.split("\n") if name in x or (len(stem) > 4 and stem in x)][:5]:
        near.extend(i for i in s.identifiers if i in line and i != stem)
    near.extend(i for i in s.identifiers if len(stem) > 4 and (stem in i or i in stem) and i != stem)
    return tuple(dict.fromkeys(near))


def _file_point(s: Signals, f: FileFact, w: Section, first: bool = True) -> str:
    role, path, names = w["role"][_role(f, first)], f.path.replace("`", "'"), _file_names(s, f)
    tail = w["file_names"].format(names=code_names(names, 2, cjk(w))) if names else ""
    return w["file_point"].format(path=path, additions=f.additions, deletions=f.deletions, role=role, names=tail)


def _fact_points(s: Signals, w: Section) -> list[str]:
    """What the code facts ask of a reader: callers to adapt to what broke, the new API to know, else what the
    code did (a body, a test, a file); the facts the title does not name first."""
    for changes, frame in ((s.breaking_changes, "callers"), (s.api_changes or s.kernel_changes, "api"),
                           (s.changes, "changed")):
        if changes:
            chosen = news_first(changes, s.core_title)[:2]
            said = list(dict.fromkeys(fact_line(c, w.language) for c in chosen))
            point = w[frame].format(said=w["fact_join"].join(said))
            framed = set(changes)  # a set: ``in`` on the list compared every pair of facts (quadratic)
            rest = [c for c in news_first(s.changes, s.core_title) if c not in framed]
            if frame != "changed" and all(named_by(c, s.core_title) for c in chosen) and rest \
                    and not named_by(rest[0], s.core_title):
                # the title says these already: the point goes on with what else the code did
                point = w["then"].format(first=point, second=w["changed"].format(said=fact_line(rest[0], w.language)))
            return [point]
    return []


def focus(s: Signals, a: Assessment, lang: Language, discussion: Sequence[Ask] = ()) -> list[str]:
    """Up to three points to look at, most important first, each citing a file or a name from the PR; a reviewer's
    request or alternative from ``discussion`` (:func:`asks`) comes right after the first file."""
    w = draft_words(lang)
    zh = cjk(w)
    ordered = [f for f in s.files if f.kind == SOURCE] + [f for f in s.files if f.kind != SOURCE]
    points = _fact_points(s, w) + [_file_point(s, f, w) for f in ordered[:1]]
    points += [_ask_point(ask, w) for ask in discussion[:1]]
    cited = set(_file_names(s, ordered[0])[:2]) if ordered else set()
    names = [i for i in s.identifiers if i not in cited and not i.startswith("-") and not i.isupper()]
    names = [i for i in names if not any(o != i and o.endswith("." + i) for o in names)]
    if len(names) >= 2 or (names and not points):
        listed = code_names(names, 3, zh)
        points.append(w["names"].format(listed=listed))
    later = _suggestion(s)  # quoted among the follow-ups instead
    remarks = [r for r in s.remarks if r is not later]
    if remarks:
        r = next((x for x in remarks if x.author != s.author), remarks[0])  # a reviewer's before the author's
        quote = clean_line(r.text, 140)
        points.append(w["review"].format(author=r.author, quote=quote))
    extra = [f for f in ordered[1:4] if _role(f) != _role(ordered[0]) or f.kind == SOURCE][:1]
    points.extend(_file_point(s, f, w, first=False) for f in extra)
    if s.perf_claims:
        points.append(w["figures"].format(figures=w["list"].join(s.perf_claims[:2])))
    if s.switches:
        points.append(w["switches"].format(listed=code_names(s.switches, 2, zh)))
    wanted = {Verdict.DEEP_READ: 3, Verdict.SKIM: 2, Verdict.SKIP: 1}[a.verdict]
    return [clean_line(spaced(p, w), MAX_POINT) for p in points[:wanted]]


def followups(s: Signals, lang: Language) -> list[str]:
    """Later work the PR's own data points to; none when it points to none."""
    w = draft_words(lang)
    out: list[str] = []
    if s.is_revert:
        ref = f"#{s.reverted_refs[0]}" if s.reverted_refs else w["original_pr"]
        out.append(w["revert"].format(ref=ref))
    if s.later_reverted:
        out.append(w["later_reverted"])
    for advisory in s.advisories[:1]:
        out.append(w["advisory"].format(advisory=advisory))
    for snippet in s.later_work[:2]:
        out.append(w["track"].format(quote=clean_line(snippet, 140)))
    if s.groundwork and not s.later_work:
        out.append(w["groundwork"])
    if s.skipped_tests or s.is_flaky:
        out.append(w["skipped_tests"])
    deps = [f.path for f in s.files if f.kind == BUILD and "requirements" in f.path.lower()]
    if s.is_bump or (deps and s.vocabulary.hints.file_kinds.get("dependency") in s.areas):
        where = w["deps_where"].format(names=code_names(deps, 2, cjk(w))) if deps else ""
        out.append(w["deps"].format(where=where))
    later = _suggestion(s)
    if later is not None:
        out.append(w["suggestion"].format(author=later.author, quote=clean_line(later.text, 120)))
    return [clean_line(spaced(x, w), MAX_FOLLOWUP) for x in dict.fromkeys(out)][:3]
