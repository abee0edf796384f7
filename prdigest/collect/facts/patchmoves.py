"""Names a PR moves between modules, read from its patches: a ``class``/``def`` at column 0 whose line one file
removes and another file of the same PR adds (a class split out into its own module). A patch alone sees the
removal and says ``removed``; the whole change says ``moved`` (and nothing breaks where the old module imports
the name back: a re-export). :func:`relocated` rewrites the patch facts so.

Only column-0 lines count: a method's ``def`` names no module-level name, and two classes' methods of one name
are no move. A method of a moved class is said by the class's own fact (a use of ``old.C.m`` is under ``old.C``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from prdigest.collect.facts.hunklines import code, hunks
from prdigest.collect.facts.patchexports import from_imports
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import is_python, module_of

_TOP = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)\b")
_IMPORT = re.compile(r"^import\s+(.*)$")


def _tops(patch: str, sign: str) -> set[str]:
    """The names a ``class``/``def`` line at column 0 defines on the rows of ``sign``."""
    return {m[1] for h in hunks(patch) for r in h.rows if r.sign == sign for m in [_TOP.match(r.text)] if m}


def _imported(patch: str) -> set[str]:
    """The names the patch's added lines import (``from m import X``, ``import a.X as X``)."""
    names: set[str] = set()
    for h in hunks(patch):
        names.update(from_imports(h.side(True), h.header, "+"))
        for r in h.rows:
            m = _IMPORT.match(code(r.text).strip()) if r.sign == "+" else None
            if m:
                names.update(p.split(" as ")[-1].strip().rsplit(".", 1)[-1] for p in m[1].split(","))
    return names


def relocated(facts: Sequence[Change], files: Iterable[tuple[str, str | None]]) -> list[Change]:
    """``facts`` with each ``removed`` module-level name (or a method of one) that another file of the PR now
    defines at column 0 said as ``moved`` there: ``detail="re-exported"`` when the old file imports it back
    (nothing breaks), else a move that breaks imports through the old module; one fact per moved name."""
    patches = {path: patch for path, patch in files if patch and is_python(path)}
    gone = {path: _tops(patch, "-") for path, patch in patches.items()}
    if not any(gone.values()):
        return list(facts)
    new = {path: _tops(patch, "+") for path, patch in patches.items()}
    out: list[Change] = []
    said: set[tuple[str, str]] = set()
    imported: dict[str, set[str]] = {}  # each old file's imports read once: a file moving 20,000 names read them each
    for fact in facts:
        top = fact.symbol.split(".", 1)[0]
        if fact.kind != "removed" or fact.detail or top not in gone.get(fact.path, ()) or top in new.get(fact.path, ()):
            out.append(fact)
            continue
        targets = sorted(p for p, names in new.items() if p != fact.path and top in names)
        if not targets:
            out.append(fact)
            continue
        if (fact.path, top) in said:
            continue  # the class's move says it for its methods too
        said.add((fact.path, top))
        old, where = module_of(fact.path), module_of(targets[0])
        if fact.path not in imported:
            imported[fact.path] = _imported(patches[fact.path])
        back = top in imported[fact.path]
        out.append(Change(kind="moved", symbol=top, path=targets[0], before=old, after=where,
                          detail="re-exported" if back else "", public=fact.public))
    return out
