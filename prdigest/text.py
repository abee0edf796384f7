"""Small text helpers every layer shares: slugs, control-character stripping, terminal-safe text, URLs."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

#: C0 controls except tab, LF and CR; DEL; C1 controls; bidi embeddings, overrides and isolates
#: (U+202A–U+202E, U+2066–U+2069, and the marks U+200E/U+200F/U+061C). No medium can show the controls,
#: ESC sequences disguise text in a terminal, and bidi controls reorder it ("Trojan Source").
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: Hyphens are kept as they are, so a key made from a name that already is a slug does not change.
_NOT_SLUG = re.compile(r"[^A-Za-z0-9-]+")


def slug(text: str, *, lower: bool = True, limit: int | None = None) -> str:
    """``text`` as a name safe in file names, ids and URLs: every run of other characters than ASCII
    letters, digits and ``-`` becomes one ``-``, none at either end; lowercased unless ``lower=False``."""
    value = _NOT_SLUG.sub("-", text.lower() if lower else text).strip("-")
    return value[:limit].strip("-") if limit else value


def strip_control(text: str) -> str:
    """``text`` without C0/C1 control characters and bidi controls (tab, LF and CR are kept)."""
    return _CONTROL.sub("", text)


def for_terminal(text: object) -> str:
    """``text`` safe to print: :func:`strip_control`, and CR as a line break (a lone CR returns the cursor,
    so what follows would overwrite what a reader just saw). Lone surrogates are dropped."""
    s = str(text).replace("\r\n", "\n").replace("\r", "\n")
    return strip_control(s.encode("utf-8", "ignore").decode("utf-8") if not s.isascii() else s)


def redact_url(url: str) -> str:
    """``url`` without any ``user:password@`` part, safe to show in messages and logs."""
    parts = urlsplit(url)
    if not (parts.username or parts.password):
        return url
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return urlunsplit(parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host))


_PLURAL = re.compile(r"\{(\w+)\|([^|{}]*)\|([^|{}]*)\}")


class Counted(str):
    """An English format string whose ``{n|PR|PRs}`` parts agree with the number given as ``n``.

    ``Counted("{n} {n|PR|PRs}").format(n=1)`` is ``1 PR``. It is a ``str`` whose ``format`` picks the forms
    first, so string tables can hold it and callers keep calling ``.format``; a value written with digit
    separators ("1,024") counts by its digits.
    """

    __slots__ = ()

    def format(self, *args: object, **values: object) -> str:  # noqa: D102 - documented on the class
        def pick(match: re.Match[str]) -> str:
            value = str(values.get(match.group(1), "")).replace(",", "").strip()
            return match.group(2) if value == "1" else match.group(3)

        return str.format(_PLURAL.sub(pick, str(self)), *args, **values)
