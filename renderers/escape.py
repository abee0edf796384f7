"""Making untrusted text (PR titles, authors, bodies, drafter output) safe for each medium.

Everything that comes from a PR or from the drafter is untrusted. It goes through two steps:

1. :func:`clean` (every medium): drop what no medium can show and what can disguise text — C0/C1
   control characters (NUL, ESC, …; keeping LF and tab), lone surrogates (they make ``str.encode``
   raise), bidi embeddings/overrides/isolates (U+202A–U+202E, U+2066–U+2069: "Trojan Source"
   reordering), the BOM and the non-characters U+FFFE/U+FFFF. CR and CRLF become LF.
   :func:`one_line` additionally folds every kind of line break (LF, U+2028, U+0085, …) into spaces.
2. the medium's own escaping: HTML (:func:`html_text`, done by Jinja's autoescape in the email
   templates) or Slack mrkdwn (:func:`mrkdwn`).

Links are only made from URLs that :func:`pr_url` accepts; anything else is shown as text or not at all.
A URL inside prose whose host is not a link host is defanged (:func:`defanged`, :mod:`prdigest.links`):
mail clients and Slack would otherwise turn it into a link on their own.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from prdigest.links import defang
from prdigest.models import Entry
from prdigest.text import strip_control

#: Lone surrogates (a valid astral character is one code point in a Python str, never a surrogate).
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: Bidi embeddings, overrides and isolates, BOM / zero-width no-break space, non-characters.
_INVISIBLE = re.compile(r"[\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff]")

#: GitHub's owner and repository name alphabet.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,99})"
_PR_PATH = re.compile(rf"^/{_NAME}/{_NAME}/pull/(?P<number>[1-9][0-9]{{0,9}})/?$")
#: Hosts whose PR URLs become links unless the caller names others (GitHub Enterprise).
DEFAULT_LINK_HOSTS: tuple[str, ...] = ("github.com",)


def clean(text: object) -> str:
    """Untrusted text with control, surrogate and bidi-override characters removed; newlines as LF."""
    if text is None:
        return ""
    s = str(text).replace("\r\n", "\n").replace("\r", "\n")
    s = _SURROGATE.sub("", s)
    s = strip_control(s)  # C0 (but tab and LF; CR is gone by now), DEL, C1
    return _INVISIBLE.sub("", s)


def one_line(text: object) -> str:
    """:func:`clean` text folded onto one line: every run of whitespace or line breaks becomes a space."""
    # str.split() splits on all Unicode whitespace and line boundaries (U+2028/9, U+0085, U+001C-1E).
    return " ".join(clean(text).split())


def truncate(text: str, limit: int, ellipsis: str = "…") -> str:
    """``text`` cut to at most ``limit`` characters, ending with ``ellipsis`` when cut."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    cut = text[: max(limit - len(ellipsis), 0)].rstrip()
    return cut + ellipsis


def html_text(text: object) -> Markup:
    """:func:`clean` text escaped for HTML element content and attribute values (``& < > " '``)."""
    return escape(clean(text))


_CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")


def html_prose(text: object) -> Markup:
    """:func:`html_text`, with Markdown code spans (`` `x` ``) as ``<code>x</code>``.

    Safe because the text is escaped first: the only tags in the result are the ``<code>`` we add, and
    they carry no attributes. Used for drafter prose (rationale, focus, follow-ups), not titles.
    """
    return Markup(_CODE_SPAN.sub(r"<code>\1</code>", str(html_text(text))))


def defanged(entry: Entry, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS, repo: str | None = None) -> Entry:
    """``entry`` with every URL in its prose (title, headline, rationale, focus, follow-ups) that is not a
    PR, issue or commit of ``repo`` on ``hosts`` defanged (``hxxps://evil[.]example``,
    ``github[.]com/login/device``), so no mail client, Slack or markdown view links it."""
    fields = {"title": entry.title, "headline": entry.headline, "rationale": entry.rationale}
    update: dict[str, object] = {k: defang(v, hosts, repo) for k, v in fields.items() if defang(v, hosts, repo) != v}
    for name in ("focus", "followups"):
        items = [defang(v, hosts, repo) for v in getattr(entry, name)]
        if items != getattr(entry, name):
            update[name] = items
    return entry.model_copy(update=update) if update else entry


