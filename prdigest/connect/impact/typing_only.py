"""Imports a downstream makes for its type checker only (under a module-level ``if TYPE_CHECKING:``): never run,
so a name removed upstream there fails no run, only a type check. The index marks such imports' uses
(:data:`TYPING_ONLY` in their ``detail``) and the match tells them to ``check`` rather than ``breaks``.
(tpu-inference imported ``vllm.config.cache.BlockSize`` that way; vLLM 0.18.1 removed it.)"""

from __future__ import annotations

import ast

#: In an ``imports`` use's ``detail``: the import runs only for a type checker.
TYPING_ONLY = "typing-only"


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING" and isinstance(test.value, ast.Name))


def typing_only_lines(tree: ast.Module) -> set[int]:
    """The lines of the imports in a module-level ``if TYPE_CHECKING:`` body (not its ``else``)."""
    return {node.lineno for stmt in tree.body if isinstance(stmt, ast.If) and _is_type_checking(stmt.test)
            for inner in stmt.body for node in ast.walk(inner) if isinstance(node, (ast.Import, ast.ImportFrom))}


def with_mark(detail: str) -> str:
    """An import use's ``detail`` with :data:`TYPING_ONLY` added."""
    return f"{detail};{TYPING_ONLY}" if detail else TYPING_ONLY
