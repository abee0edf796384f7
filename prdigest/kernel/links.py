"""URLs inside prose (titles, drafts): the repo's own PR, issue and commit URLs stay, any other is defanged
and flagged.

A PR title or an LLM rationale can carry ``https://evil.example/login``, a scheme-less
``github-security-check.com/verify`` or a real GitHub page that is no part of the repo
(``https://github.com/login/device``, an OAuth authorize URL): mail clients, Slack and the Prefect UI's
markdown turn each into a link, so the digest would vouch for it. Every medium shows such a URL defanged
(``hxxps://evil[.]example/login``): readable, not clickable, not auto-linked. :func:`flag_foreign_links`
marks the entry for the editor before review, naming what it links to.

A URL is judged as a browser would open it, not as it is written: its path with dot segments resolved
(``/pull/1/../../../login/device`` is ``/login/device``; ``%2e``, ``\\`` and ``.%2E`` count as a browser
counts them) and its host as DNS sees it. Only an ASCII host can be allowed: a look-alike with a Cyrillic
letter (``gіthub.com``) is another host, found in prose with or without a scheme, and is shown by its
punycode (``xn--gthub-n4a[.]com``) so readers see that it is not the one it looks like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import SplitResult, urlsplit

from prdigest.kernel.models import Entry

#: Hosts whose URLs may stay clickable in prose unless the caller names others (GitHub Enterprise).
DEFAULT_LINK_HOSTS: tuple[str, ...] = ("github.com",)

_REST = r"[^\s<>\"'`\u3000-\u9fff\uff00-\uffef]"
#: Characters of a host's label as linkifiers and browsers accept them: letters and digits of any script but
#: the CJK ones (a Chinese sentence runs into a URL without a space; its characters are not the host's), so
#: ``gіthub.com`` (Cyrillic і) is one host, not ``thub.com`` or nothing.
_CJK = r"\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_L = rf"[^\W_{_CJK}]"
_LH = rf"(?:{_L}|-)"  # a label's inner characters (a hyphen too); _L at its ends
#: Top-level domains that linkifiers (Slack, Gmail, Outlook) link even without a scheme or a path. File
#: extensions that are also country domains (``.py``, ``.md``, ``.sh``, ``.rs``, ``.cc``) are left out:
#: ``setup.py`` in a focus point is a file, and defanging every one would make the digest unreadable.
_BARE_TLDS = ("com|net|org|io|co|app|dev|xyz|info|biz|me|ai|online|site|top|club|live|link|click|shop|"
              "page|cloud|tech|store|ru|cn|tk|ml|ga|cf|gq|uk|de|fr|jp|us|au|ca|eu|nl|br|it|es|pl|kr|ch|se|tw|hk|sg|ly|"
              "gg|to|tv|ws|su|pw|cx|example")
#: Schemes written without ``//`` that a mail client, Slack or a browser still follows.
_COLON_SCHEMES = "mailto|javascript|vbscript|data|tel|sms|file|callto|skype|facetime|intent"
#: A URL as linkifiers see one: a scheme (any letters before ``://``, so ``javascript://`` too), ``www.``
#: (``www2.`` too), or a scheme-less domain (``evil.example``) followed by a path or ending in a common
#: top-level domain; then everything up to a space, a quote or an angle bracket. Trailing punctuation is
#: not part of it. Module paths (``vllm.config``, ``torch.nn``) have neither, so they stay text.
_URL = re.compile(
    rf"(?i)(?<![_.@/-])(?<!{_L})(?:"
    rf"(?:[a-z][a-z0-9+.-]{{1,15}}://|www\d{{0,3}}\.){_REST}+"
    # A scheme that needs no "//" (mail clients and Slack link mailto:, a browser runs javascript:).
    rf"|(?:{_COLON_SCHEMES}):{_REST}+"
    # Scheme-relative (``//evil.example/x``): an href or a markdown link opens it on the page's own scheme.
    rf"|(?<![:\w])//(?:{_L}(?:{_LH}{{0,62}}{_L})?\.)+{_L}{_LH}{{0,62}}{_L}(?::\d{{1,5}})?(?:/{_REST}*)?"
    rf"|(?:{_L}(?:{_LH}{{0,62}}{_L})?\.)+{_L}{_LH}{{0,62}}{_L}(?::\d{{1,5}})?/{_REST}*"
    rf"|(?:{_L}(?:{_LH}{{0,62}}{_L})?\.)+(?:{_BARE_TLDS})(?::\d{{1,5}})?(?![\w-]|\.[a-z0-9])"
    rf")")
#: GitHub's owner and repository name alphabet.
NAME = r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}"
#: The paths of a repo that may stay links: its pull requests, issues and commits (with any sub-page).
_REPO_PATH = re.compile(rf"^/(?P<repo>{NAME}/{NAME})/"
                        r"(?:(?:pull|issues)/[1-9][0-9]{0,9}|commit/[0-9a-fA-F]{7,40})(?:/[\w./-]*)?$")
_TRAILING = ".,;:!?)]}'\"。，；：！？）"


def pr_link(repo: str, number: int, host: str = "github.com") -> str:
    """The web address of ``repo``'s (``owner/name``) pull request ``number``: the one spelling of a PR URL,
    ``https://<host>/<owner>/<name>/pull/<n>``."""
    return f"https://{host}/{repo}/pull/{number}"


