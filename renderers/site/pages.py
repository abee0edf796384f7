"""The archive's HTML pages (index, one per edition, subsystems, search), rendered with autoescaped Jinja2."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from prdigest.connect.relations import with_backlinks
from prdigest.connect.variants import ordered, pick_read_first
from prdigest.kernel import text
from prdigest.kernel.i18n import FALLBACK, plural_rule
from prdigest.kernel.links import DEFAULT_LINK_HOSTS
from prdigest.kernel.models import Edition, Entry, Verdict
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import DEFAULT_BUDGET
from renderers.escape import html_prose, one_line
from renderers.impact import ImpactBlock, impact_block
from renderers.relation_lines import connections
from renderers.relation_lines import words as connect_words
from renderers.site.links import edition_dir, link_strings
from renderers.site.strings import site_strings
from renderers.view import EntryView, Group, action_required, counts, groups, meta, strings, view, window

#: No request leaves the site: scripts, styles, the search index and images come from it alone; no inline
#: script or style; forms only submit to the site; no <base> can redirect relative links.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'self'")

_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,  # every value is escaped unless it is Markup we built from escaped parts
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters["prose"] = html_prose


def slug(name: str) -> str:
    """A subsystem's file name in ``subsystems/`` (names are ``[a-z0-9-]`` already; others are folded)."""
    return text.slug(name) or "-"


_env.filters["slug"] = slug


@dataclass(frozen=True)
class EditionPage:
    """One edition as the archive shows it: its folder, labels and entries (cleaned views, in email order).

    ``subsystems`` maps each entry's number to its subsystems as (name, shown) pairs: the name keys the
    subsystem pages and feeds, what is shown is the repo vocabulary's label (or the name).
    """

    edition: Edition
    path: str
    views: list[EntryView]
    subsystems: dict[int, list[tuple[str, str]]] = field(default_factory=dict)
    link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS

    def names(self, e: EntryView) -> list[str]:
        """The entry's subsystem names (for links and grouping)."""
        return [name for name, _ in self.subsystems.get(e.number, [])]

    @property
    def name(self) -> str:
        return f"{one_line(self.edition.repo)} {self.edition.week}"

    @property
    def groups(self) -> list[Group]:
        return groups(self.views, self.edition.language)


def edition_pages(editions: list[Edition], link_hosts: tuple[str, ...],
                  vocabularies: Mapping[str, Vocabulary] | None = None) -> list[EditionPage]:
    """Each edition's page data, in the order given (newest first); ``vocabularies`` (by repo) give the
    subsystems' labels, as in the email (names without one)."""
    pages = []
    for ed in with_backlinks(editions):  # "Reverted by #41377 in 2026-W47" on the earlier edition's entry
        vocabulary = (vocabularies or {}).get(ed.repo) or Vocabulary.open()
        entries = ordered(ed.published)
        subs = {}
        for e in entries:
            pairs = zip(e.subsystems, vocabulary.shown(e.subsystems, ed.language))
            subs[e.number] = [(n, one_line(shown) or n) for n, shown in ((one_line(a), b) for a, b in pairs) if n]
        views = [view(e, ed.language, link_hosts, vocabulary, ed.repo) for e in entries]
        pages.append(EditionPage(ed, edition_dir(ed), views, subs, link_hosts))
    return pages


def labels(pages: list[EditionPage]) -> dict[str, str]:
    """What each subsystem name is shown as (the newest edition's label wins)."""
    shown: dict[str, str] = {}
    for p in reversed(pages):
        for pairs in p.subsystems.values():
            shown.update(pairs)
    return shown


def _badges(views: list[EntryView], language: str) -> list[dict[str, object]]:
    return [{"verdict": v.value, "label": v.label(language), "count": n} for v, n in counts(views).items() if n]


def _common(language: str, root: str, title: str, site_title: str, here: str) -> dict[str, object]:
    return {"lang": language, "root": root, "title": title, "site_title": site_title, "here": here,
            "csp": CSP, "ui": site_strings(language), "link_ui": link_strings(language)}


def _root(path: str) -> str:
    return "../" * path.count("/")


def _read_first(edition: Edition) -> list[Entry]:
    """A reader of everything's read-first: the edition's ranking over its published entries, default budget."""
    return pick_read_first(edition.ranking, edition.published, DEFAULT_BUDGET)


def _impact_blocks(edition: Edition, link_hosts: tuple[str, ...]) -> list[ImpactBlock]:
    """One "Affects your code" block per downstream the edition's published entries touch."""
    names = sorted({i.downstream for e in edition.published for i in e.impact})
    return [b for name in names if (b := impact_block(edition, edition.published, name, link_hosts)) is not None]


