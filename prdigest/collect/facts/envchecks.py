"""Environment variables a PR makes required: a check it adds to shipped Python code that stops the program unless
a variable is set (``assert os.getenv("DYNAMIC_EPLB", "false") == "true" or …``, or ``if not os.getenv("X"):
raise …``). Each variable is an ``env`` fact with detail ``required`` and, as ``after``, the setting that turns the
check on when an ``if`` around it reads one (``if self.config["dynamic_eplb"]:`` → ``dynamic_eplb``). Only checks
the PR adds count (one the file already had, at any line, is old news); a check that forbids a variable, or one
that merely reads it, asks nothing.

A config key a new check rejects: a function the PR adds or changes that reads one config key and raises an error
with a message (``if layer_sharding and role != "kv_producer": raise ValueError("… only on the P node")``) is a
``config`` fact with detail ``rejected`` and the message as ``after``: startup now stops with that key set where
the check says it does not belong.
"""

from __future__ import annotations

import ast

from prdigest.collect.facts.pyapi import _unparse
from prdigest.collect.facts.settings import _env_call
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

#: The longest condition said as it is written when no setting's key can be read from it.
_MAX_CONDITION = 60
#: The longest error message a rejected config key's fact quotes.
_MAX_MESSAGE = 120


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


def _config_key(node: ast.AST) -> str:
    """The key ``node`` reads from a config (``additional_config.get("layer_sharding")``,
    ``self.config["x"]``), or ""."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        owner, key = node.func.value, node.args[0] if node.args else None
    elif isinstance(node, ast.Subscript):
        owner, key = node.value, node.slice
    else:
        return ""
    if isinstance(key, ast.Constant) and isinstance(key.value, str) and "config" in (_unparse(owner) or "").lower():
        return key.value
    return ""


def _rejections(text: str | None) -> dict[str, tuple[str, int]]:
    """config key → (the error's message, line) for each function that reads exactly one config key and raises an
    error with a message: a check that stops startup when that key is set where it does not belong."""
    tree, _ = parse(text or "")
    if not isinstance(tree, ast.Module):
        return {}
    found: dict[str, tuple[str, int]] = {}
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        keys = {k for k in map(_config_key, ast.walk(fn)) if k}
        raised = [r for r in ast.walk(fn) if isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call) and r.exc.args
                  and isinstance(r.exc.args[0], ast.Constant) and isinstance(r.exc.args[0].value, str)]
        if len(keys) == 1 and raised:
            message = " ".join(str(raised[0].exc.args[0].value).split())  # type: ignore[union-attr]
            found.setdefault(keys.pop(), (message[:_MAX_MESSAGE], raised[0].lineno))
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """An ``env`` fact (detail ``required``) for each variable a check added to ``after`` requires, and a
    ``config`` fact (detail ``rejected``, the error's message as ``after``) for each config key a new check rejects."""
    rejected: list[Change] = []
    if after and "config" in after:
        old = _rejections(before)
        rejected = [Change(kind="config", symbol=key, path=path, line=line, after=message, detail="rejected",
                           public=True, language="config")
                    for key, (message, line) in _rejections(after).items() if key not in old]
    return rejected + _required(path, before, after)


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
