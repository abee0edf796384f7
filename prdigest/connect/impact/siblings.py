"""Upstream names reached through one of the downstream's own modules that merely re-imports them.

``compat.py`` does ``from vllm.x import FusedMoE``; another file then writes ``from ds import compat`` and
``compat.FusedMoE``, ``import ds.compat as cc`` and ``cc.FusedMoE``, ``import ds.compat`` and
``ds.compat.FusedMoE``, or ``from ds.compat import *`` and ``FusedMoE``. Each of those is a use of
``vllm.x.FusedMoE``: :class:`Siblings` knows which local names are the downstream's modules and follows a chain
through them to the name the module bound (prdigest.connect.impact.index resolves the rest).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

#: (module, name or None for ``import m``, bound local name, line, level), as the index's FileSummary keeps them.
Import = tuple[str, str | None, str, int, int]


@dataclass
class Siblings:
    """For each downstream file: its local names bound to a downstream module, and the modules it star-imports."""

    #: Every downstream module and package (``ds``, ``ds.compat``).
    modules: frozenset[str]
    #: path → local name → downstream module (``compat`` → ``ds.compat``; ``ds`` → ``ds`` for ``import ds.compat``)
    bound: dict[str, dict[str, str]] = field(default_factory=dict)
    #: path → the downstream modules it imports ``*`` from
    stars: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, files: Iterable[tuple[str, str, Sequence[Import]]],
           absolute: Callable[[str, str, int], str]) -> "Siblings":
        """From each file's (path, module, imports); ``absolute(path, module, level)`` resolves a relative import."""
        files = list(files)
        modules: set[str] = set()
        for _, module, _ in files:
            parts = module.split(".")
            modules.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        out = cls(frozenset(modules))
        for path, _, imports in files:
            bound: dict[str, str] = {}
            for module, name, local, _, level in imports:
                if name is None:  # import a.b [as z]: ``local`` is "bound=target"
                    alias, target = local.split("=", 1)
                    if target in out.modules:
                        bound[alias] = target
                    continue
                full = absolute(path, module, level)
                if name == "*":
                    if full in out.modules:
                        out.stars.setdefault(path, []).append(full)
                elif f"{full}.{name}" in out.modules:  # from ds import compat
                    bound[local] = f"{full}.{name}"
            if bound:
                out.bound[path] = bound
        return out

    def star_names(self, path: str, bindings_of: Callable[[str], Mapping[str, str]]) -> dict[str, str]:
        """The upstream names a file gets through ``from <downstream module> import *`` (``bindings_of(module)``:
        what that module bound)."""
        got: dict[str, str] = {}
        for module in self.stars.get(path, ()):
            for name, target in bindings_of(module).items():
                if not name.startswith("_"):
                    got.setdefault(name, target)
        return got

    def resolve(self, path: str, chain: Sequence[str], bindings_of: Callable[[str], Mapping[str, str]]) -> str | None:
        """The upstream dotted name ``chain`` reaches through a downstream module bound in ``path``, or None."""
        module = self.bound.get(path, {}).get(chain[0])
        if module is None:
            return None
        i = 1
        while i < len(chain) and f"{module}.{chain[i]}" in self.modules:  # ds.compat.X: walk down the packages
            module = f"{module}.{chain[i]}"
            i += 1
        if i >= len(chain):
            return None
        target = bindings_of(module).get(chain[i])
        return ".".join([target, *chain[i + 1:]]) if target is not None else None
