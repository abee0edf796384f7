"""Keywords a PR's added lines now pass to an upstream class's constructor, read from its patches: a ``passes``
fact, as the facts engine makes from full files (a downstream subclass whose ``__init__`` does not take the
keyword breaks once upstream builds it through the base's name).

A call ``Cls(`` opened on a line in sight, an added line inside it passing ``kw=`` at the call's own depth (one
argument a line, as vLLM's formatter writes them, or the whole call on the added line), and ``Cls`` imported by
a line of the same file's patch (``from vllm.a.b import Cls``, relative too) from the upstream's package:
then the keyword is new when no call of ``Cls`` the old side shows passed it. A call whose ``(`` is above the
hunk is not read: which call it is is out of sight.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from prdigest.collect.facts.hunklines import Hunk, code, hunks
from prdigest.collect.facts.patchexports import from_imports
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change

# Each pattern is tried from a word's start only, after the first bracket only: tried from every character (or
# every bracket) of a 1 MB line, ``[\w.]*``, ``.*\(`` and ``\(.*`` scan the rest of it each time (quadratic).
#: A call's name (its last dotted part: what the callee is keyed by) and its ``(``.
_CALLEE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
#: A capitalized call opened on the line, then a keyword after its ``(`` (read by :func:`_one_line`).
_CALL_OPEN = re.compile(r"\b[A-Z]\w*\s*\(")
_KEYWORD_LATER = re.compile(r"\b\w+\s*=(?!=)")
_BRACKET = re.compile(r"[()\[\]{}]")
#: An added line passing a keyword (alone on its line, or inside a call written on it).
_ADDED_KEYWORD = re.compile(r"^\+[ \t]*[A-Za-z_]\w*[ \t]*=(?!=)|^\+[^\n(]*\([^\n]*?\b[A-Za-z_]\w*\s*=(?!=)", re.M)
_KEYWORD = re.compile(r"^\s*([A-Za-z_]\w*)\s*=(?!=)")
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")


def _calls(hunk: Hunk, new: bool) -> Iterable[tuple[str, str, str]]:
    """(callee, keyword, sign of the row) for each keyword passed to a call opened in sight, one side."""
    stack: list[str] = []  # the callee of each bracket open in sight ("" for a bracket that is no call)
    for row in hunk.side(new):
        text = code(row.text)
        if stack and stack[-1]:
            m = _KEYWORD.match(text)
            if m:
                yield stack[-1], m[1], row.sign
        elif row.sign != " " and _one_line(text):
            tree, _ = safe_parse.parse(row.text.strip(), max_source=5_000)  # the whole call on one line
            for node in ast.walk(tree) if isinstance(tree, ast.Module) else ():
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    yield from ((node.func.id, k.arg, row.sign) for k in node.keywords if k.arg)
        # a ``def f(`` or ``class C(`` line opens a definition's brackets, no call
        callees = {} if _DEFINES.match(text) else {m.end() - 1: m[1].rpartition(".")[2]
                                                   for m in _CALLEE.finditer(text)}
        for m in _BRACKET.finditer(text):
            if m[0] in "([{":
                stack.append(callees.get(m.start(), ""))
            elif stack:
                stack.pop()


def _one_line(text: str) -> bool:
    """Whether a capitalized call is opened on the line and a keyword is passed after it."""
    opened = _CALL_OPEN.search(text)
    return opened is not None and _KEYWORD_LATER.search(text, opened.end()) is not None


def _module(source: str, path: str) -> str:
    """A ``from`` import's module, a relative one resolved against the importing file's ``path``."""
    if not source.startswith("."):
        return source
    level = len(source) - len(source.lstrip("."))
    parts = path[:-3].split("/")[:-1]  # the importing module's package
    parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, source[level:]] if source[level:] else parts)


def _imported(found: list[Hunk], path: str, new: bool) -> dict[str, str]:
    """Name → module of the ``from … import`` lines one side of a file's hunks shows."""
    imported: dict[str, str] = {}
    for hunk in found:
        for sign in (" ", "+" if new else "-"):
            imported.update({n: _module(s, path) for n, (s, _) in from_imports(hunk.side(new), hunk.header,
                                                                            sign).items()})
    return imported


def _keywords(found: list[Hunk], path: str, new: bool, wanted: str,
              names: re.Pattern[str] | None = None) -> dict[tuple[str, str], set[str]]:
    """(module, class) → keywords passed to the class's calls on the rows of ``wanted`` signs of one side (only
    hunks that mention one of ``names``, when given)."""
    out: dict[tuple[str, str], set[str]] = {}
    imported: dict[str, str] | None = None
    package = path.split("/", 1)[0]
    for hunk in found:
        if not any(r.sign in wanted and "=" in r.text for r in hunk.rows):
            continue  # no keyword on those lines
        if names is not None and not any(names.search(r.text) for r in hunk.rows):
            continue
        for callee, keyword, sign in _calls(hunk, new):
            if sign not in wanted or not callee[:1].isupper():
                continue
            imported = _imported(found, path, new) if imported is None else imported
            module = imported.get(callee)
            if module and module.split(".")[0] == package:
                out.setdefault((module, callee), set()).add(keyword)
    return out


def passes_facts(files: Iterable[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """``passes`` facts (symbol ``Cls.__init__``, path its module's file, detail the keywords) from the
    ``(path, patch)`` of each Python file; keywords a signature fact of that constructor adds are left to it."""
    now: dict[tuple[str, str], set[str]] = {}
    then: dict[tuple[str, str], set[str]] = {}
    files = list(files)
    for path, patch in files:  # on the lines added
        for key, keywords in _keywords(hunks(patch), path, True, "+").items() if _ADDED_KEYWORD.search(patch) else ():
            now.setdefault(key, set()).update(keywords)
    names = re.compile(r"\b(?:" + "|".join(sorted({re.escape(c) for _, c in now})) + r")\s*\(") if now else None
    for path, patch in files if names else ():
        # anywhere the old side shows, in any file: a keyword a call in sight passed before is no news
        if names is not None and names.search(patch):
            for key, keywords in _keywords(hunks(patch), path, False, " -", names).items():
                then.setdefault(key, set()).update(keywords)
    added: dict[str, set[str]] = {}
    for f in facts:
        if f.kind == "signature":
            added.setdefault(f.symbol, set()).update(p.lstrip("+").split("=")[0] for p in f.detail.split(", ")
                                                     if p.startswith("+"))
    out: list[Change] = []
    for (module, callee), keywords in sorted(now.items()):
        symbol = f"{callee}.__init__"
        fresh = sorted(keywords - then.get((module, callee), set()) - added.get(symbol, set())
                       - added.get(callee, set()))
        if fresh and not callee.startswith("_"):
            out.append(Change(kind="passes", symbol=symbol, path=module.replace(".", "/") + ".py",
                              after=", ".join(fresh), detail=", ".join(fresh)))
    return out
