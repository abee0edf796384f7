"""Which parameters a method's signature fact adds that the PR's own added lines pass, read from its patches: the
``passed`` field the facts engine fills from full files (prdigest.collect.facts.pyapi.passed_parameters), so a
downstream override that does not take the parameter breaks without a clone too.

A call ``r.m(`` opened in sight on either side of a hunk of any Python file of the PR, an added line passing
``p=`` at the call's own depth (prdigest.collect.facts.patchcalls reads the calls): ``p`` is passed when the
method's signature fact (symbol ``C.m`` or ``*.m``) adds ``p`` with a default and no call of ``m`` the old side
shows passed it. The receiver is never typed from a patch (``receiver="untyped"``, as full files say of a call on
an object of unknown type); a ``def m(`` line is a definition, never a call.
"""

from __future__ import annotations

from collections.abc import Iterable

from prdigest.collect.facts.hunklines import hunks
from prdigest.collect.facts.patchcalls import calls_in
from prdigest.collect.facts.pyapi import PASSES, UNTYPED, added_with_default
from prdigest.kernel.models import Change


def with_passed(files: Iterable[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """The facts, each method's signature fact that adds parameters with a default saying which of them an added
    line of the PR passes to a call of that method (``files``: ``(path, patch)`` of each Python file)."""
    wanted: dict[str, set[str]] = {}
    for f in facts:
        if f.kind == "signature" and "." in f.symbol and not f.passed:
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
                for callee, keyword, sign in calls_in(hunk, new):
                    if callee in wanted and keyword in wanted[callee] and (sign == "+" or not new):
                        into.setdefault(callee, set()).add(keyword)
    out = []
    for f in facts:
        leaf = f.symbol.rpartition(".")[2]
        given = sorted(set(added_with_default(f.detail)) & (now.get(leaf, set()) - then.get(leaf, set()))) \
            if f.kind == "signature" and "." in f.symbol and not f.passed else []
        if given:
            f = f.model_copy(update={"detail": f.detail + PASSES.format(" and ".join(given) + UNTYPED),
                                     "passed": tuple(given), "receiver": "untyped"})
        out.append(f)
    return out
