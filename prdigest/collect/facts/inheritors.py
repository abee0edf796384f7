"""Upstream classes that inherit a changed method without defining it: ``Child(Base)`` in another module, where
``Base.f`` changed its signature, return type or was removed (or a data attribute ``Base.x`` was). A downstream
reaches that method as ``Child.f`` (it overrides it in ``Mine(Child)``, calls ``Child.f``, patches it), a name no
fact on ``Base.f`` says; the fact's ``inherited_by`` lists those classes (``vllm.b.Child``) and the match reads the
uses of each.

Subclasses are found in the commit's changed files and, with the upstream's whole tree (``--git``), in every
Python file of it whose text names a changed class in a ``class …(…)`` line; each candidate's bases are resolved
through its imports (prdigest.collect.facts.hierarchy.Hierarchy), grandchildren too, up to a few levels.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hierarchy import Hierarchy, Reader, UpstreamTree, module_reader
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

#: The facts whose change an inheriting class shares (a body change is the base's own business: a check anyway); of
#: ``attribute`` facts, a data attribute removed (``self.x`` no longer set by the base).
KINDS = frozenset({"signature", "returns", "removed", "attribute"})
#: How many generations below the changed class are followed.
DEPTH = 3


_CLASS_BASES = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(([^)]*)", re.MULTILINE)
_WORD = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=65536)
def _base_words(text: str) -> frozenset[str]:
    """The words a module's ``class X(…)`` lines write among their bases (each tree file read once per run)."""
    return frozenset(w for bases in _CLASS_BASES.findall(text) for w in _WORD.findall(bases))


def with_inheritors(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None) -> list[Change]:
    """The facts, each method fact of :data:`KINDS` saying which upstream classes inherit that method."""
    targets = [f for f in facts if f.kind in KINDS and f.symbol.count(".") == 1 and f.public
               and f.path.endswith(".py") and not f.symbol.startswith("*.")
               and (f.kind != "attribute" or f.detail.startswith("removed"))]
    if not targets:
        return facts
    after = {f.path: f.after for f in diff.files if f.after is not None and f.path.endswith(".py")}

    read = module_reader(after, tree, diff.sha)
    classes = Hierarchy(read)
    # (module, class) → the classes below it (module, class) that define none of the methods asked of it
    children: dict[tuple[str, str], list[tuple[str, str]]] = {}
    frontier = {(module_of(f.path), f.symbol.split(".")[0]) for f in targets}
    seen = set(frontier)
    for _ in range(DEPTH):
        if not frontier:
            break
        names = {cls for _, cls in frontier}

        def naming(text: str, names: set[str] = names) -> bool:
            return not names.isdisjoint(_base_words(text))

        texts = {p: t for p, t in after.items() if naming(t)}
        if tree is not None:
            texts.update(tree.texts_where(diff.sha, naming) or {})
        found: set[tuple[str, str]] = set()
        for path, text in texts.items():
            parsed = pyapi.parse(text)
            if parsed is None:
                continue
            module = module_of(path)
            for name, d in parsed.defs.items():
                if d.kind != "class" or "." in name:
                    continue
                for base in classes.bases(module, name):
                    if isinstance(base, tuple) and base in frontier and (module, name) not in seen:
                        children.setdefault(base, []).append((module, name))
                        found.add((module, name))
        seen |= found
        frontier = found
    if not children:
        return facts
    chosen = {id(f) for f in targets}  # by identity: comparing pydantic models field by field is slow
    out: list[Change] = []
    for f in facts:
        if id(f) in chosen:
            cls, method = f.symbol.split(".")
            heirs = _heirs((module_of(f.path), cls), method, children, read)
            if heirs:
                f = f.model_copy(update={"inherited_by": tuple(sorted(heirs))})
        out.append(f)
    return out


def _heirs(top: tuple[str, str], method: str, children: dict[tuple[str, str], list[tuple[str, str]]],
           read: Reader) -> list[str]:
    """``module.Class`` of each class below ``top`` that gets ``method`` from it (none on the way defines it)."""
    out: list[str] = []
    todo = list(children.get(top, ()))
    seen: set[tuple[str, str]] = set()  # each class once: a lattice of bases has width ** depth ways down to it
    while todo:
        module, cls = todo.pop()
        if (module, cls) in seen:
            continue
        seen.add((module, cls))
        got = read(module)
        if got is not None and (f"{cls}.{method}" in got[0].defs or f"{cls}.{method}" in got[0].attributes):
            continue  # it defines or sets its own: below it, the name is that one
        out.append(f"{module}.{cls}")
        todo += children.get((module, cls), ())
    return out


def heir_symbols(change: Change) -> Sequence[tuple[str, str]]:
    """(module, ``Child.f``) of each class that inherits the fact's method."""
    leaf = change.symbol.rpartition(".")[2]
    return [(owner.rpartition(".")[0], f"{owner.rpartition('.')[2]}.{leaf}") for owner in change.inherited_by]
