"""Data attributes a PR's patches remove from a class, read from the hunks alone: a class-level attribute
(``x: bool = False``, ``X = 1``) removed from a class whose ``class`` line is git's header or one of the hunk's
lines, and an instance attribute (``self.x = …``) a method stops setting.

A hunk shows part of a class, so a name is removed only when no line the file shows after the change declares
it again; it is
gone (:data:`~prdigest.collect.facts.pyapi.ATTRIBUTE_GONE`, so a downstream's ``obj.x`` on an object of unknown
type is matched by name) only when no added or context line of the whole PR names it at all: a line in sight
that reads ``.x`` may read it on another class that keeps it. An instance attribute whose
class is out of sight (git's header names only the method) is kept only when it is gone: its class is ``*``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.collect.facts.hunklines import HEAD_DEF, Hunk, code, hunks, indent
from prdigest.collect.facts.patchcontinued import attribute_lines, continued_classes
from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE
from prdigest.kernel.models import Change

_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)\b")
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\((\s*\w*)")
#: ``name: T = v``, ``name = v`` at a class body's own indentation (not ``==``); a bare ``name: T`` in a plain
#: class sets nothing (a dataclass's fields are prdigest.collect.facts.patchfields').
_CLASS_ATTR = re.compile(r"^([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
#: ``self.name = v`` / ``self.name: T = v`` (a plain assignment, not ``+=`` nor ``==``).
_SELF_ATTR = re.compile(r"^self\.([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")
#: Out of sight, the class is any (as prdigest.connect.impact.matchers.WILDCARD reads it).
_ANY = "*"


def _declares(name: str) -> re.Pattern[str]:
    """A line that declares ``name`` again: as a class attribute, ``self.name = …``, a ``def`` or a property."""
    n = re.escape(name)
    return re.compile(rf"^\s*(?:{n}\s*[:=](?!=)|self\.{n}\s*(?::[^=]+)?=(?!=)|(?:async\s+)?def\s+{n}\b)")


def _uses_self(hunk: Hunk) -> bool:
    """Whether a hunk under a ``def`` whose parameters are out of sight is in a method: its lines above any at
    column 0 use ``self``."""
    for row in hunk.rows:
        if row.text.strip() and not row.text[:1].isspace():
            return False
        if re.search(r"\bself\b", row.text):
            return True
    return False


def _removed_in(hunk: Hunk, owner: str | None = None) -> list[tuple[str, str, int]]:
    """(class or ``*``, name, old line) of the attributes the hunk's ``-`` lines stop declaring (``owner``: the
    class of the method git's header names, when the hunk before tells it: patchcontinued.py)."""
    out: list[tuple[str, str, int]] = []
    head_class = hunk.header_class
    # (class, body indent): git's header writes the ``class`` line without its indentation (module level assumed)
    current: tuple[str, int] | None = (head_class, 4) if head_class else (owner, 4) if owner else None
    method: int | None = None  # indent of the ``def`` whose body the lines are in (a method: self/cls first)
    if head_class is None and HEAD_DEF.match(hunk.header.strip()):
        first = re.search(r"\(\s*(\w+)", hunk.header)
        if (first[1] in ("self", "cls")) if first else _uses_self(hunk):
            method = 4  # git's Python driver names the method; its class is out of sight
    depth = 0
    for row in hunk.side(False):
        text, stripped = row.text, row.text.strip()
        if depth > 0:  # a continuation of a bracket opened above
            depth = max(0, depth + sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}"))
            continue
        if not stripped or stripped.startswith(("#", "@", ")", "]", "}")):
            continue
        width = indent(text)
        depth = max(0, sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}"))
        if current is not None and width < current[1]:
            current = None
        if method is not None and width <= method:
            method = None
        c = _CLASS.match(text)
        if c:
            current, method = (c[2], width + 4), None
            continue
        d = _DEF.match(text)
        if d:
            # a method the patch removes whole moved or went with what it set: only one that stays counts
            method = width if d[3].strip() in ("self", "cls") and row.sign != "-" else None
            continue
        if row.sign != "-":
            continue
        if current is not None and width == current[1] and method is None:
            a = _CLASS_ATTR.match(stripped)
            if a and not a[1].startswith("_"):
                out.append((current[0], a[1], row.line))
        elif method is not None and width > method:
            s = _SELF_ATTR.match(stripped)
            if s and not s[1].startswith("_"):
                owner = current[0] if current is not None and current[1] <= method else _ANY
                out.append((owner, s[1], row.line))
    return out


def removed_attribute_facts(patches: Sequence[tuple[str, str]]) -> list[Change]:
    """``attribute`` facts (``removed``) the PR's Python patches (path, patch) prove, across its files."""
    # every line the PR's patches show after the change (added and context): one naming the attribute may read
    # it on another class (``config.attention_chunk_size`` beside a runner's ``self.attention_chunk_size``)
    every_kept = [raw[1:] for _, patch in patches for raw in patch.splitlines()
                  if raw[:1] in ("+", " ") and not raw.startswith("+++")]
    # the lines the file still has in sight (context and added): one that declares the name keeps it
    found = {path: hunks(patch) for path, patch in patches}
    owners = {path: continued_classes(found[path]) for path in found}
    kept_by_file: dict[str, list[str]] = {path: attribute_lines(found[path], owners[path]) for path in found}
    facts: list[Change] = []
    seen: set[tuple[str, str]] = set()
    for path in found:
        for hunk, owner in zip(found[path], owners[path]):
            for cls, name, line in _removed_in(hunk, owner):
                if (path, f"{cls}.{name}") in seen:
                    continue
                declares = _declares(name)
                if any(declares.match(a) for a in kept_by_file[path]):
                    continue  # still declared in this file (moved within the class, or kept by another)
                word = re.compile(rf"\b{re.escape(name)}\b")
                gone = not any(word.search(a) for a in every_kept)
                if cls == _ANY and not gone:
                    continue  # an instance attribute of a class out of sight: only when nothing names it
                seen.add((path, f"{cls}.{name}"))
                facts.append(Change(kind="attribute", symbol=f"{cls}.{name}", path=path, line=line,
                                    before=f"{cls}.{name}", detail="removed" + (ATTRIBUTE_GONE if gone else ""),
                                    public=not cls.startswith("_")))
    return facts
