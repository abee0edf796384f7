"""The digest email: MJML (Jinja2 templates in ``templates/``) compiled to HTML by mjml-python, plus text.

Escaping: the templates run with autoescape ON, so every value is HTML-escaped unless it is ``Markup``
this module built from escaped parts (entry fragments). Values are :func:`~renderers.escape.clean`-ed
first (the :class:`~renderers.view.EntryView`), hrefs come only from :func:`~renderers.escape.pr_url`.

Size: Gmail clips HTML above ~102 KB. Entries are plain ``<div>`` blocks inside one ``mj-text`` per
verdict group (an ``mj-section`` per entry would cost ~2.3 KB each). When the full digest exceeds
:data:`BUDGET`, deep-read entries stay in full and the others become one line each; if that is still too
big, only the first deep-read entries stay in full (as many as fit). ``compact`` says so, and so does
the email.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape
from mjml import mjml2html

from prdigest.connect.variants import Variant
from prdigest.kernel.errors import RenderError
from prdigest.kernel.i18n import messages
from prdigest.kernel.models import Edition, RenderProblem, Verdict
from prdigest.readers.selfservice.links import footer_links
from renderers.escape import DEFAULT_LINK_HOSTS, html_prose, one_line, plain_prose, truncate
from renderers.impact import impact_block
from renderers.relation_lines import Connections, variant_connections
from renderers.relation_lines import words as connect_words
from renderers.shared import active as shared_active
from renderers.shared import shared, sharing
from renderers.site.links import edition_url, link_strings, permalink, site_base
from renderers.text import MESSAGE_BUDGET, render_text
from renderers.view import (
    EntryView,
    Group,
    action_required,
    counts,
    groups,
    meta,
    read_first_order,
    strings,
    subject,
    view,
    window,
)

#: Largest HTML we send, in bytes: below Gmail's ~102 KB clip with room for transfer-encoding variance.
BUDGET = 95_000

#: Fewest bytes an entry takes as one line (a link and a short headline): bounds how many entries can fit.
MIN_LINE_BYTES = 90
#: Bytes of a one-line-per-entry email besides its entries (head, styles, group titles, notes, footer).
LIST_OVERHEAD = 14_000
#: Longest headline, in characters, of an entry shown as one line.
LINE_HEADLINE = 120

#: System fonts only (no external font links); CJK faces for zh-CN readers.
FONT = ("-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
        "'PingFang SC','Hiragino Sans GB','Microsoft YaHei','Noto Sans CJK SC',sans-serif")

#: Verdict colours, light mode (dark mode overrides live in the template's mj-style).
ACCENT = {"deep-read": "#1a7f37", "skim": "#bf8700", "skip": "#8c959f"}
_BADGE = {"deep-read": ("#dafbe1", "#116329"), "skim": ("#fff8c5", "#7d4e00"), "skip": ("#eaeef2", "#57606a")}

#: Inline styles: only what must survive clients that drop <style> (colours, sizes, rules between entries),
#: kept short because each is paid once per entry; spacing lives in the template's mj-style classes.
STYLE: dict[str, Any] = {
    "badge": {k: f"background:{bg};color:{fg}" for k, (bg, fg) in _BADGE.items()},
    "entry_first": "",
    "entry": "border-top:1px solid #e5e7eb",
    "eyebrow": "font-size:12px;color:#59636e",
    "headline": "font-size:18px;font-weight:700;color:#1f2328",
    "muted": "color:#59636e",
    "meta": "font-size:13px;color:#59636e",
    "link": "color:#0969da",
    "line": "border-top:1px solid #e5e7eb",
}
#: Badge shape, inline in the header only (entries get it from the .b class).
BADGE_SHAPE = "display:inline-block;padding:1px 8px;border-radius:10px;font-size:12px;font-weight:700"

_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # every value is escaped unless it is Markup we built
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=False,
)
_env.filters["prose"] = html_prose


@dataclass(frozen=True)
class RenderedEmail:
    """One variant's email: what the deliverer puts in the message (subject, html and text parts)."""

    subject: str
    preheader: str
    html: str
    text: str
    problems: list[RenderProblem] = field(default_factory=list)
    #: True when some entries are shown as one line to stay under :data:`BUDGET`.
    compact: bool = False

    @property
    def size(self) -> int:
        """Bytes of HTML (UTF-8): what Gmail measures against its clipping limit."""
        return len(self.html.encode("utf-8"))


