"""A hook a PR makes and calls, read from its patches together: a new method whose body only raises
``NotImplementedError`` (prdigest.collect.facts.patchobligations) and an added call ``name.method(…)`` on a name
an import in sight of that file brings in (``from vllm.platforms import current_platform``), not guarded.

With the upstream's tree, prdigest.collect.facts.hooks checks the name's declared class; a patch cannot, so the
evidence here is the PR's own: the method is new, so any call of it the PR adds on an imported object is
meant for the hook. The abstract fact then says ``needed_by`` (the calling functions) and a downstream subclass
that does not define it breaks. A new hook whose class is out of the hunk's sight (git's header names only the
method before it) is kept as ``*.method`` only when the PR calls it so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.collect.facts.hunklines import Hunk, hunks, indent
from prdigest.collect.facts.patchobligations import obligation_facts
from prdigest.collect.facts.pyapi import UNIMPLEMENTED
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

_ADDED = UNIMPLEMENTED + " (added)"
_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\.([A-Za-z_]\w*)\s*\(")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_HEAD_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
#: Something in sight that turns a missing hook into a fallback.
_GUARD = re.compile(r"\bhasattr\s*\(|^\s*try\s*:|^\s*except\b|\bgetattr\s*\(")
_OWN = frozenset({"self", "cls", "super"})


def _imported(hunk_list: list[Hunk]) -> set[str]:
    """The names the file's lines in sight (after the change) import: ``from m import a as b`` → ``b``."""
    names: set[str] = set()
    for hunk in hunk_list:
        for row in hunk.side(True):
            m = re.match(r"^\s*from\s+[\w.]+\s+import\s+(.+)$", row.text) or re.match(r"^\s*import\s+(.+)$", row.text)
            if not m or "(" in m[1]:
                continue  # an import over several lines: its names are not all in sight
            for part in m[1].split("#", 1)[0].split(","):
                names.add(part.split(" as ")[-1].strip().split(".")[0])
    return names


def _callers(patches: Sequence[tuple[str, str]], methods: set[str]) -> dict[str, list[str]]:
    """Method → the functions (``module.f``) whose added lines call it on an imported name, unguarded in sight."""
    found: dict[str, list[str]] = {}
    for path, patch in patches:
        if not any(f".{m}(" in patch for m in methods):
            continue
        hunk_list = hunks(patch)
        imported = _imported(hunk_list)
        for hunk in hunk_list:
            rows = hunk.side(True)
            if any(_GUARD.search(r.text) for r in rows):
                continue
            head = _HEAD_DEF.match(hunk.header)
            function = head[1] if head else None
            width = -1 if head else None  # the header's def: its indentation is out of sight
            for row in rows:
                d = _DEF.match(row.text)
                if d:
                    function, width = d[2], indent(row.text)
                    continue
                if row.text.strip() and width is not None and width >= 0 and indent(row.text) <= width:
                    function, width = None, None  # past the function in sight
                if row.sign != "+" or function is None:
                    continue
                for m in _CALL.finditer(row.text):
                    if m[2] in methods and m[1] not in _OWN and m[1] in imported:
                        found.setdefault(m[2], []).append(f"{module_of(path)}.{function}")
    return {k: list(dict.fromkeys(v)) for k, v in found.items()}


def hook_facts(patches: Sequence[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """The facts, each new hook the PR calls on an imported name saying ``needed_by``, plus such hooks whose class
    is out of sight (``*.m``); ``patches``: the PR's Python API files (path, patch)."""
    hidden = [f for path, patch in patches for f in obligation_facts(path, patch, unseen=True)]
    new = [f for f in facts if f.kind == "abstract" and f.detail == _ADDED] + hidden
    if not new:
        return facts
    callers = _callers(patches, {f.symbol.rpartition(".")[2] for f in new})
    out = [f.model_copy(update={"needed_by": tuple(callers[f.symbol.rpartition(".")[2]])})
           if f.kind == "abstract" and f.detail == _ADDED and not f.needed_by
           and f.symbol.rpartition(".")[2] in callers else f for f in facts]
    seen = {(f.kind, f.path, f.symbol.rpartition(".")[2]) for f in facts}
    for f in hidden:
        name = f.symbol.rpartition(".")[2]
        if name in callers and ("abstract", f.path, name) not in seen:
            out.append(f.model_copy(update={"needed_by": tuple(callers[name])}))
    return out
