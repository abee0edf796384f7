"""Config keys a PR moved under a nested config rather than removed: ``additional_config["dynamic_eplb"]`` read no
more while the PR adds ``additional_config["eplb_config"]`` whose class reads ``dynamic_eplb``, or the user docs'
config table losing a row that a table of ``eplb_config`` gains (by name, or renamed: the same type, default and
description under another name, ``num_iterations_eplb_update`` → ``expert_heat_collection_interval``).

A reader told "removed" looks for a replacement that is right there: such a key is one ``config`` fact, detail
``moved``, ``before`` the old key and ``after`` its new place (``eplb_config.expert_heat_collection_interval``). A
key only removed (nothing took its place) stays a removal; a table reorganised with no key the code stops reading
asks nothing (only ``removed`` facts of the code are rewritten).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Sequence

from prdigest.collect.facts.configkeys import _config_mapping
from prdigest.collect.facts.docpins import is_doc
from prdigest.collect.facts.pyapi import Module, _decorator_name
from prdigest.collect.facts.reach import _CONTRIBUTOR_DOCS
from prdigest.kernel.models import Change
from prdigest.kernel.text import CODE_SPAN

#: What a ``config`` fact of a key moved under a nested config says (kernel/actions.py says them as one sentence).
MOVED = "moved"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,80}")
#: A line naming the config a table below it lists: ``**eplb_config**``, ``### `eplb_config` ``, ``eplb_config:``.
_OWNER = re.compile(r"^\s*(?:#{1,6}\s+)?(?:\*\*|__)?`?([A-Za-z_][A-Za-z0-9_.]*)`?(?:\*\*|__)?\s*:?\s*$")
_SPACES = re.compile(r"\s+")

#: (owner, key, the rest of the row: type, default, description).
Row = tuple[str, str, tuple[str, ...]]


def table_rows(text: str | None) -> list[Row]:
    """Each row of a config table of ``text`` whose first cell is one key in a code span, with the config the table
    belongs to: the name a line above it gives alone (``**eplb_config**``), or "" for the page's own options."""
    rows: list[Row] = []
    owner = ""
    in_table = False
    for line in (text or "").splitlines():
        stripped = line.strip()
        if not stripped.startswith("|"):
            if in_table:
                owner, in_table = "", False  # a table's owner is named again above the next one
            found = _OWNER.match(line)
            if found and ("_" in found[1] or "." in found[1]):
                owner = found[1]
            elif stripped.startswith("#"):
                owner = ""
            continue
        in_table = True
        cells = [cell.strip() for cell in stripped.strip("|").split("|")]
        name = CODE_SPAN.fullmatch(cells[0]) if cells else None
        if name and _KEY.fullmatch(name[1].strip()) and len(cells) >= 2:
            rows.append((owner, name[1].strip(), tuple(_SPACES.sub(" ", c) for c in cells[1:])))
    return rows


def _same_row(old: tuple[str, ...], new: tuple[str, ...]) -> bool:
    """The same option under another name: type and default as written, the description the same or one cut
    short of the other (a sentence dropped)."""
    if len(old) != len(new) or not old or old[:-1] != new[:-1]:
        return False
    a, b = old[-1].rstrip(". "), new[-1].rstrip(". ")
    return bool(a and b) and (a.startswith(b) or b.startswith(a))


def doc_moves(pages: Iterable[tuple[str, str | None, str | None]]) -> dict[str, str]:
    """Old key → its new place (``owner.key``) for each row a page of the user docs moved from one config's table to
    another's (by name, or one row renamed: the only removed and added rows alike)."""
    return {key: place for _, key, place in row_moves(pages)}


def table_moves(pages: Iterable[tuple[str, str | None, str | None]]) -> dict[str, list[tuple[str, str]]]:
    """Nested config → (its key, the key's new place) for each config whose table's rows the user docs moved, all
    into one other config (``npugraph_ex_config``'s ``enable`` → ``ascend_compilation_config.enable_npugraph_ex``,
    its ``enable_static_kernel`` → ``ascend_compilation_config.enable_static_kernel``): the config itself merged
    there, so a reader moves what they set under it."""
    by_owner: dict[str, list[tuple[str, str]]] = {}
    for owner, key, place in row_moves(pages):
        if owner:
            by_owner.setdefault(owner, []).append((key, place))
    return {owner: rows for owner, rows in by_owner.items()
            if len({place.split(".", 1)[0] for _, place in rows} - {owner}) == 1}


def row_moves(pages: Iterable[tuple[str, str | None, str | None]]) -> list[tuple[str, str, str]]:
    """(old owner, old key, new place ``owner.key``) for each row a page of the user docs moved (:func:`doc_moves`)."""
    gone: list[Row] = []
    came: list[Row] = []
    for path, before, after in pages:
        if not is_doc(path) or _CONTRIBUTOR_DOCS.search(path):
            continue
        old, new = table_rows(before), table_rows(after)
        gone += [r for r in old if r not in new]
        came += [r for r in new if r not in old]
    moves: dict[str, tuple[str, str]] = {}
    for owner, key, _ in gone:
        there = {o for o, k, _ in came if k == key and o != owner and o}
        if len(there) == 1:
            moves[key] = (owner, f"{there.pop()}.{key}")
    left_gone = [r for r in gone if r[1] not in moves and not any(k == r[1] for _, k, _ in came)]
    left_came = [r for r in came if not any(k == r[1] for _, k, _ in gone)]
    for owner, key, rest in left_gone:
        alike = [(o, k) for o, k, r in left_came if o and o != owner and _same_row(rest, r)]
        back = [g for g in left_gone if any(_same_row(g[2], r) for o, k, r in left_came if (o, k) in alike)]
        if len(alike) == 1 and len(back) == 1:  # one row each way: a rename, not a guess among look-alikes
            moves[key] = (owner, f"{alike[0][0]}.{alike[0][1]}")
    # in the docs' row order: the keys a reader finds in that table, as they find them
    return [(owner, key, moves[key][1]) for owner, key, _ in gone if key in moves and moves[key][0] == owner]


