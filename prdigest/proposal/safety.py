"""Whether a regular expression written in a repository's config (mergify's ``files~=``) is safe to run.

A rules file's patterns run on every changed path and title of every PR: one taken from a repository we
do not control must not be able to backtrack for minutes. Refused: patterns that do not compile, very
long ones, back-references, and an unbounded repeat that contains another repeat (``(a+)+``, ``(.*)*``),
the shape behind catastrophic backtracking.
"""

from __future__ import annotations

import re
from typing import Any

try:  # the parser moved in Python 3.11; its tree is the same
    from re import _constants as _c  # type: ignore[attr-defined]
    from re import _parser as _p  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _p  # type: ignore[no-redef]

MAX_REGEX = 300
_REPEATS = {_c.MAX_REPEAT, _c.MIN_REPEAT, getattr(_c, "POSSESSIVE_REPEAT", _c.MAX_REPEAT)}


def regex_problem(pattern: str) -> str | None:
    """Why ``pattern`` should not be run on untrusted paths and titles, or None when it is fine."""
    if len(pattern) > MAX_REGEX:
        return f"longer than {MAX_REGEX} characters"
    try:
        re.compile(pattern)
        tree = _p.parse(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return f"not a valid regular expression ({exc})"
    return _walk(tree, inside_unbounded=False)


def _walk(items: Any, *, inside_unbounded: bool) -> str | None:
    for op, arg in items:
        if op in (_c.GROUPREF, getattr(_c, "GROUPREF_EXISTS", None)):
            return "uses a back-reference"
        if op in _REPEATS:
            low, high, sub = arg
            if inside_unbounded and high > 1:
                return "nests a repeat inside an unbounded repeat (catastrophic backtracking)"
            problem = _walk(sub, inside_unbounded=inside_unbounded or high == _c.MAXREPEAT)
            if problem:
                return problem
        elif op is _c.SUBPATTERN:
            problem = _walk(arg[-1], inside_unbounded=inside_unbounded)
            if problem:
                return problem
        elif op is _c.BRANCH:
            if inside_unbounded:
                return "alternates inside an unbounded repeat (catastrophic backtracking)"
            for branch in arg[1]:
                problem = _walk(branch, inside_unbounded=inside_unbounded)
                if problem:
                    return problem
        elif op in (_c.ASSERT, _c.ASSERT_NOT):
            problem = _walk(arg[1], inside_unbounded=inside_unbounded)
            if problem:
                return problem
    return None
