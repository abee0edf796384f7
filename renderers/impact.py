""""Affects your code" as readers see it in every medium: the upstream PRs of the variant that touch the
readers' own repository (their downstream), each with the downstream lines and what to do. Text is cleaned
and capped here, still unescaped; downstream paths and names are code spans (each medium shows them as code).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.links import DEFAULT_LINK_HOSTS, defang
from prdigest.kernel.models import Edition, Entry, Impact
from renderers.escape import one_line, pr_url, truncate

#: Downstream lines shown per upstream PR (then "N more"), and upstream PRs shown in one block.
LINES_PER_PR = 5
MAX_PRS = 20


def words(language: str) -> Section:
    """The block's words for ``language`` (the catalog's ``impact.*``): a line is put together from a verb and
    a fact, so the block speaks the reader's language when its catalog has all of them, else English."""
    return messages(catalog(language).whole("impact").language, "impact")


@dataclass(frozen=True)
class ImpactPR:
    """One upstream PR as the block shows it: its worst severity, the downstream lines, what to do."""

    number: int
    url: str | None
    headline: str
    severity: str
    #: Cleaned sentences with `code` spans: "`ds/ops.py:41` imports `FusedMoE`, renamed to … in #N".
    lines: tuple[str, ...]
    more: str
    todo: str
    partial: bool


@dataclass(frozen=True)
class ImpactBlock:
    """The variant's "Affects your code" block: its downstream, the PRs (breaks first), or the one line that
    says none this week."""

    downstream: str
    title: str
    prs: tuple[ImpactPR, ...]
    none: str
    partial_note: str
    severity_words: dict[str, str]


def _code(text: str, limit: int = 160) -> str:
    return truncate(one_line(text).replace("`", "'"), limit)


def _shown_name(symbol: str) -> str:
    """``vllm.x.FusedMoE.forward`` → ``FusedMoE.forward``; ``vllm.x.Y`` → ``Y``."""
    parts = symbol.split(".")
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def fact_phrase(impact: Impact, language: str) -> str:
    """What the fact did, in ``language``, from ``Impact.fact`` (``kind: what``)."""
    w = words(language)["fact"]
    assert isinstance(w, Mapping)
    kind, _, rest = impact.fact.partition(": ")
    new = rest.rsplit("→", 1)[-1].strip() if "→" in rest else rest.rsplit(".", 1)[-1]
    if kind == "moved":
        new = rest.rsplit("→", 1)[-1].strip()
    if kind == "signature":
        detail = rest[rest.find("(") + 1: rest.rfind(")")] if "(" in rest else ""
        return w["signature"].format(detail=_code(detail, 80)) if detail else w["signature-bare"]
    if kind in ("env", "argument", "config"):
        if ": " in rest:  # a default changed: "VLLM_X: 1 → 0"
            return w["changed"].format(detail=_code(rest.split(": ", 1)[-1], 80))
        return w["renamed"].format(new=_code(new, 120)) if "→" in rest else w["removed"]
    template = w.get(kind, w["changed"])
    return template.format(new=_code(new, 120), detail=_code(rest, 80))


def impact_line(impact: Impact, language: str) -> str:
    """One downstream line as a sentence (`code` spans for the path and the name)."""
    w = words(language)
    how = w["how"]
    assert isinstance(how, Mapping) and isinstance(w["line"], str)
    return w["line"].format(where=_code(f"{impact.path}:{impact.line}", 200), how=how.get(impact.how, impact.how),
                            name=_code(_shown_name(impact.symbol), 120), fact=fact_phrase(impact, language),
                            n=impact.number)


def _said(impacts: Sequence[Impact], w: Section) -> str:
    """"Alerted on DATE. Fixed in your abc123. " when ``digest watch`` alerted the PR's breaks (else '')."""
    alerted = next((i for i in impacts if i.alerted), None)
    if alerted is None:
        return ""
    said = str(w["alerted"]).format(date=alerted.alerted)
    if alerted.fixed:
        said += " " + str(w["fixed"]).format(sha=_code(alerted.fixed[:12], 12))
    return said + " "


def impact_block(edition: Edition, entries: Sequence[Entry], downstream: str | None,
                 link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> ImpactBlock | None:
    """The block for a variant whose readers have ``downstream`` (None: no block), over its ``entries``."""
    if downstream is None:
        return None
    lang = edition.language
    w = words(lang)
    by_pr: dict[int, list[Impact]] = defaultdict(list)
    heads = {e.number: e for e in entries}
    for e in entries:
        for impact in e.impact:
            if impact.downstream == downstream:
                by_pr[e.number].append(impact)
    rank = {"breaks": 0, "check": 1}
    order = sorted(by_pr, key=lambda n: (min(rank[i.severity] for i in by_pr[n]), n))
    prs = []
    for number in order[:MAX_PRS]:
        impacts = sorted(by_pr[number], key=lambda i: (rank[i.severity], i.path, i.line))
        entry = heads[number]
        worst = impacts[0].severity
        more = len(impacts) - LINES_PER_PR
        more_words = w["more"]
        prs.append(ImpactPR(
            number=number, url=pr_url(entry.url, number, link_hosts),
            headline=truncate(defang(one_line(entry.headline), link_hosts, edition.repo), 160) or f"#{number}",
            severity=worst, lines=tuple(impact_line(i, lang) for i in impacts[:LINES_PER_PR]),
            more=more_words.format(n=more) if more > 0 else "",
            todo=_said(impacts, w) + str(w[f"do_{worst}"]).format(n=number), partial=any(i.partial for i in impacts)))
    return ImpactBlock(downstream=downstream, title=f"{w['title']} · {_code(downstream, 40)}", prs=tuple(prs),
                       none=str(w["none"]).format(name=_code(downstream, 40)), partial_note=str(w["partial"]),
                       severity_words={"breaks": str(w["breaks"]), "check": str(w["check"])})