def preheader(edition: Edition, views: list[EntryView]) -> str:
    """The inbox preview line: the deep-read headlines, or the counts when there are none."""
    ui = strings(edition.language)
    deep = [plain_prose(e.headline) for e in views if e.verdict is Verdict.DEEP_READ]  # no `code` in a preview
    if not deep:
        return truncate(ui["preheader_none"], 140)
    sep = messages(edition.language, "email")["joiner"]
    return truncate(one_line(ui["preheader_deep"] + sep.join(deep[:5])), 140)


@dataclass
class _Fragments:
    """An entry's two HTML fragments (Markup): in full and as one line."""

    view: EntryView
    full: Markup
    line: Markup


def _fragments(views: list[EntryView], language: str,
               links: dict[int, str] | None = None, full: bool = True) -> list[_Fragments]:
    """Each entry's HTML in full and as one line (macros in ``email_entry.html.j2``, autoescaped).

    ``links`` maps PR numbers to archive permalinks: the full entry shows one, the one-line entry's
    headline links to it.
    """
    macros: Any = _env.get_template("email_entry.html.j2").module  # the template's macros, by name
    ui = strings(language)
    label = link_strings(language)["permalink"]
    firsts = {g.entries[0].number for g in groups(views, language)}
    frags = []
    for e in views:
        first = e.number in firsts  # no rule above the first entry under a group's title
        link = (links or {}).get(e.number)

        def make(e: EntryView = e, first: bool = first, link: str | None = link) -> tuple[Markup, Markup]:
            line = macros.line(replace(e, headline=truncate(e.headline, LINE_HEADLINE)), STYLE, first, link)
            # A huge week shows every entry as one line: its full fragments would never be used.
            whole = (macros.full(e, meta(e, language, subsystems=False), ui, STYLE, first, link, label)
                     if full else line)
            return Markup(whole), Markup(line)

        # Made once per entry in a render step, however many variants show it (renderers.shared).
        whole, line = shared("email-entry", (e,), (language, first, link, full), make)
        frags.append(_Fragments(e, whole, line))
    return frags


def _group_fragments(frags: list[_Fragments], full: Callable[[EntryView], bool], language: str
                     ) -> list[tuple[Group, list[Markup]]]:
    """Each verdict group of ``frags`` with its entries' fragments: ``full(e)`` decides which are in full."""
    by_number = {f.view.number: f for f in frags}
    return [(g, [by_number[e.number].full if full(e) else by_number[e.number].line for e in g.entries])
            for g in groups([f.view for f in frags], language)]


def _mjml(edition: Edition, variant: Variant, subj: str, pre: str, frags: list[_Fragments],
          full: Callable[[EntryView], bool], notes: Sequence[str], online: dict[str, str] | None = None,
          link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, reader_links: tuple[str, ...] = (), *,
          marks: list[Markup] | None = None, connect: Connections | None = None,
          impact: dict[str, object] | None | bool = False, badges: list[dict[str, object]] | None = None) -> str:
    """The MJML document: ``full(e)`` decides which entries are shown in full. ``marks``: one per group, in
    place of its entries (:func:`_assembled`); ``connect`` and ``impact``: made already for this variant."""
    lang = edition.language
    ui = strings(lang)
    views = [f.view for f in frags]
    group_ctx = []
    for i, (g, fragments) in enumerate(_group_fragments(frags, full, lang)):
        html = marks[i] if marks is not None else Markup("").join(fragments)
        group_ctx.append({"verdict": g.verdict.value, "label": g.label, "count": len(g.entries),
                          "accent": ACCENT[g.verdict.value], "html": html})
    badges = _badges(variant, lang) if badges is None else badges
    footer = ui["footer"]
    if edition.approver:
        footer += " · " + ui["approved"].format(approver=one_line(edition.approver))
    return _env.get_template("email.mjml.j2").render(
        lang=lang, subject=subj, preheader=pre, font=FONT, ui=ui, week=edition.week,
        repo=one_line(edition.repo), window=window(edition), filter=one_line(variant.filter.describe(lang)),
        total=ui["total"].format(total=len(variant.entries)), badges=badges, notes=notes,
        groups=group_ctx, action=action_required(views), footer=footer, online=online,
        reader_links=footer_links(reader_links, lang),
        connect=connect if connect is not None else variant_connections(edition, variant, link_hosts),
        cw=connect_words(lang), impact=_impact(edition, variant, link_hosts) if impact is False else impact,
    )


