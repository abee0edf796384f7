"""Which parameters a method's signature fact adds that the PR's own added lines pass, read from its patches: the
``passed`` field the facts engine fills from full files (prdigest.collect.facts.pyapi.passed_parameters), so a
downstream override that does not take the parameter breaks without a clone too.

A call ``r.m(`` opened in sight on either side of a hunk of any Python file of the PR, an added line passing
``p=`` at the call's own depth (anywhere on the line: ``cfg, q, hf_config=c``): ``p`` is passed when the method's
signature fact (symbol ``C.m`` or ``*.m``) adds ``p`` with a default and no call of ``m`` the old side shows passed
it. The receiver is never typed from a patch (``receiver="untyped"``, as full files say of a call on an object of
unknown type), so a call on ``self``, ``cls`` or ``super()`` is not read (the class's own flow: which of its methods
calls it a patch does not show); a ``def m(`` or ``class`` line opens no call. A constructor (``__init__``) is left to
prdigest.collect.facts.patchcalls: its calls name the class, and ``super().__init__(…)`` in an upstream subclass
builds no downstream class.

A module-level function's signature fact (``f``, no class; not a class's fields) is read the same way, from calls
``f(…)`` or ``mod.f(…)`` (``ops.rotary_embedding(…, rope_dim_offset=…)``, a downstream's replacement of it then no
longer binds); a dotted call counts only when no patch of the PR defines a method ``f``, whose call it may be.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from prdigest.collect.facts.hunklines import Hunk, code, hunks
from prdigest.collect.facts.pyapi import PASSES, UNTYPED, added_with_default
from prdigest.kernel.models import Change

#: A bracket, a keyword passed (``name=``, not ``==``), or a name right before its call's ``(``.
_TOKEN = re.compile(r"([()\[\]{}])|\b([A-Za-z_]\w*)\s*=(?!=)|\b([A-Za-z_]\w*)\s*(?=\()")
_DEFINES = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s")
_METHOD = re.compile(r"^[ +-][ \t]+(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(", re.M)
#: A ``class`` line (any sign, any depth) or a hunk header naming one: its name's signature facts are its fields'.
_CLASS = re.compile(r"^(?:[ +-]|@@ .*@@ )\s*class\s+([A-Za-z_]\w*)", re.M)
_OWN = re.compile(r"(?:\b(?:self|cls)|\bsuper\(\s*\))\s*\.\s*$")


def _passed(hunk: Hunk, new: bool, wanted: dict[str, set[str]]) -> Iterator[tuple[str, str, str, bool]]:
    """(method, keyword, sign of the row, whether the call is dotted: ``r.m(``) for each wanted keyword passed at a
    wanted method's call's own depth, on one side of a hunk (brackets opened above the hunk are out of sight:
    nothing inside them is read)."""
    stack: list[tuple[str, bool]] = []
    for row in hunk.side(new):
        text = code(row.text)
        called, dotted = "", False
        defines = bool(_DEFINES.match(text))
        for m in _TOKEN.finditer(text):
            bracket, keyword, name = m[1], m[2], m[3]
            if name:
                # ``self.m(…)``, ``super().m(…)``: the class's own flow, whose callers a patch does not show (full files
                # say them: ``Change.callers``), not a call on an object of unknown type
                called = "" if defines or _OWN.search(text, 0, m.start(3)) else name
                dotted = text[:m.start(3)].rstrip().endswith(".")
            elif bracket in ("(", "[", "{"):
                stack.append((called, dotted) if bracket == "(" else ("", False))
                called = ""
            elif bracket:
                if stack:
                    stack.pop()
                called = ""
            elif keyword and stack and stack[-1][0] in wanted and keyword in wanted[stack[-1][0]]:
                yield stack[-1][0], keyword, row.sign, stack[-1][1]


def _methods(files: list[tuple[str, str]]) -> set[str]:
    """The names an indented ``def`` line of any patch defines (on either side): methods, or nested functions."""
    return {m[1] for _, patch in files for m in _METHOD.finditer(patch)}


def _wanted(f: Change, classes: set[str]) -> bool:
    """Whether ``f`` is a signature fact whose added defaults an added call may pass: a method's (not a
    constructor's: prdigest.collect.facts.patchcalls) or a module-level function's (not a class's fields)."""
    return f.kind == "signature" and not f.passed and not f.symbol.endswith(".__init__") \
        and ("." in f.symbol or f.symbol not in classes)


def with_passed(files: Iterable[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """The facts, each method's or module-level function's signature fact that adds parameters with a default saying
    which of them an added line of the PR passes to a call of it (``files``: ``(path, patch)`` of each Python file).

    A method's calls are on receivers of unknown type (``r.m(…)``: ``receiver="untyped"``). A module-level function
    ``f`` is called bare (``f(…, p=…)``) or through its module (``ops.f(…)``); a dotted call counts only when no
    patch of the PR defines a method ``f`` (the receiver may be an object whose own ``f`` it is)."""
    files = list(files)
    classes = {m[1] for _, patch in files for m in _CLASS.finditer(patch)}
    wanted: dict[str, set[str]] = {}
    for f in facts:
        if _wanted(f, classes):
            added = added_with_default(f.detail)
            if added:
                wanted.setdefault(f.symbol.rpartition(".")[2], set()).update(added)
    if not wanted:
        return facts
    methods = _methods(files)
    now: dict[tuple[str, bool], set[str]] = {}
    then: dict[tuple[str, bool], set[str]] = {}
    for _, patch in files:
        if not any(f"{m}(" in patch for m in wanted):
            continue
        for hunk in hunks(patch):
            for new, into in ((True, now), (False, then)):
                for callee, keyword, sign, dotted in _passed(hunk, new, wanted):
                    if sign == "+" or not new:
                        into.setdefault((callee, dotted), set()).add(keyword)
    out = []
    for f in facts:
        leaf = f.symbol.rpartition(".")[2]
        function = "." not in f.symbol
        # a module-level function's dotted calls count only when no patch defines a method of its name
        ways = (False,) + (() if function and leaf in methods else (True,))
        passes = set().union(*(now.get((leaf, d), set()) for d in ways)) - set().union(
            *(then.get((leaf, d), set()) for d in (False, True)))
        given = sorted(set(added_with_default(f.detail)) & passes) if _wanted(f, classes) else []
        if given:
            note = " and ".join(given) + ("" if function else UNTYPED)
            f = f.model_copy(update={"detail": f.detail + PASSES.format(note), "passed": tuple(given),
                                     "receiver": "" if function else "untyped"})
        out.append(f)
    return out
