"""A class's fields read back from a patch's hunks: fields of a dataclass (vLLM's ``@config`` classes too), a
pydantic model or a NamedTuple removed, renamed, added without a default or given another default.

Such a class's constructor is made from its fields, in order, so a field is a parameter of every ``Cls(...)``
call and an attribute of every instance. A hunk shows the class's kind only when its decorators or bases are in
sight (the ``class`` line with the lines above it, or git's header, which gives the ``class`` line alone:
its bases); a class of unknown kind gives no fact (a bare annotation in a plain class declares nothing a
caller passes). Only part of the field list is in sight, so the constructor fact says what changed, never the
whole signature nor a position.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.collect.facts.hunklines import HEAD_CLASS, Hunk, Row, code, hunks, indent
from prdigest.kernel.models import Change

_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*:")
_FIELD = re.compile(r"^([A-Za-z_]\w*)\s*:\s*(.+?)(?:\s*=\s*(.+?))?\s*(?:#.*)?$")
_DECORATOR = re.compile(r"^\s*@\s*([\w.]+)")
#: Decorators whose class's constructor takes its fields (vLLM's ``@config`` is a pydantic dataclass).
_FIELD_DECORATORS = frozenset({"dataclass", "config", "pydantic_dataclass"})
_FIELD_BASES = ("BaseModel", "NamedTuple")
_KNOWN_KIND = re.compile(r"@\s*[\w.]*(?:dataclass|config)\b|BaseModel|NamedTuple")
_NOT_FIELDS = ("ClassVar", "typing.ClassVar", "KW_ONLY", "dataclasses.KW_ONLY")


@dataclass(frozen=True)
class Field:
    """One field as one side shows it: name, annotation, default (None: required) and line."""

    name: str
    annotation: str
    default: str | None
    line: int


def _kind(bases: str, decorators: list[str]) -> bool:
    """Whether a class builds its constructor from its fields (its decorators or bases say so)."""
    if any(d.rpartition(".")[2] in _FIELD_DECORATORS for d in decorators):
        return True
    return any(b.strip().split("[")[0].rpartition(".")[2] in _FIELD_BASES for b in bases.split(","))


def _default(value: str | None) -> str | None:
    """A field's default as a caller sees it: ``field(default_factory=list)`` → ``list()``; None: required."""
    if value is None:
        return None
    m = re.match(r"^(?:dataclasses\.)?field\((.*)\)$", value.strip())
    if m:
        given = re.search(r"\bdefault(?:_factory)?\s*=\s*([^,]+)", m[1])
        if given is None and re.search(r"\binit\s*=\s*False\b", m[1]):
            return "<no init>"
        return given[1].strip() if given else None
    return value


def _fields(rows: list[Row], hunk: Hunk) -> dict[str, list[Field]]:
    """Class (name) → the fields one side shows in its body, in order, for classes of a known kind (each such
    class in sight, with or without fields)."""
    out: dict[str, list[Field]] = {}
    head = HEAD_CLASS.match(hunk.header.strip())
    current: tuple[str, int] | None = None  # (class, indent of its fields)
    if head:
        bases = re.search(r"\((.*)\)", hunk.header)
        if _kind(bases[1] if bases else "", []):
            current = (head[1], 4)
            out[head[1]] = []
    decorators: list[str] = []
    depth = 0
    for row in rows:
        text, stripped = row.text, row.text.strip()
        if depth > 0:  # inside a bracket opened on an earlier line: a continuation
            depth += sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        width = indent(text)
        m = _CLASS.match(text)
        if m:
            # a nested class's dotted name is out of sight (the class holding it may be): module level only
            current = (m[2], 4) if width == 0 and _kind(m[3] or "", decorators) else None
            if current is not None:
                out.setdefault(current[0], [])
            decorators = []
            continue
        d = _DECORATOR.match(text)
        if d:
            decorators.append(d[1])
            continue
        decorators = []
        if current is not None and width < current[1]:
            current = None
        depth = max(0, sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}"))
        if current is None or width != current[1]:
            continue
        f = _FIELD.match(stripped)
        if f and not f[2].startswith(_NOT_FIELDS) and depth == 0:
            out.setdefault(current[0], []).append(Field(f[1], f[2], _default(f[3]), row.line))
    return out


def field_facts(path: str, patch: str) -> list[Change]:
    """``attribute`` (removed) and constructor ``signature`` facts (symbol: the class) a patch proves."""
    if not _KNOWN_KIND.search(patch):
        return []  # no class of a known kind can be in sight
    found = hunks(patch)
    old: dict[str, dict[str, Field]] = {}
    new: dict[str, dict[str, Field]] = {}
    changes: dict[str, list[tuple[list[Field], list[Field]]]] = {}
    for hunk in found:
        before, after = _fields(hunk.side(False), hunk), _fields(hunk.side(True), hunk)
        for cls in before.keys() & after.keys():  # a class both versions have here (not added, removed, moved)
            b, a = before.get(cls, []), after.get(cls, [])
            changes.setdefault(cls, []).append((b, a))
            old.setdefault(cls, {}).update({x.name: x for x in b})
            new.setdefault(cls, {}).update({x.name: x for x in a})
    facts: list[Change] = []
    for cls, pairs in sorted(changes.items()):
        public = not cls.startswith("_")
        parts: list[str] = []
        for b, a in pairs:
            gone = [x for x in b if x.name not in new[cls]]  # not declared again anywhere in the file's hunks
            came = [x for x in a if x.name not in old[cls] and x.default != "<no init>"]
            if gone and len(gone) == len(came) and all(
                    g.annotation == c.annotation and b.index(g) == a.index(c) for g, c in zip(gone, came)):
                parts += [f"{g.name}→{c.name}" for g, c in zip(gone, came)]  # renamed in place
            else:
                parts += [f"-{g.name}" for g in gone if g.default != "<no init>"]
                parts += [f"+{c.name}" + (f"={c.default}" if c.default is not None else "") for c in came]
            for x in a:
                prior = next((y for y in b if y.name == x.name), None)
                if prior is not None and prior.default != x.default and "<no init>" not in (prior.default, x.default):
                    parts.append(f"{x.name}={prior.default if prior.default is not None else 'required'}→"
                                 f"{x.default if x.default is not None else 'required'}")
            for g in gone:
                if not g.name.startswith("_"):
                    facts.append(Change(kind="attribute", symbol=f"{cls}.{g.name}", path=path, line=g.line,
                                        before=f"{cls}.{g.name}", detail="removed", public=public))
        if parts:
            line = next((x.line for _, a in pairs for x in a), 0)
            facts.append(Change(kind="signature", symbol=cls, path=path, line=line, detail=", ".join(parts),
                                public=public))
    return facts

