"""The plain-text digest: the view of :mod:`renderers.view` wrapped at 78 columns."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from prdigest.connect.variants import Variant
from prdigest.kernel.models import Edition
from prdigest.readers.selfservice.links import footer_links
from renderers.escape import DEFAULT_LINK_HOSTS, display_width, one_line
from renderers.impact import ImpactBlock, impact_block
from renderers.relation_lines import Connections, variant_connections
from renderers.relation_lines import words as connect_words

# ``view`` is also imported from here by tests (``from renderers.text import view``): keep it importable.
from renderers.shared import shared
from renderers.site.links import edition_url, link_strings, permalink, site_base
from renderers.view import EntryView, action_required, groups, meta, strings, summary, view, window

WIDTH = 78
#: Entries shown in full; after these, one line each (20,000 entries in full would be ~14 MB of text).
FULL_ENTRIES = 500
#: Most bytes of an e-mail's two parts together, before transfer encoding: base64 (at worst, ×4/3 and line
#: breaks) makes ~192 KB of it, so a whole message stays under 200 KB. The HTML part stays under ~95 KB (Gmail
#: clips past ~102 KB); the text part gets at most the HTML part's size and what is left of this.
MESSAGE_BUDGET = 140_000
_CJK = r"\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef\u201c\u2018"
#: Spaces; or a word (a run without CJK characters, e.g. a URL); or one CJK character. Opening brackets
#: and quotes stick to what follows them, so they never end a line.
_TOKEN = re.compile(rf"\s+|[（「『《【〈“‘]*(?:[^\s{_CJK}]+|.)", re.S)
#: Punctuation that must not start a line (it stays with the character before it).
_NO_LINE_START = set("，。、；：！？）》」』】…,.;:!?)]}%")


def wrap(text: str, width: int = WIDTH, indent: str = "", hang: str | None = None) -> list[str]:
    """Greedy wrap by display width: break at spaces, or between CJK characters; never inside a URL or word.

    ``indent`` starts the first line, ``hang`` (default: ``indent``) the following ones. Linear in the text:
    each token is measured once and each line joined once (a line that cannot break, a run of punctuation
    that must not start one, grows without being copied per token).
    """
    hang = indent if hang is None else hang
    lines: list[str] = []
    parts: list[str] = []  # the current line's tokens; a space only after a token
    col, prefix, room = 0, indent, width - display_width(indent)
    for tok in _TOKEN.findall(text):
        if tok.isspace():
            if parts:
                parts.append(" ")
                col += 1
            continue
        w = display_width(tok)
        if parts and col + w > room and tok[0] not in _NO_LINE_START:
            lines.append(prefix + "".join(parts).rstrip())
            parts, col, prefix, room = [], 0, hang, width - display_width(hang)
        parts.append(tok)
        col += w
    if parts:
        lines.append(prefix + "".join(parts).rstrip())
    return lines or [indent.rstrip()]


def _rule(char: str) -> str:
    return char * WIDTH


def _labelled(label: str, url: str, ui: Mapping[str, Any]) -> str:
    """``Permalink: URL`` / ``本条链接：URL`` (a full-width colon needs no space)."""
    colon = ui["colon"]
    return f"{label}{colon}{'' if colon == '：' else ' '}{url}"


class _Block(str):
    """Lines joined by "\n", each stripped of its trailing spaces already: :func:`render_text` writes it as it is."""


def render_entry_text(e: EntryView, language: str, link: str | None = None) -> _Block:
    """One entry as plain-text lines (no trailing blank line), joined, each stripped of trailing spaces; ``link``
    is its archive permalink, if any. Wrapped once per entry in a render step, however many variants show it
    (:mod:`renderers.shared`)."""
    return shared("text-entry", (e,), (language, link),
                  lambda: _Block("\n".join(line.rstrip() for line in _entry_text(e, language, link))))


def _entry_text(e: EntryView, language: str, link: str | None) -> list[str]:
    ui = strings(language)
    out = wrap(f"[{e.badge}] {e.headline}")
    out += wrap(f"#{e.number} {e.title}", indent="  ")
    out.append(f"  {e.url}" if e.url else f"  {ui['no_link']}")
    if link:
        out.append("  " + _labelled(link_strings(language)["permalink"], link, ui))
    out += wrap(meta(e, language), indent="  ")
    for relation in e.relations:
        out += wrap(relation, indent="  ")
    for para in e.rationale:
        out.append("")
        out += wrap(para, indent="  ")
    if e.facts:
        out += ["", f"  {ui['facts']}{ui['colon']}"]
        for item in e.facts:
            out += wrap(item, indent="  - ", hang="    ")
    if e.focus:
        out += ["", f"  {ui['focus']}{ui['colon']}"]
        for i, item in enumerate(e.focus, 1):
            out += wrap(item, indent=f"  {i}. ", hang=" " * (len(str(i)) + 4))
    if e.followups:
        out += ["", f"  {ui['followups']}{ui['colon']}"]
        for item in e.followups:
            out += wrap(item, indent="  - ", hang="    ")
    return out


def action_lines(views: list[EntryView], language: str) -> list[str]:
    """The "Action required" block: each breaking entry of the variant with its breaking facts (nothing when
    there is none). It comes before read first."""
    action = action_required(views)
    if not action:
        return []
    ui = strings(language)
    out = ["", f"{ui['action']} ({action.total}){ui['colon']}", *wrap(ui["action_note"], indent="  ")]
    for e in action.entries:
        out += wrap(f"#{e.number} {e.headline} {e.url or ''}".rstrip(), indent="  - ", hang="    ")
        for fact in e.breaking_facts:
            out += wrap(fact, indent="      ", hang="      ")
    if action.more:
        out += wrap(ui["action_more"].format(n=action.more), indent="  ")
    return out


def connect_lines(c: Connections, language: str) -> list[str]:
    """The lede, the read-first entries, the stories and the earlier follow-ups, wrapped (nothing when the
    edition has none)."""
    w = connect_words(language)
    out: list[str] = []
    if c.lede:
        out += ["", *wrap(c.lede)]
    if c.read_first:
        out += ["", f"{w['first']}{strings(language)['colon']}"]
        for i, f in enumerate(c.read_first, start=1):
            out += wrap(f"{i}. #{f.number} {f.headline} {f.url or ''}".rstrip(), indent="  ", hang="     ")
    for story in c.stories:
        out += ["", *wrap(_labelled(w["stories"], story.title, strings(language)))]
        for n, headline in story.entries:
            out += wrap(f"#{n} {headline}", indent="  - ", hang="    ")
    if c.done or c.open_count:
        out += ["", f"{w['earlier']}{strings(language)['colon']}"]
        for item in c.done:
            out += wrap(item, indent="  ", hang="    ")
        if c.open_count:
            out += wrap(w["open"].format(n=c.open_count), indent="  ")
            for item in c.open:
                out += wrap(item, indent="  - ", hang="    ")
    return out


def impact_lines(block: ImpactBlock | None, language: str) -> list[str]:
    """"Affects your code": each upstream PR with its downstream lines and what to do, or the one line that
    says nothing touches the downstream this week (nothing at all for readers without a downstream)."""
    if block is None:
        return []
    colon = strings(language)["colon"]
    out = ["", f"{block.title}{colon}"]
    if not block.prs:
        return out + wrap(block.none, indent="  ")
    for pr in block.prs:
        head = f"[{block.severity_words[pr.severity]}] #{pr.number} {pr.headline}"
        out += wrap(f"{head} {pr.url or ''}".rstrip(), indent="  ", hang="    ")
        for line in pr.lines:
            out += wrap(line, indent="    - ", hang="      ")
        if pr.more:
            out += wrap(pr.more, indent="    - ", hang="      ")
        out += wrap(pr.todo + (f" {block.partial_note}" if pr.partial else ""), indent="    ", hang="    ")
    return out


def render_entry_line(e: EntryView, link: str | None = None) -> list[str]:
    """One entry as one wrapped item: badge, headline, number and link (the text part of a huge week)."""
    return wrap(f"- [{e.badge}] {e.headline} #{e.number} {link or e.url or ''}".rstrip(), hang="  ")


def render_text(edition: Edition, variant: Variant, *,
                link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, site_url: str | None = None,
                reader_links: tuple[str, ...] = (), connect: Connections | None = None,
                views: list[EntryView] | None = None, budget: int | None = None) -> str:
    """The plain-text digest of ``variant``: header, then one block per entry grouped by verdict.

    Also the email's ``text/plain`` part. Lines are wrapped at 78 columns (CJK characters count as two);
    URLs are never broken. With ``site_url`` the header links the edition's archive page and each entry
    its permalink. ``reader_links`` ends it with a placeholder line per link, filled in per reader.
    ``connect`` and ``views``: the variant's connections and its entries' views, when made already (the e-mail's
    HTML part made them). ``budget``: most bytes of the result (the e-mail's text part: at most its HTML part
    and :data:`TEXT_BUDGET`); entries become one line each from the end of the reading order to fit.
    """
    base = site_base(site_url)
    lang = edition.language
    ui = strings(lang)
    if views is None:
        views = [view(e, lang, link_hosts, variant.vocabulary, edition.repo) for e in variant.entries]
    out = wrap(f"{one_line(edition.repo)} · {edition.week} {ui['digest']}")
    out += wrap(window(edition))
    out += wrap(summary(edition, variant))
    out += wrap(one_line(variant.filter.describe(lang)))
    if base:
        out.append(_labelled(link_strings(lang)["view_online"], edition_url(base, edition), ui))
    out += impact_lines(impact_block(edition, variant.entries, variant.filter.downstream, link_hosts), lang)
    out += action_lines(views, lang)
    if connect is None:
        connect = variant_connections(edition, variant, link_hosts)
    out += connect_lines(connect, lang)
    tail = ["", "", _rule("-"), ui["footer"]]
    tail += [_labelled(label, url, ui) for label, url in footer_links(reader_links, lang)]
    room = None if budget is None else budget - _size(out) - _size(tail)
    out += _entries(views, edition, base, lang, room)
    out += tail
    return "\n".join(line if type(line) is _Block else line.rstrip() for line in out) + "\n"


def _size(lines: list[str]) -> int:
    """Bytes of ``lines`` joined by newlines, with the last newline (UTF-8; an upper bound before stripping)."""
    return sum(len(line.encode("utf-8")) + 1 for line in lines)


def _entries(views: list[EntryView], edition: Edition, base: str | None, lang: str, room: int | None) -> list[str]:
    """The entries grouped by verdict, each in full or as one line, within ``room`` bytes when given.

    In reading order (deep reads first) entries are shown in full while they fit, the rest one line each;
    when not even one line each fits, the lines that fit and a last line counting the others (with the
    archive's link when there is one). Sizes are counted with every separator an entry may bring, so the
    result never exceeds ``room``. An entry's text, line and sizes are made once per render step."""
    grouped = groups(views, lang)
    ordered = [e for g in grouped for e in g.entries]
    links = {e.number: permalink(base, edition, e.number) if base else None for e in ordered}
    full = {e.number for e in ordered[:FULL_ENTRIES]}
    kept = len(ordered)
    if room is not None:
        headers = sum(_size(["", "", _rule("="), f"{g.label} ({len(g.entries)})", _rule("=")]) for g in grouped)
        whole = headers + sum(_full_size(e, lang, links[e.number]) if e.number in full
                              else _line_size(e, links[e.number]) for e in ordered)
        if whole > room:  # the common case is within budget: one line each is only worked out past it
            full = set()
            spent = headers + sum(_line_size(e, links[e.number]) for e in ordered)
            if spent > room:
                # Not even one line each: the first lines that fit, then one line saying how many are left out.
                spent, kept = headers + _size(_more_lines(len(ordered), edition, base, lang)), 0
                for e in ordered:
                    cost = _line_size(e, links[e.number])
                    if spent + cost > room:
                        break
                    spent, kept = spent + cost, kept + 1
            else:
                for e in ordered[:FULL_ENTRIES]:
                    extra = _full_size(e, lang, links[e.number]) - _line_size(e, links[e.number])
                    if spent + extra > room:
                        break
                    spent += extra
                    full.add(e.number)
    shown = {e.number for e in ordered[:kept]}
    out: list[str] = []
    for group in grouped:
        members = [e for e in group.entries if e.number in shown]
        if not members:
            continue
        out += ["", "", _rule("="), f"{group.label} ({len(group.entries)})", _rule("=")]
        previous_full = False
        for i, e in enumerate(members):
            if e.number in full:
                out += [""] if i == 0 else ["", _rule("-"), ""]
                out.append(render_entry_text(e, lang, links[e.number]))
            else:  # one line each
                out += ([""] if i == 0 or previous_full else []) + _line(e, links[e.number])
            previous_full = e.number in full
    if kept < len(ordered):
        out += _more_lines(len(ordered) - kept, edition, base, lang)
    return out


def _line(e: EntryView, link: str | None) -> list[str]:
    return shared("text-line", (e,), (link,), lambda: render_entry_line(e, link))


def _line_size(e: EntryView, link: str | None) -> int:
    """Bytes of the entry's one-line form with the blank line that may come before it."""
    return shared("text-line-size", (e,), (link,), lambda: _size(["", *_line(e, link)]))


def _full_size(e: EntryView, lang: str, link: str | None) -> int:
    """Bytes of the entry in full with the separator before it (the larger of the two it may get)."""
    return shared("text-full-size", (e,), (lang, link),
                  lambda: _size(["", _rule("-"), "", render_entry_text(e, lang, link)]))


def _more_lines(n: int, edition: Edition, base: str | None, lang: str) -> list[str]:
    """The line that counts the entries a text part left out, and the archive's link when there is one."""
    ui = strings(lang)
    out = ["", *wrap(ui["text_more"].format(n=n))]
    if base:
        out.append(_labelled(link_strings(lang)["view_online"], edition_url(base, edition), ui))
    return out
