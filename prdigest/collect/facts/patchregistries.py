"""A new module-level registry read from a patch's hunks: a column-0 assignment the patch adds whole
(``_POSSIBLE_X: dict[...] = {`` … ``}``) whose value lists classes, and its siblings: the module-level names a
function in sight passes or reads the way it reads the new one (``possible_kernels=_POSSIBLE_X`` and
``possible_kernels=_POSSIBLE_Y`` in one function's lines).

Only a ``check`` can come of it (prdigest.connect.impact.obligations): the sibling's own keys and the lookups
with ``[key]`` are mostly out of sight, so ``needed_by`` stays empty and no entry is said to be missing.
"""

from __future__ import annotations

import ast
import re

from prdigest.collect.facts.hunklines import Row, code, hunks, indent
from prdigest.collect.facts.registries import container
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

_START = re.compile(r"^([A-Za-z_]\w*)\s*(?::|=(?!=))")
#: A module-level constant's name as modules write registries (``_POSSIBLE_FP8_KERNELS``).
_CONSTANT = re.compile(r"(?<![\w.])(_?[A-Z][A-Z0-9_]*[A-Z0-9])\b")
_CLASS_NAME = re.compile(r"_?[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*")
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")


def _written(node: ast.expr) -> str:
    """``a.b.C`` as written, else ""."""
    try:
        text = ast.unparse(node)
    except (ValueError, TypeError):  # pragma: no cover - ast.unparse refuses only malformed trees
        return ""
    return text if re.fullmatch(r"[A-Za-z_][\w.]*", text) else ""


def _added_block(rows: list[Row], start: int) -> tuple[str, int] | None:
    """The text of the added assignment opened at ``rows[start]`` when every one of its lines is added, and
    the index after it; None when part of it is context or out of sight."""
    depth = 0
    for k in range(start, len(rows)):
        if rows[k].sign != "+":
            return None
        depth += sum(code(rows[k].text).count(c) for c in "([{") - sum(code(rows[k].text).count(c) for c in ")]}")
        if depth <= 0:
            return "\n".join(r.text for r in rows[start:k + 1]), k + 1
    return None


def _registry(text: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]] | None:
    """(name, container, keys, classes as written) of an assignment whose value lists classes, else None."""
    tree, _ = parse(text)  # a hostile patch's block can be nested past the parser's limits: no registry, no raise
    if not isinstance(tree, ast.Module):
        return None
    node = tree.body[0] if len(tree.body) == 1 else None
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        name, value, annotation = node.target.id, node.value, node.annotation
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        name, value, annotation = node.targets[0].id, node.value, None
    else:
        return None
    items: list[ast.expr] = []
    keys: list[str] = []
    if isinstance(value, ast.Dict):
        if any(k is None for k in value.keys):
            return None
        keys = [_written(k) for k in value.keys if k is not None]
        for v in value.values:
            items += v.elts if isinstance(v, (ast.List, ast.Tuple, ast.Set)) else [v]
    elif isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        items = list(value.elts)
    else:
        return None
    written = [_written(i) for i in items]
    if not written or not all(w and _CLASS_NAME.fullmatch(w.rpartition(".")[2]) for w in written):
        return None
    return name, container(value, annotation), tuple(keys), tuple(dict.fromkeys(written))


def _ways(lines: list[str], name: str) -> set[str]:
    """How the lines use ``name``: the keyword it is passed as (``possible_kernels=``) or ``[`` (looked up)."""
    n = re.escape(name)
    out: set[str] = set()
    for text in lines:
        out |= {f"{m[1]}=" for m in re.finditer(rf"\b(\w+)\s*=\s*{n}\b(?!\s*\[)", code(text))}
        # a lookup, not an entry (``R[k] = v``, ``R[k].append(v)``: a function filling every registry)
        if re.search(rf"(?<![\w.]){n}\s*\[[^\]]*\](?!\s*=(?!=)|\s*\.(?:append|extend|insert|add|update)\b)",
                     code(text)):
            out.add("[")
    return out


def _used_with(rows_by_function: dict[str, list[str]], name: str) -> set[str]:
    """The constants a function in sight uses the way it uses ``name`` (passed as the same keyword, or looked
    up with ``[``)."""
    out: set[str] = set()
    for lines in rows_by_function.values():
        ways = _ways(lines, name)
        if ways:
            out |= {c for t in lines for m in _CONSTANT.finditer(code(t)) if (c := m[1]) != name
                    and _ways(lines, c) & ways}
    return out


def registry_facts(path: str, patch: str) -> list[Change]:
    """``registry`` facts (siblings only, no ``needed_by``) for the registries a patch adds at column 0 beside
    another a function in sight uses with it; a registry with no sibling in sight is left out."""
    found = hunks(patch)
    new: list[tuple[str, str, tuple[str, ...], tuple[str, ...], int]] = []
    functions: dict[str, list[str]] = {}  # function (header or def in sight) → its lines in sight after the change
    for n, hunk in enumerate(found):
        rows = hunk.side(True)
        head = _DEF.match(hunk.header)
        current = f"{n}:{head[1]}" if head else None
        k = 0
        while k < len(rows):
            row = rows[k]
            start = _START.match(row.text)
            if start and indent(row.text) == 0:
                block = _added_block(rows, k) if row.sign == "+" else None
                if block is not None:
                    read = _registry(block[0])
                    if read is not None:
                        new.append((*read, row.line))
                    k = block[1]
                    current = None
                    continue
            d = _DEF.match(row.text)
            if d:
                current = f"{n}:{d[1]}"
            elif row.text.strip() and indent(row.text) == 0 and row.text.strip()[0] not in ")]}":
                current = None  # past the function (a signature's closing bracket is still its own)
            if current is not None:
                functions.setdefault(current, []).append(row.text)
            k += 1
    facts: list[Change] = []
    names = {r[0] for r in new}
    for name, kind, keys, classes, line in new:
        # another new registry is none: no downstream enters it yet
        siblings = tuple(sorted(_used_with(functions, name) - names))
        if not siblings:
            continue
        said = f"a {kind} of {len(classes)} classes" + (f" keyed by {', '.join(keys)}" if keys else "")
        facts.append(Change(kind="registry", symbol=name, path=path, line=line, after=", ".join(keys),
                            detail=f"{said}; beside {', '.join(siblings)}", public=not name.startswith("_"),
                            siblings=siblings))
    return facts
