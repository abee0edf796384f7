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
_OWN = re.compile(r"(?:\b(?:self|cls)|\bsuper\(\s*\))\s*\.\s*$")


def _passed(hunk: Hunk, new: bool, wanted: dict[str, set[str]]) -> Iterator[tuple[str, str, str]]:
    """(method, keyword, sign of the row) for each wanted keyword passed at a wanted method's call's own depth, on
    one side of a hunk (brackets opened above the hunk are out of sight: nothing inside them is read)."""
    stack: list[str] = []
    for row in hunk.side(new):
        text = code(row.text)
        called = ""
        defines = bool(_DEFINES.match(text))
        for m in _TOKEN.finditer(text):
            bracket, keyword, name = m[1], m[2], m[3]
            if name:
                # ``self.m(…)``, ``super().m(…)``: the class's own flow, whose callers a patch does not show (full files
                # say them: ``Change.callers``), not a call on an object of unknown type
                called = "" if defines or _OWN.search(text, 0, m.start(3)) else name
            elif bracket in ("(", "[", "{"):
                stack.append(called if bracket == "(" else "")
                called = ""
            elif bracket:
                if stack:
                    stack.pop()
                called = ""
            elif keyword and stack and stack[-1] in wanted and keyword in wanted[stack[-1]]:
                yield stack[-1], keyword, row.sign


def with_passed(files: Iterable[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """The facts, each method's signature fact that adds parameters with a default saying which of them an added
    line of the PR passes to a call of that method (``files``: ``(path, patch)`` of each Python file)."""
    wanted: dict[str, set[str]] = {}
    for f in facts:
        if f.kind == "signature" and "." in f.symbol and not f.passed and not f.symbol.endswith(".__init__"):
            added = added_with_default(f.detail)
            if added:
                wanted.setdefault(f.symbol.rpartition(".")[2], set()).update(added)
    if not wanted:
        return facts
    now: dict[str, set[str]] = {}
    then: dict[str, set[str]] = {}
    for _, patch in files:
        if not any(f"{m}(" in patch for m in wanted):
            continue
        for hunk in hunks(patch):
            for new, into in ((True, now), (False, then)):
                for callee, keyword, sign in _passed(hunk, new, wanted):
                    if sign == "+" or not new:
                        into.setdefault(callee, set()).add(keyword)
    out = []
    for f in facts:
        leaf = f.symbol.rpartition(".")[2]
        given = sorted(set(added_with_default(f.detail)) & (now.get(leaf, set()) - then.get(leaf, set()))) \
            if f.kind == "signature" and "." in f.symbol and not f.passed and not f.symbol.endswith(".__init__") \
            else []
        if given:
            f = f.model_copy(update={"detail": f.detail + PASSES.format(" and ".join(given) + UNTYPED),
                                     "passed": tuple(given), "receiver": "untyped"})
        out.append(f)
    return out
