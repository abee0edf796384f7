"""The digest as Feishu/Lark interactive cards (``msg_type: interactive``) for a group's custom bot.

The cards use the classic card schema (``config``, ``header``, ``elements``; no ``schema: "2.0"``): custom
bots have accepted it on Feishu and Lark for years, and it has everything a digest needs: a ``plain_text``
header (never parsed), ``markdown`` elements (Markdown with code spans and lists), ``note`` lines in
``lark_md`` and ``hr`` rules. The first card opens with the edition, the counts, the reader's lede and the
entries to read first; then the entries by verdict, each with its verdict, headline, reason, points to look
at, follow-ups, a link to the PR and its archive permalink.

Feishu takes at most 20 KB per request (the UTF-8 bytes of the JSON body), so a week is split into several
cards, in order, each within the limit once signed (:data:`prdigest.deliver.feishu_limits.CARD_BUDGET`): a verdict
group that spans cards repeats its heading as "continued", and an entry too long for a card on its own is
shortened until it fits. Untrusted text goes through :mod:`renderers.lark_md`; links are only made for URLs
:func:`renderers.escape.pr_url` and :func:`renderers.site.links.site_base` accept, with labels we write.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from prdigest.connect.variants import Variant
from prdigest.deliver.feishu_limits import CARD_BUDGET, body_bytes
from prdigest.deliver.media import ComposeContext, RenderContext, Rendering
from prdigest.kernel.i18n import messages
from prdigest.kernel.jsontext import pretty
from prdigest.kernel.models import Edition
from prdigest.readers.file import Reader
from renderers.escape import DEFAULT_LINK_HOSTS, truncate
from renderers.impact import ImpactBlock, impact_block
from renderers.lark_md import lark_md, lark_md_prose, plain
from renderers.relation_lines import variant_connections
from renderers.relation_lines import words as connect_words
from renderers.shared import shared, sharing
from renderers.site.links import edition_url, link_strings, permalink, site_base
from renderers.view import EntryView, Group, action_required, counts, groups, meta, strings, view, window

#: Most cards one group gets for one edition: a bot takes 100 requests a minute, a group reads a digest.
MAX_CARDS = 20
#: Elements per card, well under what Feishu renders; an entry takes two.
MAX_ELEMENTS = 50
HEADER_MAX = 100
MARK = {"deep-read": "\U0001f7e2", "skim": "\U0001f7e1", "skip": "\u26aa"}


def _md(content: str) -> dict[str, Any]:
    return {"tag": "markdown", "content": content}


def _note(content: str) -> dict[str, Any]:
    return {"tag": "note", "elements": [{"tag": "lark_md", "content": content}]}


def _link(url: str, label: str) -> str:
    """A link we make: ``url`` was checked (no spaces, quotes, brackets or parentheses); ``label`` is ours
    (``#123`` as written, words escaped)."""
    return f"[{label if re.fullmatch(r'#[0-9]+', label) else lark_md(label)}]({url})"


def card(title: str, elements: list[dict[str, Any]]) -> dict[str, Any]:
    """One webhook request body (unsigned): an interactive card with a ``plain_text`` header."""
    return {"msg_type": "interactive",
            "card": {"config": {"wide_screen_mode": True, "enable_forward": True},
                     "header": {"title": {"tag": "plain_text", "content": truncate(plain(title), HEADER_MAX)},
                                "template": "blue"},
                     "elements": elements}}


def _entry_text(e: EntryView, ui: Mapping[str, Any], rationale: int, item: int) -> str:
    lines = [f"**{lark_md_prose(e.headline)}**"]
    lines += [f"*{lark_md(r)}*" for r in e.relations]
    if e.rationale and rationale:
        lines.append(lark_md_prose(truncate("\n".join(e.rationale), rationale)).replace("\n", "\n\n"))
    if e.facts:
        lines.append(f"**{lark_md(ui['facts'])}**")
        lines += [f"- {lark_md_prose(truncate(f, item))}" for f in e.facts]
    if e.focus:
        lines.append(f"**{lark_md(ui['focus'])}**")
        lines += [f"{i}. {lark_md_prose(truncate(f, item))}" for i, f in enumerate(e.focus, 1)]
    if e.followups:
        lines.append(f"**{lark_md(ui['followups'])}**")
        lines += [f"- {lark_md_prose(truncate(f, item))}" for f in e.followups]
    return "\n".join(lines)


def _entry_meta(e: EntryView, language: str, link: str | None) -> str:
    ref = _link(e.url, f"#{e.number}") if e.url else f"#{e.number}"
    own = f" · {_link(link, link_strings(language)['permalink'])}" if link else ""
    return (f"{MARK[e.verdict.value]} {lark_md(e.badge)} · {ref} {lark_md_prose(e.title)} · "
            f"{lark_md(meta(e, language))}{own}")


def entry_elements(e: EntryView, language: str, link: str | None, room: int) -> list[dict[str, Any]]:
    """One entry as a markdown element and a note, shortened until both take at most ``room`` bytes; made once
    per entry in a render step, however many variants show it (:mod:`renderers.shared`)."""
    return list(shared("feishu-entry", (e,), (language, link, room),
                       lambda: tuple(_entry_elements(e, language, link, room))))


def _entry_elements(e: EntryView, language: str, link: str | None, room: int) -> list[dict[str, Any]]:
    ui = strings(language)
    rationale, item = 2000, 500
    while True:
        elements = [_md(_entry_text(e, ui, rationale, item)), _note(_entry_meta(e, language, link))]
        if _size(elements) <= room or (rationale == 0 and item <= 20):
            return elements
        rationale, item = (rationale // 2 if rationale > 100 else 0), max(item // 2, 20)


def _size(elements: list[dict[str, Any]]) -> int:
    """Bytes the elements add to a card's compact JSON (each followed by a comma)."""
    return sum(body_bytes(el) + 1 for el in elements)


def _intro(edition: Edition, variant: Variant, base: str | None, link_hosts: tuple[str, ...],
           room: int) -> list[dict[str, Any]]:
    """The first card's opening: counts, window and filter, the lede, what to read first, stories (the
    stories, then the rest, left out if it would not fit in ``room`` bytes)."""
    lang = edition.language
    ui, cw = strings(lang), connect_words(lang)
    tally = " · ".join(f"{MARK[v.value]} {lark_md(v.label(lang))} **{n}**"
                       for v, n in counts(variant.entries).items() if n)
    elements = [_md(f"**{lark_md(ui['total'].format(total=len(variant.entries)))}**\n{tally}"),
                _note(lark_md(f"{window(edition)} · {variant.filter.describe(lang)}"))]
    elements += impact_elements(impact_block(edition, variant.entries, variant.filter.downstream, link_hosts),
                                room // 3)
    # "Action required" first (its breaking entries and what broke), then the lede and read-first.
    action = action_required([view(e, lang, link_hosts, variant.vocabulary, edition.repo)
                              for e in variant.entries if e.action])
    if action:
        lines = [f"**\U0001f6a8 {lark_md(ui['action'])} · {action.total}**", lark_md(ui["action_note"])]
        for e in action.entries:
            ref = _link(e.url, f"#{e.number}") if e.url else f"#{e.number}"
            lines.append(f"- {ref} {lark_md_prose(truncate(e.headline, 120))}")
            lines += [f"    - {lark_md_prose(truncate(f, 200))}" for f in e.breaking_facts]
        if action.more:
            lines.append(lark_md(ui["action_more"].format(n=action.more)))
        elements.append(_md("\n".join(lines)))
    # The reader's variant: its own lede (else the edition's) and its read-first, ranked.
    c = variant_connections(edition, variant, link_hosts)
    if c.lede:
        elements.append(_md(lark_md(c.lede)))
    if c.read_first:
        lines = [f"**{lark_md(cw['first'])}**"]
        for i, f in enumerate(c.read_first, 1):
            ref = _link(f.url, f"#{f.number}") if f.url else f"#{f.number}"
            lines.append(f"{i}. {ref} {lark_md_prose(truncate(f.headline, 120))}")
        elements.append(_md("\n".join(lines)))
    if c.stories:
        lines = [f"**{lark_md(cw['stories'])}**"]
        lines += [f"- **{lark_md(s.title)}**: " + ", ".join(f"#{n} {lark_md(truncate(h, 80))}"
                                                             for n, h in s.entries) for s in c.stories]
        elements.append(_md("\n".join(lines)))
    if base:
        elements.append(_note(_link(edition_url(base, edition), link_strings(lang)["view_online"])))
    while _size(elements) > room // 2 and len(elements) > 2:
        del elements[-1]  # a first card that is all preamble leaves no room for the entries
    return elements


IMPACT_MARK = {"breaks": "\U0001f534", "check": "\U0001f7e1"}


def impact_elements(block: ImpactBlock | None, room: int = CARD_BUDGET // 3) -> list[dict[str, Any]]:
    """"Affects your code": one markdown element with each upstream PR, its downstream lines and what to do
    (at most 10 PRs, fewer when they would take more than ``room`` bytes), or the one line that says nothing
    touches the downstream this week."""
    if block is None:
        return []
    if not block.prs:
        return [_md("\n".join([f"**{lark_md(block.title)}**", lark_md(block.none)]))]
    for shown in range(min(10, len(block.prs)), 0, -1):
        elements = _impact_prs(block, shown)
        if _size(elements) <= room:
            break
    return elements


def _impact_prs(block: ImpactBlock, shown: int) -> list[dict[str, Any]]:
    lines = [f"**{lark_md(block.title)}**"]
    for pr in block.prs[:shown]:
        ref = _link(pr.url, f"#{pr.number}") if pr.url else f"#{pr.number}"
        lines.append(f"{IMPACT_MARK[pr.severity]} **{lark_md(block.severity_words[pr.severity])}** · {ref} "
                     f"{lark_md_prose(truncate(pr.headline, 120))}")
        lines += [f"- {lark_md_prose(line)}" for line in pr.lines]
        lines += [f"- {lark_md(pr.more)}"] if pr.more else []
        lines.append(f"*{lark_md(pr.todo + (' ' + block.partial_note if pr.partial else ''))}*")
    return [_md("\n".join(lines))]


def _group_heading(g: Group, ui: Mapping[str, Any], count: int, continued: bool) -> dict[str, Any]:
    text = f"{MARK[g.verdict.value]} {lark_md(g.label)} · {count}" + (lark_md(ui["continued"]) if continued else "")
    return _md(f"**{text}**")


def render_feishu(edition: Edition, variant: Variant, *, link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS,
                  site_url: str | None = None) -> list[dict[str, Any]]:
    """The request bodies (unsigned) for ``variant``, in order, each within :data:`CARD_BUDGET` bytes."""
    base = site_base(site_url)
    lang = edition.language
    ui, extra = strings(lang), messages(lang, "feishu")
    title = f"{ui['digest']} · {edition.repo} · {edition.week}"
    # The header's "(12/20)" is added at the end; the empty card is measured with the longest such title.
    room = CARD_BUDGET - body_bytes(card(title + f" ({MAX_CARDS}/{MAX_CARDS})", []))
    total = len(variant.entries)
    more_line = _md(f"**{lark_md(extra['more'].format(more=f'{total:,}', total=f'{total:,}'))}**")
    per_verdict = counts(variant.entries)
    cards: list[list[dict[str, Any]]] = [_intro(edition, variant, base, link_hosts, room)]
    used, shown, full = _size(cards[0]), 0, False
    # Only the entries the capped cards could hold are viewed (each entry takes two elements).
    shown_at_most = MAX_CARDS * MAX_ELEMENTS // 2
    views = [view(e, lang, link_hosts, variant.vocabulary, edition.repo) for e in variant.entries[:shown_at_most]]
    for g in groups(views, lang):
        count = per_verdict[g.verdict]
        entry_room = room - _size([_group_heading(g, ui, count, True), more_line])
        for i, e in enumerate(g.entries):
            lead = [] if i else [_group_heading(g, ui, count, continued=False)]
            body = entry_elements(e, lang, permalink(base, edition, e.number) if base else None, entry_room)
            # The last card keeps room for the line saying how many entries it could not hold.
            limit = room - (_size([more_line]) if len(cards) == MAX_CARDS else 0)
            if used + _size(lead + body) > limit or len(cards[-1]) + len(lead + body) > MAX_ELEMENTS - 1:
                if len(cards) == MAX_CARDS:
                    full = True
                    break
                cards.append([])
                used, lead = 0, [_group_heading(g, ui, count, continued=bool(i))]
            cards[-1] += lead + body
            used += _size(lead + body)
            shown += 1
        if full:
            break
    if shown < total:
        more = extra["more"].format(more=f"{total - shown:,}", total=f"{total:,}")
        cards[-1].append(_md(f"**{lark_md(more)}**"))
    n = len(cards)
    return [card(title + (f" ({i}/{n})" if n > 1 else ""), elements) for i, elements in enumerate(cards, 1)]


def notice_card(title: str, text: str) -> dict[str, Any]:
    """A one-card notice (the editors' "review waiting"): ``text`` shown as written, its http(s) URLs also
    as links of their own below it (only URLs without characters a link could be broken out with)."""
    urls = [u.rstrip(".,;:!?") for u in re.findall(r"https?://[^\s<>()\[\]\"'|\\`]+", text)]
    elements = [_md(lark_md(text))] + [_note(_link(u, u)) for u in urls[:3]]
    return card(title, elements)


def feishu_notice(reader: Reader, subject: str, text: str, context: ComposeContext) -> list[dict[str, Any]]:
    """The editors' notice: one card (see :data:`prdigest.deliver.media.Medium.notice`)."""
    return [notice_card(subject, text)]


def feishu_rendering(edition: Edition, variant: Variant, context: RenderContext) -> Rendering:
    """``feishu/<variant>.json``: the cards a group gets, in order (unsigned request bodies)."""
    with sharing(context.shared):  # entries rendered once per render step, not once per variant
        cards = render_feishu(edition, variant, link_hosts=context.link_hosts, site_url=context.site_url)
    data = pretty(cards).encode("utf-8")
    return Rendering("feishu", variant.key, cards, {f"feishu/{variant.key}.json": data})