def _badges(variant: Variant, language: str) -> list[dict[str, object]]:
    """The header's count of entries per verdict."""
    badge_style: dict[str, str] = STYLE["badge"]
    return [{"verdict": v.value, "label": v.label(language), "count": n,
             "style": f"{BADGE_SHAPE};{badge_style[v.value]}"}
            for v, n in counts(variant.entries).items() if n]


#: The severity badge of an upstream PR in "Affects your code".
IMPACT_BADGE = {"breaks": "background:#ffebe9;color:#a40e26", "check": "background:#fff8c5;color:#7d4e00"}


def _impact(edition: Edition, variant: Variant, link_hosts: tuple[str, ...]) -> dict[str, object] | None:
    """The "Affects your code" block for the template (None: the variant's readers have no downstream)."""
    block = impact_block(edition, variant.entries, variant.filter.downstream, link_hosts)
    if block is None:
        return None
    prs = [{"number": pr.number, "url": pr.url, "headline": html_prose(pr.headline),
            "severity": block.severity_words[pr.severity], "style": f"{BADGE_SHAPE};{IMPACT_BADGE[pr.severity]}",
            "lines": [html_prose(line) for line in pr.lines], "more": pr.more, "todo": pr.todo,
            "partial": pr.partial} for pr in block.prs]
    return {"title": block.title, "none": block.none, "prs": prs, "partial_note": block.partial_note}


def _probe(fragment: Markup) -> str | None:
    """The compile error of one fragment on its own, or None if it compiles."""
    doc = (f"<mjml><mj-body><mj-section><mj-column><mj-text>{fragment}</mj-text>"
           "</mj-column></mj-section></mj-body></mjml>")
    try:
        mjml2html(doc, fonts={})
    except ValueError as exc:
        return str(exc)
    return None


def compile_isolating(build: Callable[[list[_Fragments]], str], frags: list[_Fragments], variant: str = "",
                      ) -> tuple[str, list[_Fragments], list[RenderProblem]]:
    """Compile ``build(frags)``; if MJML refuses it, leave out the entries whose fragments fail alone.

    Returns the HTML, the fragments kept and a problem per entry left out. Raises RenderError when the
    document still does not compile without them (the fault is in the template, not in an entry).
    """
    try:
        return mjml2html(build(frags), fonts={}), frags, []
    except ValueError as exc:
        first_error = str(exc)
    problems: list[RenderProblem] = []
    kept: list[_Fragments] = []
    for f in frags:
        error = _probe(f.full) or _probe(f.line)
        if error:
            problems.append(RenderProblem(f.view.number, "email", variant,
                                          f"MJML could not compile this entry: {error}"))
        else:
            kept.append(f)
    try:
        return mjml2html(build(kept), fonts={}), kept, problems
    except ValueError as exc:
        raise RenderError(f"the email template does not compile even without failing entries "
                          f"({first_error}; then {exc}): fix renderers/templates/email.mjml.j2") from exc


#: Marks around a fragment compiled alone, and in place of a group's entries in a variant's document: elements,
#: so that the text beside them is what it is beside an entry (whose fragment starts and ends with a tag).
_MARK = "<i>prdigest-mark-{}</i>"


def _compiled_between_marks(text: str) -> str | None:
    """The HTML MJML makes of ``text`` inside an ``mj-text``, between two marks; None when it does not compile."""
    start, end = _MARK.format("start"), _MARK.format("end")
    doc = (f"<mjml><mj-body><mj-section><mj-column><mj-text>{start}{text}{end}</mj-text>"
           "</mj-column></mj-section></mj-body></mjml>")
    try:
        html = mjml2html(doc, fonts={})
    except ValueError:
        return None
    first, last = html.find(start), html.rfind(end)
    if first < 0 or last < first or html.count(start) != 1 or html.count(end) != 1:
        return None
    return html[first + len(start):last]


def _compiled_fragment(fragment: Markup) -> str | None:
    """The HTML MJML makes of one entry's fragment (``<br>`` becomes ``<br />``, the line breaks between tags
    go, ...), compiled alone once per render step (:mod:`renderers.shared`); None when it does not compile
    alone, or does not start and end with a tag (then its neighbours' text could change how it compiles)."""

    def make() -> str | None:
        text = str(fragment)
        if not (text.startswith("<") and text.endswith(">")):
            return None
        return _compiled_between_marks(text)

    return shared("email-mjml", (fragment,), (), make)


