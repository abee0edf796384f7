"""Rule patterns (rules files' path, title and description regexes) under a guard against catastrophic
backtracking.

A rules file is data a team writes, and ``^\\[(\\w+\\s?)+\\]:`` against a title of 40 repeated words took
Python's backtracking engine longer than two minutes. So a pattern runs on RE2 (``google-re2``, linear
time in the text) whenever RE2 can compile it with Python's meaning: ``\\w``, ``\\d`` and ``\\s`` are
translated to their Unicode classes (RE2's are ASCII). What RE2 cannot run the same way (lookarounds, which
the shipped vLLM rules use; ``\\b``, whose RE2 meaning is ASCII-only; backreferences) needs a backtracking engine,
and there a pattern is refused when the file is loaded (:func:`check`) if it has either shape that
backtracks exponentially: nested quantifiers (``(a+)+``, ``(\\w+\\s?)*``), or a repeated part that can read
the same text in two ways (``(\\w\\w|\\w)*``, ``(\\w\\w?)+``: :mod:`prdigest.kernel.ambiguity`). With neither,
the work per starting point is still polynomial in the text's length, and the degree is the pattern's to choose:
``\\b`` and ``\\w*`` eight times took Python's engine 41 s on a 40-character title, and one ``(?<!x)\\w*\\d`` 8 s
on a 20,000-character description. So such a pattern runs on the ``regex`` engine (Python's syntax, with a
time limit per call, :data:`MATCH_SECONDS`): a call that runs out of time counts as no match and is logged
naming the pattern, and a pattern that runs out :data:`GIVE_UP` times matches nothing more in this process
(said once, as an error): a slow rule costs a run seconds, never minutes.
"""

from __future__ import annotations

import logging
import re
import re._constants as sre_constants  # the parsed form of a pattern, for _nested_repeat
import re._parser as sre_parser
import threading
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Protocol

import re2
import regex

from prdigest.kernel.ambiguity import ambiguous_repeat

log = logging.getLogger(__name__)

#: The most one search of a backtracking-engine pattern may take (the ``regex`` engine's own clock: it looks at
#: it as it goes, so a call may overrun it by a few times under load).
MATCH_SECONDS = 0.25
#: After this many calls that ran out of time, a pattern matches nothing more in this process.
GIVE_UP = 3

#: Python's ``\s`` (``str.isspace``) as a list for a character class.
_SPACE = r"\t\n\x0b\f\r\x1c-\x1f \x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}"
_WORD = r"\p{L}\p{N}_"
_OUTSIDE = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": r"\p{Nd}", "D": r"\P{Nd}", "s": f"[{_SPACE}]",
            "S": f"[^{_SPACE}]"}
_INSIDE = {"w": _WORD, "d": r"\p{Nd}", "D": r"\P{Nd}", "s": _SPACE}
#: Escapes whose RE2 meaning differs from Python's and that have no translation (ASCII-only \b; \W or \S
#: inside a class; backreferences and Python-only escapes): such a pattern stays on Python's engine.
_UNTRANSLATABLE = set("bBAZ0123456789")


class Match(Protocol):
    """What callers use of a match, the same on both engines."""

    def start(self, group: int = 0) -> int: ...

    def group(self, group: int = 0) -> Any: ...


class Pattern(Protocol):
    """A compiled rule pattern: ``re.Pattern`` or RE2's, with the methods callers use."""

    def search(self, text: str) -> Match | None: ...

    def finditer(self, text: str) -> Iterator[Match]: ...


class PatternError(ValueError):
    """A rule pattern that is invalid or could backtrack without bound; the message names the pattern.

    ``reason`` is the short why (for a proposal's note), without the pattern."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


def _translated(pattern: str) -> str | None:
    """``pattern`` in RE2 syntax with Python's Unicode classes, or None when it cannot mean the same there."""
    out: list[str] = []
    i, inside = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            table = _INSIDE if inside else _OUTSIDE
            if nxt in table:
                out.append(table[nxt])
            elif nxt in _UNTRANSLATABLE and not (inside and nxt == "b") or nxt in "WS":
                return None
            else:
                out.append(pattern[i:i + 2])
            i += 2
            continue
        if inside and ch == "]":
            inside = False
        elif not inside and pattern.startswith("{,", i):  # Python's {,n}; RE2 would read it as text
            return None
        elif not inside and ch == "[":
            inside = True
            out.append("[^" if pattern[i + 1:i + 2] == "^" else "[")
            i += 2 if pattern[i + 1:i + 2] == "^" else 1
            if pattern[i:i + 1] == "]":  # a leading ']' is a literal
                out.append(r"\]")
                i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def re2_form(pattern: str) -> str | None:
    """``pattern`` as RE2 runs it with Python's meaning (what :func:`compile_rule` puts on RE2), else None."""
    translated = _translated(pattern)
    return translated if translated is not None and _re2(pattern, False) is not None else None


def _re2(pattern: str, ignore_case: bool) -> Any | None:
    translated = _translated(pattern)
    if translated is None:
        return None
    options = re2.Options()
    options.log_errors = False  # a lookaround is expected, not an error worth a line on stderr
    options.case_sensitive = not ignore_case
    try:
        return re2.compile(translated, options)
    except re2.error:
        return None


