"""Making untrusted text (PR titles, authors, bodies, drafter output) safe for each medium.

Everything that comes from a PR or from the drafter is untrusted. It goes through two steps:

1. :func:`~prdigest.kernel.text.clean` (every medium, ``prdigest/kernel/text.py``): drop what no medium can show and
   what can disguise text (control, bidi, BOM, non-character and lone-surrogate characters; CR becomes LF).
   :func:`~prdigest.kernel.text.one_line` additionally folds every kind of line break into spaces.
2. the medium's own escaping, here, one section per medium: HTML (:func:`html_text`, done by Jinja's
   autoescape in the email templates) and Slack mrkdwn (:func:`mrkdwn`, :func:`slack_entities`).

Links are only made from URLs that :func:`pr_url` accepts; anything else is shown as text or not at all.
A URL inside prose whose host is not a link host is defanged (:func:`defanged`, :mod:`prdigest.kernel.links`):
mail clients and Slack would otherwise turn it into a link on their own.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import urlsplit

from markupsafe import Markup, escape

from prdigest.kernel.links import DEFAULT_LINK_HOSTS, NAME, allowed_parts, defang
from prdigest.kernel.models import Entry
from prdigest.kernel.text import CODE_SPAN, clean, code_spans, one_line, slack_entities, truncate

__all__ = ["DEFAULT_LINK_HOSTS", "clean", "defanged", "display_width", "html_prose", "html_text", "mrkdwn",
           "mrkdwn_prose", "one_line", "plain_prose", "pr_url", "slack_entities", "slack_plain", "truncate"]

_PR_PATH = re.compile(rf"^/{NAME}/{NAME}/pull/(?P<number>[1-9][0-9]{{0,9}})/?$")


def html_text(text: object) -> Markup:
    """:func:`clean` text escaped for HTML element content and attribute values (``& < > " '``)."""
    return escape(clean(text))



def html_prose(text: object) -> Markup:
    """:func:`html_text`, with Markdown code spans (`` `x` ``) as ``<code>x</code>``.

    Safe because the text is escaped first: the only tags in the result are the ``<code>`` we add, and
    they carry no attributes. Used for drafter prose (rationale, focus, follow-ups), not titles.
    """
    return Markup(CODE_SPAN.sub(r"<code>\1</code>", str(html_text(text))))


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
    if any(ch in url for ch in "\"'<>|\\ \t\n") or any(ord(ch) > 126 or ord(ch) < 32 for ch in url):
        return None
    parts = allowed_parts(url, hosts)  # the one judge of hosts and paths (prdigest/kernel/links.py)
    if parts is None or parts.scheme != "https" or parts.query or parts.fragment or "#" in url or "?" in url:
        return None
    if parts.path != urlsplit(url).path:  # written with dot segments: an href is the path itself
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
    s = _lookalikes(slack_entities(clean(text)))
    return _QUOTE_START.sub("\\1\u00ad&gt;", s)


def _lookalikes(text: str) -> str:
    return _FORMAT_CHARS.sub(lambda m: _MRKDWN_LOOKALIKE[m.group()], text)


def mrkdwn_prose(text: object) -> str:
    """:func:`mrkdwn` for drafter prose, with its Markdown code spans (`` `x` ``) as real Slack code spans.

    Inside a code span Slack formats nothing, and with ``& < >`` escaped a span can neither ping nor link,
    so its text keeps its ``* _ ~`` as they are; outside code spans everything is neutralised as in
    :func:`mrkdwn`. A span holds no backtick or line break, so it cannot close early or run on.
    """
    out = [f"`{slack_entities(piece)}`" if code else _lookalikes(slack_entities(piece))
           for piece, code in code_spans(clean(text))]
    return _QUOTE_START.sub("\\1\u00ad&gt;", "".join(out))


def plain_prose(text: str) -> str:
    """Prose for a plain-text line that is no document (an inbox preview): code spans without backticks."""
    return CODE_SPAN.sub(r"\1", text)


def slack_plain(text: object) -> str:
    """:func:`clean` text for a Slack ``plain_text`` object (headers): never parsed for markup or mentions."""
    return clean(text)


# --- width ----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8192)
def _char_width(ch: str) -> int:
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 0 if unicodedata.combining(ch) else 1


def display_width(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide and full-width characters count as two, combining
    marks as none. ASCII is one column a character (no ASCII character is wide or combining)."""
    return len(text) if text.isascii() else sum(map(_char_width, text))
