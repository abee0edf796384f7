"""Required parameters a signature's tail drops, said in the fact's detail (``-block_size (required)``).

A hunk that starts inside a multi-line signature shows its tail only, so the fact gives no positions and a call
passing arguments by position was told to check. A parameter without a default that the tail removes outright
(not renamed in its place, not absorbed by a new ``**kwargs``) was passed by every call that worked: by keyword
it is now unexpected, by position every later argument lands one place off. The match reads the mark
(prdigest.connect.impact.signature.SignatureChange.removed_required) and such a call breaks.
"""

from __future__ import annotations

import re

from prdigest.collect.facts import pyapi

#: Written after a removed parameter's token when it had no default on the old side.
REQUIRED = " (required)"
_MARKED = re.compile(r"(?:^|[,;\s])-([A-Za-z_]\w*)" + re.escape(REQUIRED))


def mark_required(detail: str, old: tuple[pyapi.Param, ...]) -> str:
    """``detail`` (a tail's, as :func:`prdigest.collect.facts.patchsigs._tail_detail` writes it) with each plain
    removal of a parameter the old side required marked :data:`REQUIRED`."""
    required = {p.name for p in old if p.default is None and p.kind not in ("var", "varkw")}
    parts = [p + REQUIRED if p.startswith("-") and p[1:] in required else p for p in detail.split(", ")]
    return ", ".join(parts)


def removed_required(detail: str) -> tuple[str, ...]:
    """The parameters ``detail`` marks as removed while required."""
    return tuple(_MARKED.findall(detail))
