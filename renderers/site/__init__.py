"""The archive: a static site of every edition in the history, as pure functions from editions to files.

:func:`build_site` returns ``{relative path: bytes}``; :mod:`prdigest.publish.site` records an edition
and writes the files under ``DIR/site/``. Layout::

    index.html                          editions, newest first, counts per verdict and subsystem
    editions/<owner>/<repo>/<window>/   one page per edition; each entry is id="pr-<number>"
    subsystems/index.html, <name>.html  browsing by subsystem across editions
    feed.xml, subsystems/<name>.xml     Atom feeds (the whole digest, one per subsystem)
    search.html, search-index.json      client-side search
    assets/                             CSS and scripts (no request to any other host)
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import resources

from prdigest.kernel.models import Edition
from prdigest.kernel.vocabulary import Vocabulary
from renderers.escape import DEFAULT_LINK_HOSTS, one_line
from renderers.site.feeds import digest_feed, subsystem_feed
from renderers.site.links import edition_dir, edition_url, permalink, site_base
from renderers.site.pages import (
    edition_pages,
    labels,
    render_edition,
    render_index,
    render_search,
    render_subsystem,
    render_subsystems,
    slug,
    subsystem_names,
)
from renderers.site.search import search_index
from renderers.site.strings import site_strings

ASSETS = ("site.css", "site.js", "theme.js", "favicon.svg")

__all__ = ["build_site", "edition_dir", "edition_url", "permalink", "site_base"]


def site_title(editions: list[Edition], language: str) -> str:
    """``vllm-project/vllm PR digest archive`` for one repo, the generic title for several."""
    repos = sorted({one_line(e.repo) for e in editions})
    sui = site_strings(language)
    return sui["site_of"].format(repo=repos[0]) if len(repos) == 1 else sui["site"]


def build_site(editions: list[Edition], *, site_url: str | None = None,
               link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, language: str | None = None,
               vocabularies: Mapping[str, Vocabulary] | None = None, impact: bool = False) -> dict[str, bytes]:
    """Every file of the archive for ``editions`` (newest first), as ``{relative path: bytes}``.

    ``site_url`` (checked by :func:`site_base`) makes the feeds' links absolute; ``language`` is the
    site's own (index, subsystems, search), by default the newest edition's; ``vocabularies`` (by repo)
    label the subsystems as the email does (their names otherwise). ``impact`` shows each edition's "Affects
    your code" (the downstreams' file paths: off unless asked for, they are the teams' own).
    """
    base = site_base(site_url)
    lang = language or (editions[0].language if editions else "en")
    title = site_title(editions, lang)
    pages = edition_pages(editions, link_hosts, vocabularies)
    files: dict[str, str | bytes] = {
        "index.html": render_index(pages, lang, title),
        "search.html": render_search(lang, title),
        "search-index.json": search_index(pages, lang),
        "feed.xml": digest_feed(pages, base, lang, title),
        "subsystems/index.html": render_subsystems(pages, lang, title),
    }
    by_repo: dict[str, list[int]] = {}
    for i, p in enumerate(pages):
        by_repo.setdefault(p.edition.repo, []).append(i)
    for i, p in enumerate(pages):
        same = by_repo[p.edition.repo]
        k = same.index(i)
        newer = pages[same[k - 1]] if k > 0 else None
        older = pages[same[k + 1]] if k + 1 < len(same) else None
        files[p.path + "index.html"] = render_edition(p, title, newer, older, impact=impact)
    rendered: dict[tuple[str, int], str] = {}
    shown = labels(pages)
    for name in subsystem_names(pages):
        files[f"subsystems/{slug(name)}.html"] = render_subsystem(name, pages, lang, title)
        files[f"subsystems/{slug(name)}.xml"] = subsystem_feed(name, pages, base, lang, rendered, shown.get(name))
    static = resources.files("renderers.site") / "static"
    for asset in ASSETS:
        files[f"assets/{asset}"] = (static / asset).read_bytes()
    return {path: data.encode("utf-8") if isinstance(data, str) else data for path, data in files.items()}
