"""Required fields added to a class whose kind the hunk does not show: ``prompt_token_ids_cpu: Tensor | None``
added between a class's annotated fields, its ``@dataclass`` line above the hunk's context.

Where the hunk shows the class's decorators or bases, :mod:`prdigest.collect.facts.patchfields` reads its fields.
Here only git's header (``class PoolingMetadata:``) or a ``class`` line without them names the class: a bare
annotation in a plain class declares nothing a caller passes, so the constructor fact this module gives says so
(:data:`KIND_UNSEEN`: the match tells a call missing the field to check), unless the PR's other hunks of the file
show the class's kind and every field beside the new one in sight is annotated without a value (then it is a
plain constructor fact: a call missing the field breaks).
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hunklines import HEAD_CLASS, Hunk, Row, code, hunks, indent
from prdigest.collect.facts.patchfields import _CLASS, _FIELD, _NOT_FIELDS, _default, _fields
from prdigest.kernel.models import Change

#: In the ``detail`` of each constructor fact of this module: the match reads only calls of the class that do not
#: spread ``**kwargs`` (a bare annotation is no parameter of an override).
FIELD_ADDED = "; a field added"
#: In a constructor fact's ``detail``: the class's kind (a dataclass, a NamedTuple, …) is out of the patch's sight.
KIND_UNSEEN = FIELD_ADDED + " where the class's kind is out of the patch's sight"
#: In a constructor fact's ``detail``: another hunk of the file shows the class's kind.
KIND_SHOWN = FIELD_ADDED + " to a class another hunk shows the kind of"
#: A class-level statement that ends the run of fields (a method, a nested class, a decorator).
_NOT_FIELD = re.compile(r"^(?:async\s+def|def|class|@)\b")


def _body(rows: list[Row], hunk: Hunk) -> dict[str, list[tuple[str, str | None, int, bool]]]:
    """Class → its class-level statements one side shows at the fields' indent before any method, each as
    (field name or "", default or None, line, annotated): for the class git's header names, and for each
    ``class`` line at column 0 in the hunk."""
    out: dict[str, list[tuple[str, str | None, int, bool]]] = {}
    current = hunk.header_class if HEAD_CLASS.match(hunk.header.strip()) else None
    if current is not None:
        out[current] = []
    depth = 0
    quoted = False  # inside a triple-quoted string (a docstring's ``name: words`` lines are no fields)
    for row in rows:
        text, stripped = row.text, row.text.strip()
        quotes = stripped.count('"""') + stripped.count("'''")
        if quoted or quotes % 2:
            quoted = quoted != bool(quotes % 2)
            continue
        if depth > 0:  # a continuation of a bracket opened above
            depth += sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        width = indent(text)
        m = _CLASS.match(text)
        if m and width == 0:
            current = m[2]
            out[current] = []
            continue
        if current is None or width == 0:
            current = None  # a module-level statement ends the class
            continue
        depth = max(0, sum(code(text).count(c) for c in "([{") - sum(code(text).count(c) for c in ")]}"))
        if width != 4:
            continue
        if _NOT_FIELD.match(stripped):
            current = None  # the fields end where the methods begin
            continue
        if stripped.startswith(('"', "'")):
            continue  # the docstring
        f = _FIELD.match(stripped)
        if f and not f[2].startswith(_NOT_FIELDS) and depth == 0:
            out[current].append((f[1], _default(f[3]), row.line, True))
        else:
            out[current].append(("", None, row.line, False))
    return out


def unseen_field_facts(path: str, patch: str) -> list[Change]:
    """Constructor ``signature`` facts (symbol: the class) for required fields added to classes whose kind
    this hunk does not show."""
    found = hunks(patch)
    # classes whose kind some hunk shows (their fields are patchfields' facts there)
    known: set[str] = set()
    for hunk in found:
        known.update(_fields(hunk.side(False), hunk).keys() | _fields(hunk.side(True), hunk).keys())
    sides = [(hunk, _body(hunk.side(False), hunk), _body(hunk.side(True), hunk)) for hunk in found]
    declared_before = {name for _, b, _ in sides for rows in b.values() for name, _, _, _ in rows if name}
    facts: list[Change] = []
    for hunk, before, after in sides:
        shown = _fields(hunk.side(True), hunk).keys()
        for cls in sorted(before.keys() & after.keys()):
            if cls in shown:
                continue  # its kind is in this hunk's sight: patchfields' fact
            rows = after[cls]
            came = [(name, line) for name, default, line, _ in rows
                    if name and default is None and name not in declared_before]
            if not came or any(name and name not in {n for n, _, _, _ in rows} for name, _, _, _ in before[cls]):
                continue  # nothing required added, or a field gone too: a rename or a move is another fact
            # every statement in sight an annotation, the one just above the first new field without a value (a
            # dataclass field with no default cannot follow one with a default)
            first = next(i for i, (name, _, _, _) in enumerate(rows) if name == came[0][0])
            plain = all(annotated for _, _, _, annotated in rows) and (first == 0 or rows[first - 1][1] is None)
            kind = KIND_SHOWN if cls in known and plain else KIND_UNSEEN
            facts.append(Change(kind="signature", symbol=cls, path=path, line=came[0][1],
                                detail=", ".join(f"+{name}" for name, _ in came) + kind,
                                public=not cls.startswith("_")))
    return facts