def page_pattern(kinds: str = "pull", repo: str = "repo", number: str = "n") -> str:
    """The regex of a repo page's address as prose and records write it: ``http(s)://<host>/<owner>/<name>/<kind>/<n>``,
    ``kinds`` an alternation (``pull``, ``issues``, ``issues|pull``), the ``owner/name`` and the number in the
    groups named ``repo`` and ``number`` (``repo`` and ``n`` by default). Any host: the caller compares the repo (links
    are judged by
    :func:`allowed_parts`, PR links made by ``renderers.escape.pr_url``)."""
    return rf"https?://[^/\s]+/(?P<{repo}>[\w.-]+/[\w.-]+)/(?:{kinds})/(?P<{number}>\d{{1,9}})"


def _spans(text: str) -> Iterable[tuple[int, int, str]]:
    for match in _URL.finditer(text):
        url = match.group().rstrip(_TRAILING)
        if len(url) > len("www."):
            yield match.start(), match.start() + len(url), url


def host_of(url: str) -> str:
    """The URL's host, lower-cased ('' when there is none)."""
    target = url if "://" in url else "http:" + url if url.startswith("//") else "http://" + url
    try:
        return (urlsplit(target.replace("\\", "/")).hostname or "").lower()
    except ValueError:
        return ""


def ascii_host(host: str) -> str:
    """``host`` as DNS sees it: IDNA (punycode) labels for any that is not ASCII (``gіthub.com`` →
    ``xn--gthub-n4a.com``); a label IDNA refuses is still punycode-encoded, so the result is always ASCII."""
    if host.isascii():
        return host
    labels = []
    for label in host.split("."):
        if label.isascii():
            labels.append(label)
            continue
        try:
            labels.append(label.encode("idna").decode("ascii"))
        except UnicodeError:
            labels.append("xn--" + label.encode("punycode").decode("ascii"))
    return ".".join(labels)


def resolved_path(path: str) -> str:
    """``path`` as a browser requests it: ``\\`` is ``/``, ``%2e`` is ``.``, and the dot segments are removed
    (RFC 3986 section 5.2.4), so ``/o/r/pull/1/../../../login/device`` is ``/login/device``."""
    segments = re.sub(r"(?i)%2e", ".", path.replace("\\", "/")).split("/")
    out: list[str] = []
    for i, segment in enumerate(segments[1:] if segments[:1] == [""] else segments):
        last = i == len(segments) - 2
        if segment == "..":
            if out:
                out.pop()
            if last:
                out.append("")
        elif segment == ".":
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/" + "/".join(out)


