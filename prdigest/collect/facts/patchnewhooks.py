"""A new hook upstream calls, read from a PR's patches together (prdigest.collect.facts.newhooks reads it from full
files): a public method the patches add to a class (``class Platform:`` in git's header or a line above; ``*`` out of
sight),
whose added lines set an attribute on an object named after its class (``cache_config.block_size = …``: two words
or more, prdigest.kernel.typednames), that an added line calls on a name (not ``self``: the method is new, so the
call is meant for it; unguarded, as prdigest.collect.facts.patchhooks reads it), and that a method of another
module loses removed lines setting (``CudaPlatform.check_and_update_config``'s ``cache_config.block_size = 16``;
``*.m`` when git's header names only the method). Its ``added`` fact then says ``sets``, ``needed_by`` and
``moved_from``; the patch's own ``added`` fact of the method, which reads it as a module-level name when its class
is only in git's header, takes the class.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from prdigest.collect.facts.hunklines import hunks
from prdigest.collect.facts.patchhooks import _CALL, _GUARD, _OWN
from prdigest.collect.facts.patchrehomed import _functions
from prdigest.collect.facts.patchsigs import WILDCARD
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

#: ``…cache_config.block_size = v`` (or ``+=``): the attribute set and the object it is set on; not ``==``.
_SETS = re.compile(r"^\s*(?:[A-Za-z_]\w*\.)*([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\.([A-Za-z_]\w*)\s*[-+*/|&]?=(?!=)")


def _set_on(text: str) -> str | None:
    """``cache_config.block_size`` for a line that assigns it, else None."""
    m = _SETS.match(text)
    return f"{m[1]}.{m[2]}" if m and not m[2].startswith("__") else None


def new_hook_facts(patches: Sequence[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """The facts, with an ``added`` fact carrying ``sets``, ``needed_by`` and ``moved_from`` for each new hook the
    patches show (``patches``: the PR's Python API files, ``(path, patch)``)."""
    new: dict[tuple[str, str], set[str]] = defaultdict(set)  # (path, C.h) → what its added lines set
    lost: dict[str, set[tuple[str, str]]] = defaultdict(set)  # attribute → (path, function) whose lines set it
    for path, patch in patches:
        for hunk in hunks(patch):
            for row, function, added in _functions(hunk, hunk.side(True)):
                if row.sign == "+" and added and function and "." in function \
                        and not function.rpartition(".")[2].startswith("_"):
                    written = _set_on(row.text)
                    new[(path, function)].update([written] if written else [])
            for row, function, _ in _functions(hunk, hunk.side(False)):
                written = _set_on(row.text) if row.sign == "-" and function and "." in function else None
                if written and function:
                    lost[written].add((path, function))
    hooks: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for (path, symbol), assigned in new.items():
        leaf = symbol.rpartition(".")[2]
        homes = sorted({f"{module_of(p)}.{fn}" for s in assigned for p, fn in lost.get(s, ())
                        if p != path and fn.rpartition(".")[2] != leaf})
        if homes:
            hooks[(path, symbol)] = (tuple(sorted(assigned)), tuple(homes))
    if not hooks:
        return facts
    callers = _callers(patches, {symbol.rpartition(".")[2] for _, symbol in hooks})
    out = list(facts)
    for (path, symbol), (sets, moved) in sorted(hooks.items()):
        leaf = symbol.rpartition(".")[2]
        if leaf not in callers:
            continue
        at = next((i for i, f in enumerate(out) if f.kind == "added" and f.path == path
                   and f.symbol in (leaf, symbol, f"{WILDCARD}.{leaf}")), None)
        fact = out[at] if at is not None else Change(kind="added", symbol=symbol, path=path)
        fact = fact.model_copy(update={"symbol": symbol, "sets": sets, "needed_by": callers[leaf],
                                       "moved_from": moved})
        if at is None:
            out.append(fact)
        else:
            out[at] = fact
    return out


def _callers(patches: Sequence[tuple[str, str]], methods: set[str]) -> dict[str, tuple[str, ...]]:
    """Method → the functions (``module.f``, ``module.C.f``) whose added lines call it on a name (not ``self``,
    ``cls`` or ``super()``), no ``hasattr``/``getattr``/``try`` in the hunk: the methods are new, so a call of one
    the PR adds is meant for it (the name's import is often out of sight: only git's header shows it)."""
    found: dict[str, list[str]] = defaultdict(list)
    for path, patch in patches:
        if not any(f".{m}(" in patch for m in methods):
            continue
        for hunk in hunks(patch):
            if any(_GUARD.search(r.text) for r in hunk.side(True)):
                continue
            for row, function, _ in _functions(hunk, hunk.side(True)):
                if row.sign != "+" or function is None:
                    continue
                for m in _CALL.finditer(row.text):
                    if m[2] in methods and m[1] not in _OWN:
                        found[m[2]].append(f"{module_of(path)}.{function}")
    return {k: tuple(dict.fromkeys(v)) for k, v in found.items()}