def _compiled_note(note: str) -> str | None:
    """The HTML MJML makes of a note's text (escaped, as the template writes it), between the tags of its
    ``div`` as between two marks: compiled once per render step for every variant that shows it."""
    return shared("email-note", (), (note,), lambda: _compiled_between_marks(str(escape(note))))


def _assembled(build_groups: Callable[[list[Markup], list[Markup]], str], groups_html: list[list[Markup]],
               notes: list[str], skeletons: dict[int, str | None],
               compiled_fragments: dict[int, tuple[Markup, str | None]]) -> str | None:
    """A variant's HTML without compiling its entries again: its document compiled with a mark in place of each
    group's entries and of each note's text, then each mark replaced by what MJML made of the group's
    fragments (:func:`_compiled_fragment`) or the note (:func:`_compiled_note`). The same bytes as compiling the
    whole document (``tests/test_renderers.py`` holds them side by side). The document with marks is the same
    in each of a variant's attempts (only the notes and which entries are in full differ), so it is
    compiled once per number of notes (``skeletons``, the variant's; ``compiled_fragments``: its fragments'
    compiled HTML by id, kept with the fragment). None when an entry's fragment or a note
    does not compile alone, or the document does not compile: then the caller compiles it whole and finds out."""
    compiled = []
    for group in groups_html:
        parts = []
        for fragment in group:
            known = compiled_fragments.get(id(fragment))
            if known is None or known[0] is not fragment:
                known = compiled_fragments[id(fragment)] = (fragment, _compiled_fragment(fragment))
            if known[1] is None:
                return None
            parts.append(known[1])
        compiled.append("".join(parts))
    maybe_notes = [_compiled_note(n) for n in notes]
    notes_html = [n for n in maybe_notes if n is not None]
    if len(notes_html) < len(maybe_notes):
        return None
    note_marks, marks = _marks(len(groups_html), len(notes))
    skeleton = _skeleton(build_groups, len(groups_html), len(notes), skeletons)
    if skeleton is None:
        return None
    found = [(skeleton.find(m), m, html) for m, html in zip(note_marks + marks, notes_html + compiled)]
    pieces, rest = [], skeleton
    for _, mark, html in sorted(found):
        before, _, rest = rest.partition(mark)
        pieces += [before, html or ""]  # every compiled note and group is a string (checked above)
    return "".join(pieces) + rest


def _marks(groups: int, notes: int) -> tuple[list[str], list[str]]:
    """The marks in place of each note's text and of each group's entries."""
    return [_MARK.format(f"note-{i}") for i in range(notes)], [_MARK.format(f"group-{i}") for i in range(groups)]


def _skeleton(build_groups: Callable[[list[Markup], list[Markup]], str], groups: int, notes: int,
              skeletons: dict[int, str | None]) -> str | None:
    """The variant's document with marks, compiled once per number of notes; None when it does not compile or a
    mark is not there exactly once (then the document is compiled whole)."""
    if notes not in skeletons:
        note_marks, marks = _marks(groups, notes)
        try:
            skeleton: str | None = mjml2html(build_groups([Markup(m) for m in marks],
                                                          [Markup(m) for m in note_marks]), fonts={})
        except ValueError:
            skeleton = None
        if skeleton is not None and (any(skeleton.count(m) != 1 for m in note_marks + marks)
                                     or skeleton.count("<i>prdigest-mark-") != len(marks) + len(note_marks)):
            skeleton = None
        skeletons[notes] = skeleton
    return skeletons[notes]


def _assembled_size(build_groups: Callable[[list[Markup], list[Markup]], str], groups_html: list[list[Markup]],
                    notes: list[str], skeletons: dict[int, str | None],
                    compiled_fragments: dict[int, tuple[Markup, str | None]],
                    sizes: dict[int, tuple[Markup, int]]) -> int | None:
    """The bytes (UTF-8) of what :func:`_assembled` would make of these groups and notes, summed from the sizes of
    their compiled pieces without putting them together (``sizes``: each fragment's, by id, kept with it); None
    when it would not assemble."""
    total = 0
    for group in groups_html:
        for fragment in group:
            known = sizes.get(id(fragment))
            if known is None or known[0] is not fragment:
                compiled = compiled_fragments.get(id(fragment))
                if compiled is None or compiled[0] is not fragment:
                    compiled = compiled_fragments[id(fragment)] = (fragment, _compiled_fragment(fragment))
                if compiled[1] is None:
                    return None
                known = sizes[id(fragment)] = (fragment, len(compiled[1].encode("utf-8")))
            total += known[1]
    for note in notes:
        html = _compiled_note(note)
        if html is None:
            return None
        total += len(html.encode("utf-8"))
    skeleton = _skeleton(build_groups, len(groups_html), len(notes), skeletons)
    if skeleton is None:
        return None
    marks = sum(len(m) for part in _marks(len(groups_html), len(notes)) for m in part)  # ASCII: bytes
    return total + len(skeleton.encode("utf-8")) - marks


