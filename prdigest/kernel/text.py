"""Text safety, one implementation each, for every layer: cleaning untrusted text (:func:`clean`,
:func:`one_line`), cutting it (:func:`truncate`), finding Markdown code spans (:data:`CODE_SPAN`,
:func:`code_spans`), URLs without their credentials (:func:`redact_url`), and slugs.

Everything that comes from a PR or from a drafter is untrusted. :func:`clean` is the first step for every
medium (HTML, Slack mrkdwn, markdown, a terminal, a mail header); each medium's own escaping comes after it,
in one place per medium (``renderers/escape.py`` for HTML and Slack, ``prdigest/review/markdown.py`` for the
editor's markdown).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import ClassVar

#: What no medium can show and what can disguise text: C0 controls except tab and LF (CR is turned into LF
#: first); DEL; C1 controls; bidi marks, embeddings, overrides and isolates (U+061C, U+200E/U+200F,
#: U+202A–U+202E, U+2066–U+2069: "Trojan Source" reordering); the BOM / zero-width no-break space; the
#: non-characters U+FFFE/U+FFFF; lone surrogates (a valid astral character is one code point in a Python str,
#: and a lone surrogate makes ``str.encode`` raise). ESC sequences would disguise text in a terminal.
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     r"\ufeff\ufffe\uffff\ud800-\udfff]")
#: Hyphens are kept as they are, so a key made from a name that already is a slug does not change.
_NOT_SLUG = re.compile(r"[^A-Za-z0-9-]+")
#: A Markdown code span as every medium reads one: single backticks around 1–200 characters without a backtick
#: or a line break. Its text is literal, so it cannot close early or run on; longer runs stay plain text.
CODE_SPAN = re.compile(r"`([^`\n]{1,200})`")
_MASK = "***"
#: Query parameters that carry a secret in a URL (libpq's ``password`` and ``sslpassword``).
SECRET_PARAM = re.compile(r"(?i)(?:^|[?&])(?:ssl)?password=([^&]*)")


def clean(text: object) -> str:
    """Untrusted text without control, bidi, BOM, non-character and lone-surrogate characters; CR and CRLF
    become LF (a lone CR returns a terminal's cursor, so what follows would overwrite what a reader saw).
    Tab and LF are kept; ``None`` is ``""``."""
    if text is None:
        return ""
    return _UNSAFE.sub("", str(text).replace("\r\n", "\n").replace("\r", "\n"))


def for_terminal(text: object) -> str:
    """``text`` safe to print: :func:`clean` (the terminal's name for it)."""
    return clean(text)


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


def code_spans(text: str) -> Iterator[tuple[str, bool]]:
    """``text`` as pieces in order, each with whether it is a code span's content (without its backticks)."""
    last = 0
    for match in CODE_SPAN.finditer(text):
        if match.start() > last:
            yield text[last:match.start()], False
        yield match.group(1), True
        last = match.end()
    if last < len(text):
        yield text[last:], False


def slack_entities(text: object) -> str:
    """:func:`clean` text with ``& < >`` as ``&amp; &lt; &gt;``, Slack's only control characters: no ping
    (``<!channel>``, ``<@U…>``) and no link (``<url|label>``) can come out of it. The one Slack escape every
    layer uses: the renderers' mrkdwn (``renderers/escape.py``) builds on it, the channel's notice and link
    URLs (``prdigest/deliver/slack.py``) use it as it is."""
    return clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slug(text: str, *, lower: bool = True, limit: int | None = None) -> str:
    """``text`` as a name safe in file names, ids and URLs: every run of other characters than ASCII
    letters, digits and ``-`` becomes one ``-``, none at either end; lowercased unless ``lower=False``."""
    value = _NOT_SLUG.sub("-", text.lower() if lower else text).strip("-")
    return value[:limit].strip("-") if limit else value


def redact_url(url: str) -> str:
    """``url`` safe to show in messages and logs. In an http(s) URL the user info is dropped whole (a token
    rides there even as a user name alone: ``https://TOKEN@host``). Any other URL (a database's) keeps its role
    name with the password masked by libpq's rule: the user info runs to the last '@', so a '#', '?', '/' or
    '@' in an unencoded password is masked too. ``password=`` and ``sslpassword=`` parameters are masked in both."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    if sep and scheme.lower() in ("http", "https"):
        cut = next((i for i, c in enumerate(rest) if c in "/?#"), len(rest))
        rest = rest[:cut].rpartition("@")[2] + rest[cut:]
    elif "@" in rest:
        userinfo, _, after = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        rest = f"{user}{':' + _MASK if colon else ''}@{after}"
    rest = SECRET_PARAM.sub(lambda m: m.group(0)[: m.start(1) - m.start(0)] + _MASK, rest)
    return f"{scheme}{sep}{rest}"


_PLURAL = re.compile(r"\{(\w+)((?:\|[^|{}]*)+)\}")

#: How a language picks among a message's forms ``{n|form|form|…}`` for a count: the index of the form
#: (past the last form, the last one). A value that is not a whole number takes the last form.
PLURAL_RULES: dict[str, Callable[[int], int]] = {
    "one": lambda n: 0 if n == 1 else 1,             # English, German, Spanish…: 1 file, 0 files, 2 files
    "zero-one": lambda n: 0 if n in (0, 1) else 1,   # French, Brazilian Portuguese: 0 fichier, 2 fichiers
    "none": lambda n: 0,                             # Chinese, Japanese, Korean: one form
}


class Counted(str):
    """A format string whose ``{n|PR|PRs}`` parts agree with the number given as ``n`` (English's rule).

    ``Counted("{n} {n|PR|PRs}").format(n=1)`` is ``1 PR``. It is a ``str`` whose ``format`` picks the forms
    first, so string tables can hold it and callers keep calling ``.format``; a value written with digit
    separators ("1,024") counts by its digits. A catalog's messages use their language's rule
    (:data:`PLURAL_RULES`, :func:`counted`).
    """

    __slots__ = ()
    rule: ClassVar[str] = "one"

    def format(self, *args: object, **values: object) -> str:  # documented on the class
        choose = PLURAL_RULES[self.rule]

        def pick(match: re.Match[str]) -> str:
            forms = match.group(2)[1:].split("|")
            value = str(values.get(match.group(1), "")).replace(",", "").strip()
            index = choose(int(value)) if value.lstrip("-").isdigit() else len(forms) - 1
            return forms[min(index, len(forms) - 1)]

        return str.format(_PLURAL.sub(pick, str(self)), *args, **values)

    def __reduce__(self) -> tuple[object, ...]:
        # A catalog string used as it is (a preheader without a count) travels inside renderings, which are pickled
        # until delivery; the class of a rule other than "one" is made at run time and has no importable name.
        return (counted, (str(self), self.rule))


_COUNTED: dict[str, type[Counted]] = {"one": Counted}


def counted(text: str, rule: str = "one") -> Counted:
    """``text`` as a :class:`Counted` that picks its forms by ``rule`` (a key of :data:`PLURAL_RULES`)."""
    if rule not in _COUNTED:
        _COUNTED[rule] = type(f"Counted_{rule.replace('-', '_')}", (Counted,), {"__slots__": (), "rule": rule})
    return _COUNTED[rule](text)


def plural_free(text: str) -> str:
    """``text`` with each ``{n|form|form}`` part replaced by ``{n}``: the fields a message formats."""
    return _PLURAL.sub(lambda m: "{" + m.group(1) + "}", text)