def pr_url(url: object, number: int | None = None, hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS) -> str | None:
    """``url`` if it is an https link to a pull request on a known host, else None.

    Accepted: ``https://<host>/<owner>/<repo>/pull/<n>`` with ``host`` in ``hosts`` (github.com by
    default; pass a GitHub Enterprise host explicitly), no user info, port, query or fragment, and
    ``n == number`` when a number is given. Everything else (``javascript:``, ``http:``, other hosts,
    look-alike hosts, quotes, spaces) is refused, so the result is safe in an ``href`` and a Slack link.
    """
    if not isinstance(url, str) or len(url) > 300 or url != url.strip():
        return None
    if any(ch in url for ch in "\"'<>|\\ \t\n") or any(ord(ch) > 126 for ch in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme != "https" or parts.username or parts.password or port is not None:
        return None
    if parts.query or parts.fragment or (parts.hostname or "") not in {h.lower() for h in hosts}:
        return None
    if parts.netloc.lower() != parts.hostname:
        return None
    match = _PR_PATH.match(parts.path)
    if not match or (number is not None and int(match["number"]) != number):
        return None
    return url


# --- Slack mrkdwn -------------------------------------------------------------------------------

#: Look-alikes for mrkdwn's formatting characters (the choice jsx-slack makes for link labels).
#: Slack has no escape for ``* _ ~ ``` and a zero-width space *enables* formatting inside words,
#: so untrusted text gets characters that look the same but carry no meaning.
_MRKDWN_LOOKALIKE = {
    "*": "\u2217",  # ∗ asterisk operator
    "~": "\u223c",  # ∼ tilde operator
    "`": "\u02cb",  # ˋ modifier letter grave accent
    "_": "\u02cd",  # ˍ modifier letter low macron
}
#: An underscore between two letters or digits (``hf_text_config``) cannot open or close italics in
#: Slack (formatting needs a word boundary), so identifiers keep their real underscores; any other
#: underscore (``_x_``, ``__init__``) becomes a look-alike.
_FORMAT_CHARS = re.compile(r"[*~`]|(?<![^\W_])_|_(?![^\W_])")
#: ``>`` (even escaped as ``&gt;``) at a line start makes a block quote; a soft hyphen before it does not.
_QUOTE_START = re.compile(r"^(\s*)&gt;", re.MULTILINE)


def mrkdwn(text: object) -> str:
    """:func:`clean` text safe inside a Slack mrkdwn text object (to be sent with ``verbatim: true``).

    ``& < >`` become ``&amp; &lt; &gt;`` (Slack's only control characters), so no ``<!channel>``,
    ``<!here>``, ``<!subteam^…>``, ``<@U…>``, ``<#C…>`` or ``<url|label>`` can come out of it; the
    formatting characters ``* ~ ` _`` become look-alikes (``_`` only at word boundaries) and a leading
    ``>`` gets a soft hyphen, so the text cannot restyle itself or the message around it.
    """
    s = clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _FORMAT_CHARS.sub(lambda m: _MRKDWN_LOOKALIKE[m.group()], s)
    return _QUOTE_START.sub("\\1\u00ad&gt;", s)


def _slack_entities(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn_prose(text: object) -> str:
    """:func:`mrkdwn` for drafter prose, with its Markdown code spans (`` `x` ``) as real Slack code spans.

    Inside a code span Slack formats nothing, and with ``& < >`` escaped a span can neither ping nor link,
    so its text keeps its ``* _ ~`` as they are; outside code spans everything is neutralised as in
    :func:`mrkdwn`. A span holds no backtick or line break, so it cannot close early or run on.
    """
    s = clean(text)
    out, last = [], 0
    for match in _CODE_SPAN.finditer(s):
        outside = _slack_entities(s[last:match.start()])
        out += [_FORMAT_CHARS.sub(lambda m: _MRKDWN_LOOKALIKE[m.group()], outside),
                f"`{_slack_entities(match.group(1))}`"]
        last = match.end()
    out.append(_FORMAT_CHARS.sub(lambda m: _MRKDWN_LOOKALIKE[m.group()], _slack_entities(s[last:])))
    return _QUOTE_START.sub("\\1\u00ad&gt;", "".join(out))


def plain_prose(text: str) -> str:
    """Prose for a plain-text line that is no document (an inbox preview): code spans without backticks."""
    return _CODE_SPAN.sub(r"\1", text)


def slack_plain(text: object) -> str:
    """:func:`clean` text for a Slack ``plain_text`` object (headers): never parsed for markup or mentions."""
    return clean(text)


# --- width ----------------------------------------------------------------------------------------


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide and full-width characters count as two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1
               for ch in text)
