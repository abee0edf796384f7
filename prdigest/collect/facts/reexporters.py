"""Upstream packages that re-export a changed name from elsewhere: ``vllm/attention/__init__.py`` doing ``from
vllm.model_executor.layers.attention.layer import Attention``. A downstream writing ``from vllm.attention import
Attention`` uses the changed class, under a name no fact on ``layer.py`` says: the match already follows the
packages above the fact's module (their ``__init__`` may re-export it), and a fact's ``reexported_by`` lists the
other packages (``vllm.attention``) whose ``__init__`` imports the name from the fact's module, the match reading
uses through each of them too.

They are found among the commit's changed ``__init__`` files and, with the upstream's whole tree (``--git``), every
``__init__`` of it whose text has ``from <module> import``; a package re-exporting from such a package is followed
too, a level or two.
"""

from __future__ import annotations

import re

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hierarchy import UpstreamTree
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

#: The facts about a name a package can re-export (its top-level part): not files, settings, pins or kernels.
KINDS = frozenset({"signature", "returns", "removed", "renamed", "abstract", "attribute", "passes", "bases", "body",
                   "added"})
#: How many re-exports deep a name is followed (``a`` from ``b`` from the defining module).
DEPTH = 2


def _importing(modules: set[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(m) for m in sorted(modules))
    return re.compile(rf"^[ \t]*from[ \t]+(?:{alternatives})[ \t]+import\b", re.MULTILINE)


def _within(module: str, package: str) -> bool:
    """Whether ``package`` is ``module`` or a package above it (the match follows those already)."""
    return module == package or module.startswith(package + ".")


def with_reexporters(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None) -> list[Change]:
    """The facts, each one about a module's name saying which other packages' ``__init__`` re-export it."""
    targets = [f for f in facts if f.kind in KINDS and f.path.endswith(".py") and f.language == "python"
               and not f.symbol.startswith("*.") and not f.path.endswith("__init__.py")]
    if not targets:
        return facts
    inits = {f.path: f.after for f in diff.files if f.after is not None and f.path.endswith("/__init__.py")}
    # (module, name) → the packages that re-export it
    wanted = {(module_of(f.path), f.symbol.split(".")[0]) for f in targets}
    by: dict[tuple[str, str], set[str]] = {}
    frontier = set(wanted)
    for _ in range(DEPTH):
        if not frontier:
            break
        pattern = _importing({m for m, _ in frontier})

        def importing(text: str, pattern: re.Pattern[str] = pattern) -> bool:
            return pattern.search(text) is not None

        texts = {p: t for p, t in inits.items() if importing(t)}
        if tree is not None:
            texts.update(tree.texts_where(diff.sha, importing, "/__init__.py") or {})
        found: set[tuple[str, str]] = set()
        for path, text in texts.items():
            parsed = pyapi.parse(text)
            package = module_of(path)
            if parsed is None:
                continue
            for name, source in parsed.imported.items():
                if (source, name) in frontier and not _within(source, package):
                    by.setdefault((source, name), set()).add(package)
                    found.add((package, name))
        # what a package re-exports from a re-exporting package is the original's
        for key in list(by):
            for package in list(by[key]):
                for deeper in by.get((package, key[1]), ()):
                    by[key].add(deeper)
        frontier = found - wanted
        wanted |= found
    if not by:
        return facts
    chosen = {id(f) for f in targets}  # by identity: comparing pydantic models field by field is slow
    out: list[Change] = []
    for f in facts:
        packages = by.get((module_of(f.path), f.symbol.split(".")[0])) if id(f) in chosen else None
        if packages:
            f = f.model_copy(update={"reexported_by": tuple(sorted(packages))})
        out.append(f)
    return out