def allowed_parts(url: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> SplitResult | None:
    """``url`` split as a browser would follow it, when it is an http(s) URL on one of ``hosts`` (exactly,
    ASCII as written: no look-alike letters, no look-alike subdomains), without user info (``https://
    github.com@evil.example`` is evil.example) or port; its path has its dot segments resolved. None else."""
    if not re.match(r"(?i)https?://", url):
        return None
    try:
        parts = urlsplit(url.replace("\\", "/"))
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.username is not None or parts.password is not None or port is not None or ":" in parts.netloc:
        return None
    if not host.isascii() or host.lower() not in {h.lower() for h in hosts}:
        return None
    return parts._replace(path=resolved_path(parts.path))


def is_allowed(url: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, repo: str | None = None) -> bool:
    """Whether ``url`` (:func:`allowed_parts`) goes to a pull request, issue or commit of ``repo``
    (``owner/name``; of some repo when None) once its path is resolved. ``github.com/login/device``, an
    OAuth authorize URL or any other page of the host is not allowed: a real host can still host a phish,
    and ``/o/r/pull/1/../../../login/device`` is that page."""
    parts = allowed_parts(url, hosts)
    match = _REPO_PATH.match(parts.path) if parts else None
    return match is not None and (repo is None or match["repo"].lower() == repo.lower())


def defang_url(url: str) -> str:
    """``https://evil.example/x`` → ``hxxps://evil[.]example/x``: readable, never auto-linked.

    Other schemes lose their ``://`` (``javascript[:]//``); the host's dots, ``@`` and ``:`` are bracketed,
    and a host that is not ASCII is shown by its punycode (``xn--gthub-n4a[.]com``): what it really is.
    """
    scheme, sep, rest = url.partition("://")
    if not sep and url.startswith("//"):  # scheme-relative: the slashes stay, the host is defanged
        return "//" + defang_url(url[2:])
    colon = re.match(rf"(?i)({_COLON_SCHEMES}):", url) if not sep else None
    if colon:  # mailto:boss@evil.example → mailto[:]boss[@]evil[.]example
        return colon[1] + "[:]" + re.sub(r"[.@:]", lambda m: f"[{m[0]}]", url[colon.end():])
    if not sep:
        scheme, rest = "", url
    end = next((i for i, c in enumerate(rest) if c in "/?#\\"), len(rest))
    host = ascii_host(rest[:end]).replace(".", "[.]").replace("@", "[@]").replace(":", "[:]")
    if not sep:
        lead = ""
    elif scheme.lower() in ("http", "https"):
        lead = "hxxp" + scheme[4:].lower() + "://"
    else:
        lead = scheme + "[:]//"
    return lead + host + rest[end:]


def all_urls(text: str) -> list[str]:
    """Every URL in ``text`` as a linkifier sees one (allowed or not), in order."""
    return [url for _, _, url in _spans(text)]


def foreign_urls(text: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, repo: str | None = None) -> list[str]:
    """The URLs in ``text`` that :func:`is_allowed` refuses, in order."""
    return [url for _, _, url in _spans(text) if not is_allowed(url, hosts, repo)]


def defang(text: str, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, repo: str | None = None) -> str:
    """``text`` with every URL that :func:`is_allowed` refuses defanged; allowed URLs are left as they are."""
    out, last = [], 0
    for start, end, url in _spans(text):
        if not is_allowed(url, hosts, repo):
            out += [text[last:start], defang_url(url)]
            last = end
    return "".join(out) + text[last:] if out else text


def _prose(entry: Entry) -> list[str]:
    return [entry.title, entry.headline, entry.rationale, *entry.focus, *entry.followups]


def _named(url: str, hosts: tuple[str, ...]) -> str:
    host = host_of(url)
    if host in {h.lower() for h in hosts}:  # a page of an allowed host: name the page, not just the host
        return url[:80]
    if host and not host.isascii():  # a look-alike: the host it really is, then as written
        return f"{ascii_host(host)} (written {host})"
    return host or url[:60]


def flag_foreign_links(entries: list[Entry], hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS,
                       repo: str | None = None) -> list[Entry]:
    """``entries`` with each one whose prose links anywhere but ``repo``'s PRs, issues and commits on
    ``hosts`` marked for the editor (a warning naming what it links to; ``needs_editing``). Every medium
    shows those URLs defanged."""
    flagged = []
    for entry in entries:
        found = sorted({_named(u, hosts) for text in _prose(entry) for u in foreign_urls(text, hosts, repo)})
        if found:
            warning = (f"links to {', '.join(found[:5])}{' …' if len(found) > 5 else ''} (not a PR, issue or "
                       "commit of the repo): shown defanged to readers; remove or rewrite them")
            entry = entry.model_copy(update={"needs_editing": True,
                                             "warnings": [*entry.warnings, warning]})
        flagged.append(entry)
    return flagged