def _nested_repeat(pattern: str) -> bool:
    r"""Whether an unbounded (or long) quantifier applies to something that contains a variable-length one:
    ``(\w+\s?)+`` can split a run of words in exponentially many ways; ``(-[0-9a-z]{4}){3}`` cannot."""
    repeats = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)

    def walk(items: Any, under_repeat: bool) -> bool:
        for op, arg in items:
            if op in repeats:
                low, high, sub = arg
                variable = high is sre_constants.MAXREPEAT or high > max(low, 1)
                if variable and under_repeat:
                    return True
                if walk(sub, under_repeat or high is sre_constants.MAXREPEAT or high > 16):
                    return True
            elif op is sre_constants.SUBPATTERN:
                if walk(arg[-1], under_repeat):
                    return True
            elif op is sre_constants.BRANCH:
                if any(walk(branch, under_repeat) for branch in arg[1]):
                    return True
            elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
                if walk(arg[1], under_repeat):
                    return True
            elif op is sre_constants.GROUPREF_EXISTS:
                if any(walk(b, under_repeat) for b in arg[1:] if b is not None):
                    return True
        return False

    return walk(sre_parser.parse(pattern), False)


def check(pattern: str, *, always_python: bool = False) -> str:
    """``pattern`` if it compiles and runs in bounded time; raises :class:`PatternError` saying why not.

    ``always_python``: the caller wraps it in a lookbehind (drafter hints), so RE2 never runs it.
    """
    try:
        re.compile(pattern)
    except re.error as exc:
        raise PatternError(f"invalid regular expression {pattern!r}: {exc}") from None
    if not always_python and _re2(pattern, False) is not None:
        return pattern
    need = "it needs Python's engine (lookarounds, \\b or backreferences)"
    if _nested_repeat(pattern):
        reason = "nests quantifiers (like '(\\w+\\s?)+'), which can backtrack for minutes on a long title or path"
        raise PatternError(
            f"regular expression {pattern!r} {reason}; {need}, so rewrite it without the nesting (e.g. "
            "'(\\w+\\s)*\\w+' → '[\\w\\s]+') or without the lookaround", f"{reason}; {need}")
    if ambiguous_repeat(pattern):
        reason = ("repeats a part that can match the same text in two ways (like '(\\w\\w|\\w)*' or '(\\w\\w?)+'), "
                  "which can backtrack for minutes on a long title or path")
        raise PatternError(
            f"regular expression {pattern!r} {reason}; {need}, so rewrite it so that what is repeated can be cut "
            "only one way (e.g. '(\\w\\w|\\w)*' → '\\w*') or without the lookaround", f"{reason}; {need}")
    return pattern


class Bounded:
    """A pattern that needs a backtracking engine (lookarounds, ``\\b``, backreferences), run on ``regex`` (Python's
    syntax and meaning) with each call bounded by :data:`MATCH_SECONDS`; see the module docstring."""

    def __init__(self, pattern: str, ignore_case: bool = False) -> None:
        self.pattern = pattern
        self._compiled = regex.compile(pattern, regex.VERSION0 | (regex.IGNORECASE if ignore_case else 0))
        self._lock = threading.Lock()
        self._timeouts = 0

    def __repr__(self) -> str:
        return f"Bounded({self.pattern!r})"

    @property
    def given_up(self) -> bool:
        """Whether the pattern ran out of time :data:`GIVE_UP` times and now matches nothing."""
        return self._timeouts >= GIVE_UP

    def search(self, text: str) -> Match | None:
        """The first match in ``text``, or None (also when the search ran out of time)."""
        if self.given_up:
            return None
        try:
            return self._compiled.search(text, timeout=MATCH_SECONDS)
        except TimeoutError:
            self._ran_out(len(text))
            return None

    def finditer(self, text: str) -> Iterator[Match]:
        """The matches in ``text``, in order, up to where the search ran out of time."""
        if self.given_up:
            return
        try:
            yield from self._compiled.finditer(text, timeout=MATCH_SECONDS)
        except TimeoutError:
            self._ran_out(len(text))

    def _ran_out(self, length: int) -> None:
        with self._lock:
            self._timeouts += 1
            count = self._timeouts
        if count < GIVE_UP:
            log.warning("rule pattern %r ran out of time (%.2f s) on a text of %d characters: taken as no match; "
                        "rewrite it so that it backtracks less (fewer adjacent '*' or '+' over the same characters)",
                        self.pattern, MATCH_SECONDS, length)
        elif count == GIVE_UP:
            log.error("rule pattern %r ran out of time %d times: it matches nothing more in this run; rewrite it in "
                      "the rules file (fewer adjacent '*' or '+' over the same characters, or no lookaround, so "
                      "that it runs on RE2)", self.pattern, GIVE_UP)


def bounded(pattern: str, ignore_case: bool = False) -> Bounded:
    """``pattern`` on the backtracking engine, bounded in time: for a pattern wrapped in a lookaround by its caller."""
    return _bounded(pattern, ignore_case)


@lru_cache(maxsize=4096)
def _bounded(pattern: str, ignore_case: bool) -> Bounded:
    return Bounded(pattern, ignore_case)


@lru_cache(maxsize=4096)
def compile_rule(pattern: str, ignore_case: bool = False) -> Pattern:
    """The pattern on RE2 when it means the same there, else bounded in time on ``regex`` (checked by
    :func:`check`)."""
    fast = _re2(pattern, ignore_case)
    if fast is not None:
        return fast
    return _bounded(pattern, ignore_case)