def render_edition(page: EditionPage, site_title: str, newer: EditionPage | None,
                   older: EditionPage | None, *, impact: bool = False) -> str:
    """``editions/<owner>/<repo>/<window>/index.html``: every published entry, grouped as in the email."""
    ed, lang = page.edition, page.edition.language
    ui, sui = strings(lang), site_strings(lang)
    ctx = {
        "name": page.name, "repo": one_line(ed.repo), "week": ed.week, "window": window(ed),
        "approver": bool(ed.approver), "approved": sui["approved"].format(approver=one_line(ed.approver or "")),
        "total": ui["total"].format(total=len(page.views)), "badges": _badges(page.views, lang),
        "groups": page.groups, "connect": connections(ed, ed.published, page.link_hosts, first=_read_first(ed)),
        "cw": connect_words(lang), "action": action_required(page.views),
        "impact": _impact_blocks(ed, page.link_hosts) if impact else [],
    }
    metas = {e.number: meta(e, lang) for e in page.views}
    return _env.get_template("edition.html.j2").render(
        **_common(lang, _root(page.path + "index.html"), f"{page.name} · {sui['site']}", site_title, "edition"),
        ed=ctx, metas=metas, subs=page.subsystems, newer=newer, older=older, dui=ui)


def render_index(pages: list[EditionPage], language: str, site_title: str) -> str:
    """``index.html``: the editions, newest first, with their counts per verdict and per subsystem."""
    sui = site_strings(language)
    rows = []
    shown = labels(pages)
    for p in pages:
        subs = Counter(s for e in p.views for s in p.names(e))
        rows.append({"path": p.path, "name": p.name, "window": window(p.edition),
                     "total": strings(p.edition.language)["total"].format(total=len(p.views)),
                     "badges": _badges(p.views, p.edition.language),
                     "subsystems": [{"name": n, "label": shown.get(n, n), "count": c}
                                    for n, c in sorted(subs.items(), key=lambda i: (-i[1], i[0]))]})
    intro = sui["intro"].format(editions=len(pages), entries=sum(len(p.views) for p in pages))
    return _env.get_template("index.html.j2").render(
        **_common(language, "", site_title, site_title, "index"), editions=rows, intro=intro)


def subsystem_names(pages: list[EditionPage]) -> list[str]:
    """Every subsystem an archived entry names, most entries first."""
    tally = Counter(s for p in pages for e in p.views for s in p.names(e))
    return [n for n, _ in sorted(tally.items(), key=lambda i: (-i[1], i[0]))]


def render_subsystems(pages: list[EditionPage], language: str, site_title: str) -> str:
    """``subsystems/index.html``: each subsystem with its entry counts per verdict, its page and its feed."""
    sui = site_strings(language)
    verdicts = [{"value": v.value, "label": v.label(language)} for v in sorted(Verdict, key=lambda v: -v.rank)]
    rows = []
    shown = labels(pages)
    by_name: dict[str, list[EntryView]] = {}
    for p in pages:
        for e in p.views:
            for name in p.names(e):
                by_name.setdefault(name, []).append(e)
    for name in subsystem_names(pages):
        views = by_name[name]
        rows.append({"name": name, "label": shown.get(name, name), "total": len(views),
                     "counts": {v.value: n for v, n in counts(views).items()}})
    return _env.get_template("subsystems.html.j2").render(
        **_common(language, "../", f"{sui['subsystems']} · {site_title}", site_title, "subsystems"),
        subsystems=rows, verdicts=verdicts)


def render_subsystem(name: str, pages: list[EditionPage], language: str, site_title: str) -> str:
    """``subsystems/<name>.html``: the subsystem's entries in every edition, newest first, linking to them."""
    eds = [{"path": p.path, "name": p.name, "entries": [e for e in p.views if name in p.names(e)]}
           for p in pages]
    eds = [e for e in eds if e["entries"]]
    label = labels(pages).get(name, name)
    return _env.get_template("subsystem.html.j2").render(
        **_common(language, "../", f"{label} · {site_title}", site_title, "subsystems"),
        name=name, label=label, editions=eds, total=sum(len(e["entries"]) for e in eds))


def render_search(language: str, site_title: str) -> str:
    """``search.html``: the search form; ``assets/site.js`` fills the results from ``search-index.json``."""
    sui = site_strings(language)
    # The page's script picks a count's form itself: it is told the language's rule unless it is English's.
    rule = plural_rule(language if sui.has("search_found") else FALLBACK)
    return _env.get_template("search.html.j2").render(
        plural="" if rule == "one" or "|" not in sui["search_found"] else rule,
        **_common(language, "", f"{sui['search']} · {site_title}", site_title, "search"))


def render_fragment(template: str, **values: object) -> str:
    """A template of this folder rendered with autoescape (the feeds' HTML content)."""
    return _env.get_template(template).render(**values)
