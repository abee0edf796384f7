"""Atom feeds (RFC 4287): the whole digest (an item per edition) and one per subsystem (an item per entry).

Ids are ``urn:uuid:`` values derived from the edition's exact repo and window (and the PR number), so they
stay the same across rebuilds and site moves. Links are absolute under the site URL when one is configured;
without one they are relative to the feed's own location (valid IRI references, but feed readers want the
site URL: set ``DIGEST_SITE_URL``). Text goes through ElementTree (XML escaping) after
:func:`renderers.escape.clean` dropped what XML 1.0 cannot carry; the ``type="html"`` content is HTML we
built with autoescape, so a feed reader rendering it shows PR text as text.
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from datetime import datetime

from prdigest.kernel.models import Edition, utc
from renderers.escape import clean
from renderers.site.pages import EditionPage, render_fragment, slug
from renderers.site.strings import site_strings
from renderers.view import counts, meta, strings, window

ATOM = "http://www.w3.org/2005/Atom"
#: Items per feed: a feed is for what is new, the archive pages hold the rest.
MAX_EDITIONS = 52
MAX_ENTRIES = 100
_NS = uuid.UUID("6d0c3a52-4c1e-4d39-9a2b-8f0b6f0d1c11")  # pr-digest's namespace for feed ids

ET.register_namespace("", ATOM)


def rfc3339(dt: datetime) -> str:
    """``2026-11-23T09:00:00Z``."""
    return utc(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


def _id(*parts: object) -> str:
    return f"urn:uuid:{uuid.uuid5(_NS, chr(31).join(str(p) for p in parts))}"


def _edition_id(ed: Edition) -> str:
    return _id("edition", ed.repo, rfc3339(ed.since), rfc3339(ed.until))


def _updated(ed: Edition) -> datetime:
    return ed.approved_at or ed.generated_at


def _el(parent: ET.Element, tag: str, text: str | None = None, *, cleaned: bool = False,
        **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    if text is not None:
        # ``cleaned``: HTML we rendered from already-cleaned view text (skipping a second pass over it).
        node.text = text if cleaned else clean(text)
    return node


def _feed(base: str | None, path: str, title: str, feed_id: str, updated: datetime | None,
          language: str, alternate: str) -> ET.Element:
    feed = ET.Element(f"{{{ATOM}}}feed", {"{http://www.w3.org/XML/1998/namespace}lang": language})
    _el(feed, "id", feed_id)
    _el(feed, "title", title)
    _el(feed, "updated", rfc3339(updated) if updated else "1970-01-01T00:00:00Z")
    _el(feed, "link", rel="self", type="application/atom+xml", href=_href(base, path, path))
    _el(feed, "link", rel="alternate", type="text/html", href=_href(base, alternate, path))
    author = _el(feed, "author")
    _el(author, "name", "pr-digest")
    _el(feed, "generator", "pr-digest")
    return feed


def _href(base: str | None, target: str, feed_path: str) -> str:
    """``target`` (a site path) absolute under ``base``, or relative to the feed when there is no base."""
    return base + target if base else "../" * feed_path.count("/") + target


def _serialise(feed: ET.Element) -> bytes:
    feed.text = "\n"
    for child in feed:  # one element a line: readable, and cheaper than ET.indent on a 100-item feed
        child.tail = "\n"
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True) + b"\n"


def digest_feed(pages: list[EditionPage], base: str | None, language: str, title: str) -> bytes:
    """``feed.xml``: one item per edition (newest first), its deep reads in the content."""
    path = "feed.xml"
    shown = pages[:MAX_EDITIONS]
    updated = max((_updated(p.edition) for p in shown), default=None)
    feed = _feed(base, path, title, _id("feed", base or "", "all"), updated, language, "index.html")
    for p in shown:
        ed, lang = p.edition, p.edition.language
        item = _el(feed, "entry")
        _el(item, "id", _edition_id(ed))
        _el(item, "title", p.name)
        _el(item, "updated", rfc3339(_updated(ed)))
        _el(item, "published", rfc3339(ed.approved_at or ed.generated_at))
        _el(item, "link", rel="alternate", type="text/html", href=_href(base, p.path, path))
        tally = " · ".join(f"{v.label(lang)} {n}" for v, n in counts(p.views).items() if n)
        _el(item, "summary", f"{window(ed)} · {strings(lang)['total'].format(total=len(p.views))}: {tally}")
        html = render_fragment("feed_edition.html.j2", groups=p.groups, href=_href(base, p.path, path))
        _el(item, "content", html, cleaned=True, type="html")
    return _serialise(feed)


def subsystem_feed(name: str, pages: list[EditionPage], base: str | None, language: str,
                   rendered: dict[tuple[str, int], str] | None = None, label: str | None = None) -> bytes:
    """``subsystems/<name>.xml``: one item per entry of the subsystem, newest edition first.

    ``rendered`` caches each entry's HTML across the feeds of its several subsystems.
    """
    rendered = {} if rendered is None else rendered
    path = f"subsystems/{slug(name)}.xml"
    sui = site_strings(language)
    items = [(p, e) for p in pages for e in p.views if name in p.names(e)][:MAX_ENTRIES]
    updated = max((_updated(p.edition) for p, _ in items), default=None)
    feed = _feed(base, path, sui["feed_of"].format(name=label or name), _id("feed", base or "", "subsystem", name),
                 updated, language, f"subsystems/{slug(name)}.html")
    for p, e in items:
        ed = p.edition
        item = _el(feed, "entry")
        _el(item, "id", _id("entry", ed.repo, rfc3339(ed.since), rfc3339(ed.until), e.number))
        _el(item, "title", f"[{e.badge}] {e.headline}")
        _el(item, "updated", rfc3339(_updated(ed)))
        _el(item, "link", rel="alternate", type="text/html", href=_href(base, f"{p.path}#pr-{e.number}", path))
        _el(item, "summary", f"#{e.number} {e.title} · {p.name}")
        key = (p.path, e.number)
        if key not in rendered:
            rendered[key] = render_fragment("feed_entry.html.j2", e=e, meta=meta(e, ed.language),
                                            ui=strings(ed.language))
        _el(item, "content", rendered[key], cleaned=True, type="html")
    return _serialise(feed)
