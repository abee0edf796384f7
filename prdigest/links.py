"""URLs inside prose (titles, drafts): links to allowed hosts stay, any other is defanged and flagged.

A PR title or an LLM rationale can carry ``https://evil.example/login``: mail clients, Slack and the
Prefect UI's markdown turn a bare URL into a link, so the digest would vouch for it. Every medium shows
such a URL defanged (``hxxps://evil[.]example/login``): readable, not clickable, not auto-linked.
:func:`flag_foreign_links` marks the entry for the editor before review, naming the hosts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from prdigest.models import Entry

#: Hosts whose URLs may stay clickable in prose unless the caller names others (GitHub Enterprise).
DEFAULT_LINK_HOSTS: tuple[str, ...] = ("github.com",)

#: A URL as linkifiers see one: a scheme (any letters before ``://``, so ``javascript://`` too) or ``www.``,
#: then everything up to a space, a quote or an angle bracket. Trailing punctuation is not part of it.
_URL = re.compile(r"(?i)(?<![\w.-])(?:[a-z][a-z0-9+.-]{1,15}://|www\.)[^\s<>\"'`\u3000-\u9fff\uff00-\uffef]+")
_TRAILING = ".,;:!?)]}'\"。，；：！？）"


def _spans(text: str) -> Iterable[tuple[int, int, str]]:
    for match in _URL.finditer(text):
        url = match.group().rstrip(_TRAILING)
        if len(url) > len("www."):
            yield match.start(), match.start() + len(url), url


def host_of(url: str) -> str:
    """The URL's host, lower-cased ('' when there is none)."""
    target = url if "://" in url else "http://" + url
    try:
        return (urlsplit(target).hostname or "").lower()
    except ValueError:
        return ""


def is_allowed(url: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> bool:
    """Whether ``url`` is an http(s) URL on one of ``hosts`` (exactly: no look-alike subdomains), without
    user info (``https://github.com@evil.example`` is evil.example)."""
    if not re.match(r"(?i)https?://", url):
        return False
    try:
        parts = urlsplit(url)
    except ValueError:
        return False
    return not (parts.username or parts.password) and (parts.hostname or "").lower() in {h.lower() for h in hosts}


def defang_url(url: str) -> str:
    """``https://evil.example/x`` → ``hxxps://evil[.]example/x``: readable, never auto-linked.

    Other schemes lose their ``://`` (``javascript[:]//``); the host's dots, ``@`` and ``:`` are bracketed.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    end = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
    host = rest[:end].replace(".", "[.]").replace("@", "[@]").replace(":", "[:]")
    if not sep:
        lead = ""
    elif scheme.lower() in ("http", "https"):
        lead = "hxxp" + scheme[4:].lower() + "://"
    else:
        lead = scheme + "[:]//"
    return lead + host + rest[end:]


def foreign_urls(text: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> list[str]:
    """The URLs in ``text`` that are not on an allowed host, in order."""
    return [url for _, _, url in _spans(text) if not is_allowed(url, hosts)]


def defang(text: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> str:
    """``text`` with every URL not on an allowed host defanged; allowed URLs are left as they are."""
    out, last = [], 0
    for start, end, url in _spans(text):
        if not is_allowed(url, hosts):
            out += [text[last:start], defang_url(url)]
            last = end
    return "".join(out) + text[last:] if out else text


def _prose(entry: Entry) -> list[str]:
    return [entry.title, entry.headline, entry.rationale, *entry.focus, *entry.followups]


def flag_foreign_links(entries: list[Entry], hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> list[Entry]:
    """``entries`` with each one whose prose links outside ``hosts`` marked for the editor (a warning
    naming the hosts; ``needs_editing``). Every medium shows those URLs defanged."""
    flagged = []
    for entry in entries:
        found = sorted({host_of(u) or u[:60] for text in _prose(entry) for u in foreign_urls(text, hosts)})
        if found:
            warning = (f"links to {', '.join(found[:5])}{' …' if len(found) > 5 else ''} (not an allowed link "
                       "host): shown defanged to readers; remove or rewrite them")
            entry = entry.model_copy(update={"needs_editing": True,
                                             "warnings": [*entry.warnings, warning]})
        flagged.append(entry)
    return flagged
