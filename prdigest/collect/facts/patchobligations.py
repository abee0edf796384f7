"""New obligations read from a patch's hunks: a method of a class in sight whose body now only raises
``NotImplementedError`` (it did something before, or it is new), which every subclass that reaches it must
now define: an ``abstract`` fact as the facts engine makes from full files (a check, not a break: often a
feature only some platforms offer).

The new body is taken as "only raises" when the hunk shows all of it: its ``def`` line and signature, an
optional docstring, the ``raise`` and the next line at the ``def``'s depth or shallower. The old body counts as
doing something when one statement of it in sight is neither its docstring nor such a ``raise``.
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hunklines import Row, code, hunks, indent, python_headers
from prdigest.collect.facts.patchsigs import WILDCARD, defs_in_sight
from prdigest.collect.facts.pyapi import UNIMPLEMENTED
from prdigest.kernel.models import Change

_RAISE = re.compile(r"^raise\s+NotImplementedError\b")
_CLASS = re.compile(r"^\s*class\s+([A-Za-z_]\w*)\b")
_ABSTRACT = re.compile(r"^\s*@\s*(?:abc\.)?abstractmethod\b")
_CALLED_DUNDERS = frozenset({"__init__", "__new__", "__call__"})
#: Lines of context git (and GitHub) shows around a change.
_CONTEXT = 3


def _body(rows: list[Row], start: int, end: int, eof: bool = False) -> tuple[list[str], bool]:
    """The statements of a function's body in sight (their first lines, docstring left out) and whether the
    body's end is in sight (``eof``: the rows end where the file does)."""
    depth = indent(rows[start].text)
    statements: list[str] = []
    level: int | None = None
    quote: str | None = None
    first = True
    brackets = 0  # open on earlier lines: the rows below continue a statement
    for row in rows[end + 1:]:
        text = row.text.strip()
        if quote is not None:  # inside the docstring
            if quote in text:
                quote = None
            continue
        if not text or text.startswith("#"):
            continue
        width = indent(row.text)
        if width <= depth and brackets == 0:
            return statements, True
        if first and text[:3] in ('"""', "'''"):
            first = False
            if text.count(text[:3]) < 2:
                quote = text[:3]
            continue
        first = False
        if level is None:
            level = width
        if width == level and brackets == 0:
            statements.append(text)
        brackets = max(0, brackets + sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}"))
    return statements, eof


def _method_header(header: str) -> bool:
    """Whether git's header is a method's ``def`` (``self``/``cls`` first): a ``def`` beside it is a method too."""
    return bool(re.match(r"^\s*(?:async\s+)?def\s+\w+\s*\(\s*(?:self|cls)\b", header))


def _only_raises(statements: list[str]) -> bool:
    return len(statements) == 1 and bool(_RAISE.match(statements[0]))


def obligation_facts(path: str, patch: str, unseen: bool = False) -> list[Change]:
    """``abstract`` facts (detail ``raises NotImplementedError``, `` (added)`` for a new method) a patch proves;
    with ``unseen``, instead the new such methods whose class is out of sight (``*.m``: prdigest.collect.facts.
    patchhooks keeps those the PR itself calls)."""
    if "NotImplementedError" not in patch:
        return []
    found = hunks(patch)
    python = python_headers(found)
    facts: list[Change] = []
    for n, hunk in enumerate(found):
        old_rows, new_rows = hunk.side(False), hunk.side(True)
        # git shows three lines of context after the last change unless the file ends first
        trailing = len(hunk.rows) - next((k for k in range(len(hunk.rows) - 1, -1, -1)
                                          if hunk.rows[k].sign != " "), -1) - 1
        eof = n == len(found) - 1 and trailing < _CONTEXT
        old = {name: (i, end) for name, i, end in defs_in_sight(hunk, old_rows, python)}
        # classes the old version has here: a method of a class the change adds is no new obligation on anyone
        classes = {m[1] for r in old_rows for m in [_CLASS.match(r.text)] if m} | {hunk.header_class or ""}
        for name, i, end in defs_in_sight(hunk, new_rows, python):
            hidden = name.startswith(WILDCARD + ".")
            if "." not in name or hidden != unseen or (i and _ABSTRACT.match(new_rows[i - 1].text)) \
                    or (not hidden and name.rpartition(".")[0].rpartition(".")[2] not in classes) \
                    or (hidden and (new_rows[i].sign != "+" or not _method_header(hunk.header))):
                continue  # a function, a method whose class is out of sight, an @abstractmethod (said elsewhere)
            statements, whole = _body(new_rows, i, end, eof)
            if not whole or not _only_raises(statements):
                continue
            if name in old:
                before, _ = _body(old_rows, *old[name])
                if not [s for s in before if not _RAISE.match(s)]:
                    continue  # nothing in sight shows it did anything before
                detail = UNIMPLEMENTED
            elif new_rows[i].sign == "+":
                detail = UNIMPLEMENTED + " (added)"
            else:
                continue
            public = all(not p.startswith("_") or p in _CALLED_DUNDERS for p in name.split("."))
            facts.append(Change(kind="abstract", symbol=name, path=path, line=new_rows[i].line, detail=detail,
                                public=public))
    return facts
