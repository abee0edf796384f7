"""Environment variables a PR makes required: a check it adds to shipped Python code that stops the program unless
a variable is set (``assert os.getenv("DYNAMIC_EPLB", "false") == "true" or …``, or ``if not os.getenv("X"):
raise …``). Each variable is an ``env`` fact with detail ``required`` and, as ``after``, the setting that turns the
check on when an ``if`` around it reads one (``if self.config["dynamic_eplb"]:`` → ``dynamic_eplb``). Only checks
the PR adds count (one the file already had, at any line, is old news); a check that forbids a variable, or one
that merely reads it, asks nothing.

A setting a new or widened check refuses (``if layer_sharding and role != "kv_producer": raise ValueError("… only
on the P node")``) is said by prdigest/collect/facts/rejections.py.
"""

from __future__ import annotations

import ast

from prdigest.collect.facts import rejections
from prdigest.collect.facts.pyapi import _unparse
from prdigest.collect.facts.settings import _env_call
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

#: The longest condition said as it is written when no setting's key can be read from it.
_MAX_CONDITION = 60


def _checks(text: str | None) -> dict[tuple[tuple[str, ...], str], int]:
    """(variables the check requires, the setting guarding it) → line, for each requiring check of ``text``."""
    tree, _ = parse(text or "")
    if not isinstance(tree, ast.Module):
        return {}
    found: dict[tuple[tuple[str, ...], str], int] = {}

    def visit(node: ast.AST, guard: str) -> None:
        for child in ast.iter_child_nodes(node):
            required: ast.expr | None = None
            if isinstance(child, ast.Assert):
                required = child.test
            elif isinstance(child, ast.If) and isinstance(child.test, ast.UnaryOp) \
                    and isinstance(child.test.op, ast.Not) and child.body and isinstance(child.body[0], ast.Raise):
                required = child.test.operand
            calls = sorted((x for x in ast.walk(required) if _env_call(x)) if required is not None else (),
                           key=lambda x: (getattr(x, "lineno", 0), getattr(x, "col_offset", 0)))  # as written
            names = tuple(dict.fromkeys(n for n in map(_env_call, calls) if n))
            if names:
                found.setdefault((tuple(name for name, _ in names), guard), getattr(child, "lineno", 0))
            inner = guard
            if isinstance(child, ast.If) and required is None and not any(_env_call(x) for x in ast.walk(child.test)):
                inner = _setting(child.test) or guard
            visit(child, inner)

    visit(tree, "")
    return found


def _setting(test: ast.expr) -> str:
    """The setting an ``if`` tests: a key read by subscript or ``.get`` (``self.config["dynamic_eplb"]``), else the
    test as written when short, else ""."""
    for node in ast.walk(test):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            return node.slice.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return node.args[0].value
    written = _unparse(test) or ""
    return written if len(written) <= _MAX_CONDITION else ""


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """An ``env`` fact (detail ``required``) for each variable a check added to ``after`` requires, and an ``env`` or
    ``config`` fact (detail ``rejected``) for each setting a new or widened check refuses (rejections.py)."""
    required = _required(path, before, after)
    needed = {c.symbol for c in required}  # ``if not os.getenv("X"): raise``: X is required, not refused
    return [c for c in rejections.compare(path, before, after)
            if not (c.kind == "env" and c.symbol in needed)] + required


def _required(path: str, before: str | None, after: str | None) -> list[Change]:
    """The ``env`` facts of :func:`compare`."""
    if not after or ("getenv" not in after and "environ" not in after):
        return []
    old = {names for names, _ in _checks(before)}
    facts: list[Change] = []
    for (names, guard), line in _checks(after).items():
        if names in old:
            continue
        facts += [Change(kind="env", symbol=name, path=path, line=line, after=guard, detail="required",
                         public=True, language="config") for name in names]
    return facts
