"""A module-level container of another kind, read from a patch's hunks: a ``retyped`` fact as the facts engine
makes from full files (prdigest.collect.facts.registries), when one hunk removes a column-0 assignment of a name
and adds one of the same name whose kind differs (``-_classes: set[type] = {`` / ``+_classes: tuple[type, ...] =
(``).

The kind is read from the annotation's head (``set[…]``, ``Tuple[…]``), else from how the value opens (``[``, or a
call of ``set``, ``frozenset``, ``dict``, ``list`` or ``tuple``); a bare ``{`` or ``(`` says nothing on its own
(a dict or a set, a tuple or a parenthesized expression), nor does a line that is no assignment.
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hunklines import Row, hunks
from prdigest.collect.facts.registries import ANNOTATED
from prdigest.kernel.models import Change

#: ``name = value`` or ``name: annotation = value`` at column 0 (a module-level assignment).
_ASSIGN = re.compile(r"^([A-Za-z_]\w*)\s*(?::\s*([^=]+?))?\s*=(?!=)\s*(.*)$")
_HEAD = re.compile(r"(?:typing\.)?([A-Za-z_]\w*)")
_CALLED = re.compile(r"(set|frozenset|dict|list|tuple)\s*\(")


def _kind(annotation: str | None, value: str) -> str:
    """The container kind an assignment line says, or ""."""
    if annotation:
        head = _HEAD.match(annotation.strip())
        if head and head[1] in ANNOTATED:
            return ANNOTATED[head[1]]
    value = value.strip()
    called = _CALLED.match(value)
    if called:
        return called[1]
    return "list" if value.startswith("[") else ""


def _assigned(rows: list[Row], sign: str) -> dict[str, tuple[str, int]]:
    """Name → (kind, line) of the column-0 assignments among a side's changed rows."""
    out: dict[str, tuple[str, int]] = {}
    for row in rows:
        m = _ASSIGN.match(row.text) if row.sign == sign else None
        if m:
            kind = _kind(m[2], m[3])
            if kind:
                out.setdefault(m[1], (kind, row.line))
    return out


def retyped_facts(path: str, patch: str) -> list[Change]:
    """``retyped`` facts a patch proves: a module-level name one hunk assigns anew with another container kind."""
    if "=" not in patch:
        return []
    facts: list[Change] = []
    for hunk in hunks(patch):
        old, new = _assigned(hunk.side(False), "-"), _assigned(hunk.side(True), "+")
        for name, (now, line) in new.items():
            was = old.get(name, ("", 0))[0]
            if was and was != now:
                facts.append(Change(kind="retyped", symbol=name, path=path, line=line, before=was, after=now,
                                    detail=f"{was} → {now} (its assignment's annotation or value, in the patch)",
                                    public=not name.startswith("_")))
    return facts
