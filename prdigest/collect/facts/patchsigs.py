"""Signatures read back from a patch's hunks: a function's parameters and return annotation as each side of a
hunk shows them, when the whole signature is in sight on both sides, or its tail is.

vLLM's formatter puts one parameter per line, so adding, renaming or defaulting a parameter changes a line
inside the signature and never the ``def`` line: the single changed lines say nothing. Here a signature is read
from its ``def`` line (context, ``-`` or ``+``) to the line that closes it (``) -> T:``) on each side, parsed
as Python and compared as the facts engine compares two files (:func:`pyapi.signature_detail`).

When the hunk starts inside a signature (git's header names its ``def``), only the tail is in sight: what the
tail shows of added, removed, renamed or defaulted parameters is true of the whole (the lines above it are the
same on both sides), but not where they stand, so such a fact says no position and gives no before/after
(a call passing arguments by position is then told to check, never to fix). A tail is taken for a signature
only when it parses as parameters, one of them annotated (no call or tuple can hold ``name: T``), and closes
with ``):`` or ``) -> T:``. Read the same way, with no position: a hunk inside a signature from end to end (one
parameter a line, one annotated with a default, or the first row ``self,`` right under the header's ``def`` and
one annotated), and a head (a ``def name(`` line in sight whose parameters, one a line, run past the hunk).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hunklines import Hunk, Row, code, hunks, indent, python_headers
from prdigest.collect.facts.patchrequired import mark_required
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change

#: A method whose class is out of sight: any class of the module (prdigest.connect.impact.matchers.WILDCARD).
WILDCARD = "*"
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)\b")
_PARAM = re.compile(r"^\s+(?:\*{0,2}[A-Za-z_]\w*(?:\s*:\s*[^=#]+?)?(?:\s*=\s*[^#]+?)?|\*|/),\s*(?:#.*)?$")
_DEFAULTED = re.compile(r"^\s+[A-Za-z_]\w*\s*:\s*[^=#]+?\s*=\s*[^#]+?,\s*(?:#.*)?$")
_CLOSE_REST = re.compile(r"^\s*(?:->.*)?:\s*$")
_CALLED_DUNDERS = frozenset({"__init__", "__new__", "__call__"})


@dataclass(frozen=True)
class Sig:
    """One side's signature of one function: its qualified name, parameters, return annotation, whether the
    ``def`` line was in sight (else only the tail), and its line on that side."""

    name: str
    params: tuple[pyapi.Param, ...]
    returns: str
    whole: bool
    line: int
    #: Its ``def`` line in sight, its closing line not: the parameters' positions are known from the first.
    head: bool = False


def _close(rows: list[Row], start: int, column: int, depth: int) -> int | None:
    """The index of the row that closes a signature opened before ``rows[start]`` (at ``column`` of it, with
    ``depth`` brackets open), when it ends ``):`` or ``) -> T:`` (``T`` on more lines too); else None."""
    returns = False  # past the closing parenthesis, inside ``-> T``
    for i in range(start, len(rows)):
        text = code(rows[i].text)
        for k in range(column if i == start else 0, len(text)):
            ch = text[k]
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
                if depth == 0 and not returns:
                    rest = text[k + 1:]
                    if _CLOSE_REST.match(rest):
                        return i
                    if not re.match(r"^\s*->", rest):
                        return None
                    returns = True
            if returns and depth == 0 and ch == ":" and not text[k + 1:].strip():
                return i
        if rows[i].text.rstrip().endswith("\\"):
            return None
    return None


def _parse(source: str) -> tuple[tuple[pyapi.Param, ...], str, bool] | None:
    """Parameters, return annotation and whether one parameter is annotated, of ``def f(...):`` text."""
    tree, _ = safe_parse.parse(source + "\n pass\n", max_source=50_000)
    if not isinstance(tree, ast.Module) or len(tree.body) != 1 \
            or not isinstance(tree.body[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    node = tree.body[0]
    args = node.args
    annotated = any(a.annotation is not None for a in [*args.posonlyargs, *args.args, *args.kwonlyargs])
    return pyapi._params(args), pyapi._unparse(node.returns, 120) or "", annotated


def _owner(width: int, stack: list[tuple[int, str, str]], hunk: Hunk, python: bool, header: bool) -> str | None:
    """The dotted prefix of a ``def`` at ``width`` (``""`` at module level, ``Class.``, ``*.``), or None for a
    nested function or an owner that cannot be told (``header``: nothing at column 0 came before it in the hunk,
    so git's header still names what holds it)."""
    if width == 0:
        return ""
    enclosing = [(w, kind, name) for w, kind, name in stack if w < width]
    if enclosing:
        if enclosing[-1][1] == "def":
            return None  # a function inside a function: no API
        names = [name for _, kind, name in enclosing if kind == "class"]
        return ".".join(names) + "." if enclosing[0][0] == 0 else f"{WILDCARD}.{names[-1]}."
    if not header:
        return None
    if hunk.header_class and width == 4:
        return hunk.header_class + "."  # the header is a class at column 0 (either rule) and nothing else in sight
    if hunk.header_def and python:
        return f"{WILDCARD}."  # the last definition before the hunk is a function: its class is out of sight
    return None


def defs_in_sight(hunk: Hunk, rows: list[Row], python: bool,
                  open_heads: bool = False) -> Iterator[tuple[str, int, int]]:
    """Each ``def`` whose line and whole signature one side of a hunk shows, with a known owner: its qualified
    name, the index of its ``def`` row and of the row closing its signature. With ``open_heads``, also each ``def
    name(`` line whose parameters run past the hunk's end, one a line (``-1`` for the closing row)."""
    stack: list[tuple[int, str, str]] = []
    header = True
    for i, row in enumerate(rows):
        text = row.text
        stripped = text.strip()
        width = indent(text)
        if stripped and width == 0:
            header = False  # past a column-0 line git's header no longer says what holds the lines below
        if not stripped or stripped[0] in ")]}#@\"'":
            continue
        stack = [s for s in stack if s[0] < width]
        klass = _CLASS.match(text)
        if klass:
            stack.append((width, "class", klass[2]))
            continue
        m = _DEF.match(text)
        if not m:
            continue
        owner = _owner(width, stack, hunk, python, header)
        stack.append((width, "def", m[2]))
        end = _close(rows, i, m.end() - 1, 0)
        if owner is not None and end is not None:
            yield owner + m[2], i, end
        elif owner is not None and open_heads and code(text).rstrip().endswith("(") and i + 1 < len(rows) \
                and all(_PARAM.match(r.text) for r in rows[i + 1:]):
            yield owner + m[2], i, -1  # its parameters go on past the hunk: the rows below are the same both sides


def _side(hunk: Hunk, new: bool, python: bool) -> dict[str, Sig]:
    """The signatures one side of a hunk shows, by qualified name (the first of a name)."""
    rows = hunk.side(new)
    found: dict[str, Sig] = {}
    name = hunk.header_def
    if name and rows:
        end = _close(rows, 0, 0, 1)
        if end is not None:
            width = indent(rows[end].text)
            parsed = _parse("def f(\n" + "\n".join(r.text for r in rows[:end + 1]))
            qualified = name if width == 0 else f"{WILDCARD}.{name}" if python else None
            if parsed is not None and parsed[2] and qualified:
                found[qualified] = Sig(qualified, parsed[0], parsed[1], False, rows[0].line)
        elif end is None and all(_PARAM.match(r.text) for r in rows):
            # the hunk starts and ends inside one signature: one parameter a line, one annotated with a default
            # (``x: T = v`` is no dict entry, call argument or tuple item), or the first row ``self,`` (the
            # header's def is the line right above) and one annotated (``x: T`` is no call argument, and no set
            # holds it), so the header's def holds them
            width = indent(rows[0].text)
            parsed = _parse("def f(\n" + "\n".join(r.text for r in rows) + "\n):")
            qualified = name if width == 4 else f"{WILDCARD}.{name}" if python else None
            first = rows[0].text.strip() in ("self,", "cls,")
            if parsed is not None and qualified and (any(_DEFAULTED.match(r.text) for r in rows)
                                                     or (first and parsed[2])):
                found[qualified] = Sig(qualified, parsed[0], "", False, rows[0].line, head=first)
    at = {id(r): k for k, r in enumerate(hunk.rows)}
    for qualified, i, end in defs_in_sight(hunk, rows, python, open_heads=True):
        last = at[id(rows[end])] if end >= 0 else len(hunk.rows) - 1
        if all(r.sign == " " for r in hunk.rows[at[id(rows[i])]:last + 1]):
            continue  # no line of it changed: the same on both sides
        if end < 0:
            # the head only (its ``def`` line and parameters, one a line, to the hunk's end): what it shows added,
            # removed or renamed is true of the whole, as of a tail; one annotated (no call argument is)
            parsed = _parse("\n".join([rows[i].text.lstrip(), *(r.text for r in rows[i + 1:])]) + "\n):")
            if parsed is not None and parsed[2]:
                found.setdefault(qualified, Sig(qualified, parsed[0], "", False, rows[i].line, head=True))
            continue
        parsed = _parse("\n".join([rows[i].text.lstrip(), *(r.text for r in rows[i + 1:end + 1])]))
        if parsed is not None:
            found.setdefault(qualified, Sig(qualified, parsed[0], parsed[1], True, rows[i].line))
    return found


def _tail_detail(detail: str, params: tuple[pyapi.Param, ...], in_place: bool = False) -> str:
    """A signature detail as a fact without before/after must say it, the match reading it token by token: a
    rename as the removal and addition it is (``-dtype, +num_tokens=0``); what needs the whole signature to
    mean anything left out (a position, a kind ``positional→keyword-only``, ``*args``/``**kwargs`` added or a
    parameter they now absorb: no call that worked stops working by these alone)."""
    defaults = {p.name: p.default for p in params}
    out: list[str] = []
    for part in filter(None, detail.split(", ")):
        if ": " in part or part.startswith("+*") or (part.startswith("-") and "→**" in part):
            continue
        if "→" in part and "=" not in part and not part.startswith(("+", "-")):
            if in_place:
                # a head shows the first parameters: a rename in place still binds a call by position, so it stays
                # a rename (a check for every use) rather than a removal a positional call would be broken by
                out.append(part)
                continue
            old, new = part.split("→", 1)
            default = defaults.get(new)
            out += [f"-{old}", f"+{new}" + (f"={default}" if default is not None else "")]
            continue
        out.append(part)
    return ", ".join(out)


def _public(symbol: str) -> bool:
    return all(not p.startswith("_") or p in _CALLED_DUNDERS for p in symbol.split(".") if p != WILDCARD)


def signature_facts(path: str, patch: str) -> list[Change]:
    """The ``signature`` and ``returns`` facts a Python file's patch proves from the signatures in sight."""
    found = hunks(patch)
    python = python_headers(found)
    facts: list[Change] = []
    seen: set[str] = set()
    for hunk in found:
        old, new = _side(hunk, False, python), _side(hunk, True, python)
        for name, a in new.items():
            b = old.get(name)
            if b is None or b.whole != a.whole or name in seen:
                continue
            detail = pyapi.signature_detail(b.params, a.params)
            if not a.whole:  # the tail only: the match reads the detail alone
                detail = _tail_detail(mark_required(detail, b.params), a.params, in_place=a.head and b.head)
            if detail:
                seen.add(name)
                facts.append(Change(kind="signature", symbol=name, path=path, line=a.line,
                                    before=pyapi._params_text(b.params) if a.whole else "",
                                    after=pyapi._params_text(a.params) if a.whole else "",
                                    detail=detail, public=_public(name)))
            if b.returns and a.returns and pyapi.type_names(b.returns) != pyapi.type_names(a.returns):
                seen.add(name)
                facts.append(Change(kind="returns", symbol=name, path=path, line=a.line, before=b.returns,
                                    after=a.returns, detail=f"{b.returns}→{a.returns}", public=_public(name)))
    return facts
