"""A package's re-exports removed, read from the patch of its ``__init__.py``: a name a removed ``from … import``
line brought in from inside the package (``from .b import X``, ``from vllm.a.b import X``) that no line the
change added brings back or defines. ``from vllm.a import X`` then fails though ``X`` itself may stay where it
was (what the facts engine says from full files as "re-export removed").

A name may be imported over several lines (``from .b import (`` … ``)``): the names below an opening line in
sight, or below git's default header when it is that opening line (the hunk starts inside the parentheses),
are read as that import's. Importing one name twice in a module is a redefinition linters refuse, so a name
whose import line is gone and comes back on no added line is no longer imported there.
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hunklines import Row, code, hunks
from prdigest.kernel.models import Change

_FROM = re.compile(r"^from\s+(\.*[\w.]*)\s+import\s+(.*)$")
_NAME = re.compile(r"^([A-Za-z_]\w*)(?:\s+as\s+([A-Za-z_]\w*))?$")
_WORDS = re.compile(r"[A-Za-z_]\w*")


def from_imports(rows: list[Row], header: str, sign: str) -> dict[str, tuple[str, int]]:
    """Name bound → (source module, line) of the ``from … import`` names on the rows of ``sign``."""
    found: dict[str, tuple[str, int]] = {}
    source: str | None = None
    opened = _FROM.match(header.strip())
    if opened and opened[2].strip().startswith("(") and ")" not in opened[2]:
        source = opened[1]  # the hunk starts inside this import's parentheses
    for row in rows:
        text = code(row.text).strip()
        m = _FROM.match(text) if not row.text[:1].isspace() else None
        names: list[str] = []
        if m:
            rest = m[2].strip()
            source = m[1] if rest.startswith("(") and ")" not in rest else None
            names = rest.strip("()").split(",")
            current = m[1]
        elif source is not None:
            current = source
            if text.startswith(")"):
                source = None
                continue
            names = text.rstrip(")").split(",")
            if text.endswith(")"):
                source = None
        else:
            continue
        if row.sign != sign:
            continue
        for part in names:
            n = _NAME.match(part.strip())
            if n:
                found.setdefault(n[2] or n[1], (current, row.line))
    return found


def reexport_facts(path: str, patch: str) -> list[Change]:
    """``removed`` facts (detail ``re-export removed``) for the names a package's ``__init__`` stops importing
    from inside its package."""
    if not path.endswith(("/__init__.py", "/__init__.pyi")):
        return []
    root = path.split("/", 1)[0]
    removed: dict[str, tuple[str, int]] = {}
    added_words: set[str] = set()
    for hunk in hunks(patch):
        for name, where in from_imports(hunk.side(False), hunk.header, "-").items():
            removed.setdefault(name, where)
        added_words.update(w for r in hunk.rows if r.sign == "+" for w in _WORDS.findall(code(r.text)))
    facts = []
    for name, (source, line) in sorted(removed.items()):
        inside = source.startswith(".") or source == root or source.startswith(root + ".")
        if inside and not name.startswith("_") and name not in added_words:
            facts.append(Change(kind="removed", symbol=name, path=path, line=line, before=f"{source}.{name}",
                                detail="re-export removed"))
    return facts