def nested_keys(modules: Iterable[Module]) -> dict[str, str]:
    """Key → its place (``owner.key``) for each key a nested config reads: a value read from a config mapping
    (``x = additional_config.get("eplb_config", {})``) handed to a class (``EplbConfig(x)``) whose body names its keys
    (a dict of defaults, ``.get("key")``, annotated fields)."""
    classes: dict[str, ast.ClassDef] = {}
    trees = [m.tree for m in modules if m.tree is not None]
    for tree in trees:
        classes.update({n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)})
    places: dict[str, str] = {}
    for tree in trees:
        for owner, cls, spread in _handed(tree):
            if cls in classes:
                keys = _class_keys(classes[cls]) | (_init_keys(classes[cls]) if spread else set())
                for key in keys:
                    places.setdefault(key, f"{owner}.{key}")
                stem = owner.removesuffix("_config")
                if stem != owner and "enable" in keys:  # the feature's switch: ``enable_x`` → ``x_config.enable``
                    places.setdefault(f"enable_{stem}", f"{owner}.enable")
    return places


def _handed(tree: ast.Module) -> list[tuple[str, str, bool]]:
    """(config key, class, spread) for each ``v = <config mapping>.get("key", …)`` later passed to ``Class(v)`` or
    ``Class(**v)`` (spread: its keys are the class's parameters) in the same function, or
    ``Class(<config mapping>.get("key"))`` directly."""
    out: list[tuple[str, str, bool]] = []
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            continue
        names: dict[str, str] = {}
        for node in ast.walk(scope):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                key = _read_key(node.value)
                if key:
                    names[node.targets[0].id] = key
        for node in ast.walk(scope):
            if not isinstance(node, ast.Call):
                continue
            spread = [k.value for k in node.keywords if k.arg is None]
            for arg in [*node.args[:1], *spread[:1]]:
                key = names.get(arg.id, "") if isinstance(arg, ast.Name) else _read_key(arg)
                cls = _decorator_name(node.func).rsplit(".", 1)[-1]
                if key and cls[:1].isupper():
                    out.append((key, cls, arg in spread))
    return out


def _init_keys(cls: ast.ClassDef) -> set[str]:
    """The keyword parameters of the class's ``__init__`` (what ``Class(**mapping)`` reads from the mapping)."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == "__init__":
            params = [*node.args.args[1:], *node.args.kwonlyargs]
            return {p.arg for p in params if _KEY.fullmatch(p.arg)}
    return set()


def _read_key(node: ast.expr) -> str:
    """``"eplb_config"`` for ``additional_config.get("eplb_config", …)`` or ``additional_config["eplb_config"]``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and _config_mapping(node.func.value) and node.args and isinstance(node.args[0], ast.Constant):
        key = node.args[0].value
    elif isinstance(node, ast.Subscript) and _config_mapping(node.value) and isinstance(node.slice, ast.Constant):
        key = node.slice.value
    else:
        return ""
    return key if isinstance(key, str) and _KEY.fullmatch(key) else ""


def _class_keys(cls: ast.ClassDef) -> set[str]:
    """The keys a config class names: the string keys of a dict in its body (its defaults), the first argument of
    each ``.get("key")`` in its methods, its annotated fields."""
    keys: set[str] = set()
    for node in ast.walk(cls):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            keys.add(node.args[0].value)
    keys |= {n.target.id for n in cls.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    return {k for k in keys if _KEY.fullmatch(k) and not k.startswith("_")}


def moved(facts: Sequence[Change], docs: dict[str, str], nested: dict[str, str],
          tables: dict[str, list[tuple[str, str]]] | None = None) -> list[Change]:
    """``facts`` with each config key the code stopped reading that the docs (first: they name renames) or a
    nested config the PR adds place elsewhere said as moved there, not removed; a nested config the code stopped
    reading whose docs table moved into another config (``tables``: :func:`table_moves`) is each of its keys moved."""
    added = {c.symbol for c in facts if c.kind == "config" and c.detail == "added"}
    out: list[Change] = []
    for c in facts:
        if c.kind == "config" and c.detail == "removed" and c.symbol in (tables or {}):
            out += [c.model_copy(update={"symbol": f"{c.symbol}.{key}", "detail": MOVED, "before": f"{c.symbol}.{key}",
                                         "after": place}) for key, place in (tables or {})[c.symbol]]
            continue
        place = docs.get(c.symbol) or nested.get(c.symbol) if c.kind == "config" and c.detail == "removed" else None
        # only into a config the PR adds, or one already there that the docs say now holds it
        if place and (place.split(".", 1)[0] in added or c.symbol in docs):
            c = c.model_copy(update={"detail": MOVED, "before": c.symbol, "after": place})
        out.append(c)
    return out