def render_email(edition: Edition, variant: Variant, *, budget: int = BUDGET,
                 link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, site_url: str | None = None,
                 reader_links: tuple[str, ...] = (), whole: bool = False) -> RenderedEmail:
    """The email for ``variant``: subject, preheader, HTML (under ``budget`` bytes when possible), text.

    An entry whose HTML cannot be compiled is left out and reported in ``problems``; the others render.
    ``link_hosts`` adds hosts (GitHub Enterprise) whose PR URLs may become links. ``site_url`` (the
    archive) adds "view in browser" and a permalink per entry. ``reader_links`` (``unsubscribe``,
    ``preferences``) puts each link's placeholder in the footer, for each reader's composer to fill.
    ``whole``: compile every document whole, entries included (the same bytes, slower: the reference the
    assembly of compiled entries is tested against).
    """
    if not whole and not shared_active():
        # Each attempt reuses the entries compiled by the first (called outside a render step's sharing).
        with sharing({}):
            return render_email(edition, variant, budget=budget, link_hosts=link_hosts, site_url=site_url,
                                reader_links=reader_links)
    lang = edition.language
    ui = strings(lang)
    # The body in read-first order (HTML and text alike): the entries the top list names lead their verdict.
    variant = replace(variant, entries=read_first_order(variant.entries, variant.read_first))
    # A week too long for one line per entry in the budget only views what the HTML can hold.
    huge = len(variant.entries) > budget // MIN_LINE_BYTES
    listed = variant.entries[: budget // MIN_LINE_BYTES] if huge else variant.entries
    views = [view(e, lang, link_hosts, variant.vocabulary, edition.repo) for e in listed]
    subj = subject(edition, variant)
    pre = preheader(edition, views)
    base = site_base(site_url)
    links = {e.number: permalink(base, edition, e.number) for e in views} if base else None
    online = {"url": edition_url(base, edition), "label": link_strings(lang)["view_online"]} if base else None
    frags = _fragments(views, lang, links, full=not huge)
    problems: list[RenderProblem] = []

    # The same in every attempt: made once.
    connect = variant_connections(edition, variant, link_hosts)
    impact = _impact(edition, variant, link_hosts)
    badges = _badges(variant, lang)

    skeletons: dict[int, str | None] = {}  # the variant's document with marks, by number of notes
    compiled_fragments: dict[int, tuple[Markup, str | None]] = {}

    def notes_of(fs: list[_Fragments], note: str | None) -> list[str]:
        notes = [note] if note else []
        if problems or len(fs) < len(frags):
            dropped = sorted({p.number for p in problems} | ({f.view.number for f in frags}
                                                              - {f.view.number for f in fs}))
            notes.append(ui["problems"].format(n=len(dropped), numbers=", ".join(f"#{n}" for n in dropped)))
        return notes

    def builder(full: Callable[[EntryView], bool], note: str | None) -> Callable[..., str]:
        def build(fs: list[_Fragments], marks: list[Markup] | None = None,
                  notes: list[Markup] | None = None) -> str:
            return _mjml(edition, variant, subj, pre, fs, full, notes_of(fs, note) if notes is None else notes,
                         online, link_hosts, reader_links, marks=marks, connect=connect, impact=impact,
                         badges=badges)
        return build

    def attempt(full: Callable[[EntryView], bool], note: str | None) -> str:
        nonlocal frags, problems
        build = builder(full, note)
        # Each entry and note compiled once per render step, the variant's document around them once; when one
        # does not compile alone (or the document does not), the document is compiled whole as before.
        assembled = None if whole else _assembled(
            lambda marks, notes: build(frags, marks, notes),
            [fragments for _, fragments in _group_fragments(frags, full, lang)], notes_of(frags, note),
            skeletons if not problems else {}, compiled_fragments)
        if assembled is not None:
            return assembled
        html, frags, new = compile_isolating(build, frags, variant.key)
        problems += new
        return html

    fragment_sizes: dict[int, tuple[Markup, int]] = {}

    def measured(full: Callable[[EntryView], bool], note: str | None) -> tuple[int, str | None]:
        """A layout's size in bytes: told from its compiled pieces' sizes when it assembles (no attempt, no
        HTML: None), else by an attempt (and its HTML). The same number either way, so the search below takes
        the same steps, and the layout it settles on is the only one put together in the common case."""
        if not whole and not problems:
            build = builder(full, note)
            told = _assembled_size(lambda marks, notes: build(frags, marks, notes),
                                   [fragments for _, fragments in _group_fragments(frags, full, lang)],
                                   notes_of(frags, note), skeletons, compiled_fragments, fragment_sizes)
            if told is not None:
                return told, None
        html = attempt(full, note)
        return size(html), html

    def made(full: Callable[[EntryView], bool], note: str | None, html: str | None) -> str:
        return html if html is not None else attempt(full, note)

    def size(html: str) -> int:
        return len(html.encode("utf-8"))

    # Fragment sizes bound the document's: a 20,000-entry week is not compiled whole to learn it is too big.
    full_bytes = sum(len(str(f.full).encode("utf-8")) for f in frags)
    line_bytes = [len(str(f.line).encode("utf-8")) for f in frags]
    if huge or sum(line_bytes) > budget:
        # Not even one line per entry fits: the first entries in reading order (deep reads first) as one
        # line each, and a note that the others are in the plain-text part.
        room, shown = budget - LIST_OVERHEAD, 0
        while shown < len(frags) and room - line_bytes[shown] >= 0:
            room -= line_bytes[shown]
            shown += 1
        total = len(variant.entries)
        frags = frags[:shown]
        note = messages(lang, "email")["listed"].format(shown=f"{shown:,}", total=f"{total:,}")
        html = attempt(lambda e: False, note)
        return RenderedEmail(subject=subj, preheader=pre, html=html, text=render_text(
            edition, variant, link_hosts=link_hosts, site_url=site_url, reader_links=reader_links, connect=connect,
            budget=_text_budget(html)), problems=problems, compact=True)
    def everything(e: EntryView) -> bool:
        return True

    def deep_reads(e: EntryView) -> bool:
        return e.verdict is Verdict.DEEP_READ

    told, html_made = measured(everything, None) if full_bytes < budget else (budget + 1, "")
    compact = False
    if told <= budget:
        html = made(everything, None, html_made)
    else:
        compact = True
        deep = [f.view.number for f in frags if f.view.verdict is Verdict.DEEP_READ]
        told, html_made = measured(deep_reads, ui["compact_all"])
        layout: tuple[Callable[[EntryView], bool], str, str | None] = (deep_reads, ui["compact_all"], html_made)
        if told > budget:
            # Keep the first k deep-read entries in full: the largest k that fits (k = 0 if none does).
            lo, hi = 0, len(deep) - 1
            best: tuple[Callable[[EntryView], bool], str, str | None] | None = None
            while lo <= hi:
                k = (lo + hi) // 2
                chosen = set(deep[:k])

                def in_full(e: EntryView, chosen: set[int] = chosen) -> bool:
                    return e.number in chosen

                note = ui["compact_some"].format(full=k) if k else ui["compact_none"]
                told, html_made = measured(in_full, note)
                if told <= budget:
                    best, lo = (in_full, note, html_made), k + 1
                else:
                    hi = k - 1
            # Nothing fits: every entry as one line, over budget (Gmail offers "View entire message").
            layout = best if best is not None else (lambda e: False, ui["compact_none"], None)
        html = made(*layout)
    return RenderedEmail(subject=subj, preheader=pre, html=html, text=render_text(edition, variant,
                         link_hosts=link_hosts, site_url=site_url, reader_links=reader_links, connect=connect,
                         views=views, budget=_text_budget(html)), problems=problems, compact=compact)


def _text_budget(html: str) -> int:
    """Most bytes of the text part: no more than the HTML part, nor more than the HTML part leaves of
    :data:`MESSAGE_BUDGET` (a whole message, both parts encoded, then stays under 200 KB)."""
    size = len(html.encode("utf-8"))
    return max(0, min(size, MESSAGE_BUDGET - size))
