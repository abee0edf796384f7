"""Attributes a downstream reads or sets on an object named after a class (``vllm_config.compilation_config.x``,
``self.cache_config.block_size = 16``): the naming convention types the object where nothing else can.

The index keeps each such (receiver, attribute) pair as a ``member`` use (symbol ``.compilation_config.x``, the
first line per file); the match reads one as a use of ``CompilationConfig.x`` (:func:`receiver_of`). Only
receivers of two words or more count: ``compilation_config`` names one class, ``config`` or ``request`` may name
any. Unlike the ``attribute`` uses by name, a name the downstream assigns itself is kept: an assignment through
``….compilation_config.x`` sets the upstream's field, not an attribute of the downstream's own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Parts = tuple[str, ...]

#: A receiver of at least two lowercase words (``cache_config``, ``kv_transfer_config``).
_RECEIVER = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def receiver_of(cls: str) -> str | None:
    """The name an object of class ``cls`` goes by (``CompilationConfig`` → ``compilation_config``,
    ``KVTransferConfig`` → ``kv_transfer_config``), or None for a one-word class (``Request``): too common a name
    to type anything."""
    name = _WORD_START.sub("_", cls.rpartition(".")[2]).lower()
    return name if _RECEIVER.fullmatch(name) else None


def members(chains: Iterable[tuple[Parts, int]], imported: set[str]) -> list[tuple[str, str, int]]:
    """(receiver, attribute, line) of each attribute read or set on a receiver of two words or more in ``chains``
    (the file's reads, the chains of its calls less the method called, its assignment targets), the first line
    per pair; not in a chain whose root the file imports (a module's path, a class: resolved as upstream names)."""
    first: dict[tuple[str, str], int] = {}
    for chain, line in chains:
        if chain[0] in imported:
            continue
        for i in range(len(chain) - 1):
            receiver, name = chain[i], chain[i + 1]
            if name.startswith("__") or not _RECEIVER.fullmatch(receiver):
                continue
            key = (receiver, name)
            if line < first.get(key, line + 1):
                first[key] = line
    return [(receiver, name, line) for (receiver, name), line in sorted(first.items(), key=lambda kv: kv[1])]
