"""An object named after its class: ``compilation_config`` for a ``CompilationConfig``, the convention that types
an attribute read or set where nothing else can (``vllm_config.compilation_config.x``). Only names of two words
or more count: ``compilation_config`` names one class, ``config`` or ``request`` may name any. The index reads a
downstream's such names (prdigest.connect.impact.members), the facts engine an upstream method's
(prdigest.collect.facts.newhooks); the match pairs them."""

from __future__ import annotations

import re

#: A name of at least two lowercase words (``cache_config``, ``kv_transfer_config``).
_TYPED = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_WORD_START = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def is_typed(name: str) -> bool:
    """Whether an object's name is of two words or more, lowercase (``cache_config``, not ``config``)."""
    return _TYPED.fullmatch(name) is not None


def receiver_of(cls: str) -> str | None:
    """The name an object of class ``cls`` goes by (``CompilationConfig`` → ``compilation_config``,
    ``KVTransferConfig`` → ``kv_transfer_config``), or None for a one-word class (``Request``): too common a name
    to type anything."""
    name = _WORD_START.sub("_", cls.rpartition(".")[2]).lower()
    return name if is_typed(name) else None
