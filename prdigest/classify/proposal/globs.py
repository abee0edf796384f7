"""Globs as actions/labeler and CODEOWNERS read them, compiled to linear-time regular expressions.

actions/labeler matches changed files with minimatch and ``dot: true``: ``*`` and ``?`` never cross a
``/``, ``**`` as a whole segment spans zero or more folders, a leading ``!`` negates, ``{a,b}`` expands,
and dot files match like any other (no ``matchBase``: ``*.md`` is a root file only). The regex produced
here uses only what RE2 runs in linear time (no lookaround, no ``\b``), so a rules file runs it there
(:mod:`prdigest.kernel.patterns`); a glob whose wildcards would still make a large pattern (many ``*`` in one
segment, many ``**``, a large brace expansion, a very long glob) is refused with a reason, never compiled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Longest glob compiled; real ones are far shorter.
MAX_GLOB = 300
#: ``*`` per segment: each adds a backtracking point that multiplies with the others.
MAX_STARS_PER_SEGMENT = 2
MAX_GLOBSTARS = 3
MAX_ALTERNATIVES = 24
_STAR = "[^/]*"
_ONE = "[^/]"
#: Zero or more whole folders: each repetition ends at its own "/", so there is one way to split a path.
_DIRS = "(?:[^/]+/)*"
_REST = ".*"
_EXTGLOB = re.compile(r"[?*+@!]\(")


class GlobError(ValueError):
    """A glob that cannot be compiled safely or at all; the message says why."""


@dataclass(frozen=True)
class Glob:
    """One compiled glob: the text as written, whether it was negated, and its anchored regex."""

    text: str
    negated: bool
    regex: str

    def matches(self, path: str) -> bool:
        """Whether ``path`` matches the glob (ignoring the negation)."""
        return re.fullmatch(self.regex, path) is not None


def expand_braces(text: str, limit: int = MAX_ALTERNATIVES) -> list[str]:
    """``a/{b,c}/d`` → ``a/b/d``, ``a/c/d`` (nested braces too); more than ``limit`` results is refused."""
    depth, start = 0, -1
    for i, ch in enumerate(text):
        if ch == "\\":
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = text[start + 1:i]
                options = _split_top(inner)
                if len(options) < 2:  # "{x}" is literal in minimatch
                    rest = expand_braces(text[i + 1:], limit)
                    return [text[:i + 1] + r for r in rest]
                out: list[str] = []
                for option in options:
                    for tail in expand_braces(option + text[i + 1:], limit):
                        out.append(text[:start] + tail)
                        if len(out) > limit:
                            raise GlobError(f"expands to more than {limit} alternatives")
                return out
    return [text]


def _split_top(inner: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]


def _segment(seg: str) -> str:
    """One path segment (no ``/``, not ``**``) as a regex."""
    if seg.count("*") > MAX_STARS_PER_SEGMENT:
        raise GlobError(f"more than {MAX_STARS_PER_SEGMENT} '*' in the segment '{seg}'")
    out, i = [], 0
    while i < len(seg):
        ch = seg[i]
        if ch == "\\" and i + 1 < len(seg):
            out.append(re.escape(seg[i + 1]))
            i += 2
            continue
        if ch == "*":
            while i + 1 < len(seg) and seg[i + 1] == "*":  # "a**b" is "a*b" inside a segment
                i += 1
            out.append(_STAR)
        elif ch == "?":
            out.append(_ONE)
        elif ch == "[":
            end = seg.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = seg[i + 1:end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                safe = "".join("\\" + c if c in "\\[]^" else c for c in body)
                out.append(f"[{'^' if negate else ''}{safe}{'/' if negate else ''}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _body(pattern: str) -> str:
    """A glob without negation or braces as an unanchored regex body."""
    segments = pattern.split("/")
    # "a/**/**/b" is "a/**/b".
    collapsed = [s for i, s in enumerate(segments) if not (s == "**" and i and segments[i - 1] == "**")]
    if sum(1 for s in collapsed if s == "**") > MAX_GLOBSTARS:
        raise GlobError(f"more than {MAX_GLOBSTARS} '**'")
    out = ""
    for i, seg in enumerate(collapsed):
        last = i == len(collapsed) - 1
        if seg == "**":
            out += _REST if last else _DIRS
        else:
            out += _segment(seg) + ("" if last else "/")
    return out


def compile_glob(text: str) -> Glob:
    """A minimatch glob (``dot: true``) as an anchored regex RE2 runs in linear time; :class:`GlobError` if unsafe."""
    raw = text.strip()
    if not raw:
        raise GlobError("empty glob")
    if len(raw) > MAX_GLOB:
        raise GlobError(f"longer than {MAX_GLOB} characters")
    negated = False
    while raw.startswith("!"):
        negated, raw = not negated, raw[1:]
    if _EXTGLOB.search(raw):
        raise GlobError("extglob groups like +(a|b) are not supported")
    bodies = [_body(p) for p in expand_braces(raw)]
    regex = "^(?:" + "|".join(bodies) + ")$" if len(bodies) > 1 else "^" + bodies[0] + "$"
    return Glob(text, negated, regex)


def compile_codeowners(pattern: str) -> Glob:
    """A CODEOWNERS (gitignore-style) pattern as a regex over file paths.

    A slash at the start or in the middle anchors the pattern at the root, otherwise it matches at any
    depth; a pattern names a file or a folder, and a folder owns everything inside it.
    """
    raw = pattern.strip()
    if not raw or raw.startswith("!"):
        raise GlobError("negations are not valid in CODEOWNERS")
    directory = raw.endswith("/")
    core = raw.strip("/")
    if not core:
        return Glob(pattern, False, "^")  # "/" or "*": the whole repository
    anchored = raw.startswith("/") or "/" in core
    body = _body(core)
    prefix = "^" if anchored else f"^{_DIRS}"
    suffix = f"/{_REST}$" if directory else f"(?:/{_REST})?$"
    if core.endswith("**"):
        suffix = "$"
    return Glob(pattern, False, prefix + body + suffix)
