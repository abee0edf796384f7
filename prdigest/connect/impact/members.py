"""Attributes a downstream reads or sets on an object named after a class (``vllm_config.compilation_config.x``,
``self.cache_config.block_size = 16``): the naming convention types the object where nothing else can.

The index keeps each such (receiver, attribute) pair as a ``member`` use (symbol ``.compilation_config.x``, the
first line per function); the match reads one as a use of ``CompilationConfig.x`` (prdigest.kernel.typednames: only
receivers of two words or more count). Unlike the ``attribute`` uses by name, a name the downstream assigns itself
is kept: an assignment through ``….compilation_config.x`` sets the upstream's field, not an attribute of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Set

from prdigest.kernel.typednames import is_typed, receiver_of

__all__ = ["members", "receiver_of"]

Parts = tuple[str, ...]


def members(chains: Iterable[tuple[Parts, int]], imported: set[str], scope: Callable[[int], str] = lambda line: "",
            guarded: Set[tuple[str, str]] = frozenset()) -> list[tuple[str, str, int]]:
    """(receiver, attribute, line) of each attribute read or set on a receiver of two words or more in ``chains``
    (the file's reads, the chains of its calls less the method called, its assignment targets), the first line
    per pair and function (``scope``: a line's innermost function); not in a chain whose root the file imports (a
    module's path, a class: resolved as upstream names), nor of an attribute whose function allows for its absence
    (``guarded``: (function, attribute) of a ``getattr(obj, "x", …)`` or ``hasattr(obj, "x")`` there)."""
    first: dict[tuple[str, str, str], int] = {}
    typed: dict[str, bool] = {}  # most chains are of a few names: each name's words counted once per file
    for chain, line in chains:
        if chain[0] in imported:
            continue
        for i in range(len(chain) - 1):
            receiver, name = chain[i], chain[i + 1]
            known = typed.get(receiver)
            if known is None:
                known = typed[receiver] = is_typed(receiver)
            if not known or name.startswith("__"):
                continue
            where = scope(line)
            if (where, name) in guarded:
                continue
            key = (receiver, name, where)
            if line < first.get(key, line + 1):
                first[key] = line
    return sorted(((receiver, name, line) for (receiver, name, _), line in first.items()), key=lambda row: row[2])
