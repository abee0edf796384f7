"""Python source parsed with caps: a hostile or generated file (a patch, a ``setup.py``, a downstream's module, a
string annotation) gives None and a reason instead of stopping the run.

``ast.parse`` raises ``RecursionError`` or ``MemoryError`` on an expression nested a few thousand deep, and a tree
a few hundred deep parses but breaks every recursive visitor after it (``ast.NodeVisitor``, ``ast.unparse``):
such a tree is refused here too, by its depth.
"""

from __future__ import annotations

import ast
import threading
import warnings
from typing import Literal

#: Characters of source parsed at most (a downstream module, a file before or after a PR): 2 MB of generated
#: code is data, not an API anyone imports.
MAX_SOURCE = 2_000_000
#: Nesting depth of a tree at most: real code stays under 40 (CPython's standard library: 33); recursive
#: visitors fail from about 500.
MAX_DEPTH = 200
#: One ``ast.parse`` at a time in the process: CPython 3.11 keeps the AST converter's recursion depth in state
#: shared by threads, so two drafting threads parsing at once can fail with "SystemError: AST constructor
#: recursion depth mismatch" (seen in CI: one PR's draft lost). Parsing holds the GIL anyway; the lock costs
#: no parallelism.
PARSE_LOCK = threading.Lock()


def parse(source: str | bytes, *, filename: str = "<unknown>", mode: Literal["exec", "eval"] = "exec",
          max_source: int = MAX_SOURCE, max_depth: int = MAX_DEPTH) -> tuple[ast.AST | None, str]:
    """``(tree, "")``, or ``(None, reason)`` when ``source`` is too large, too deep, not valid Python, or holds a
    null byte; never raises for what the text holds. ``max_depth=0``: the tree's depth is not checked here (the
    caller's own walk checks it: :func:`too_deep`)."""
    if len(source) > max_source:
        return None, f"too large to parse ({len(source):,} > {max_source:,} characters)"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like in others' strings
            with PARSE_LOCK:
                tree = ast.parse(source, filename=filename, mode=mode)
    except SyntaxError as exc:
        return None, f"SyntaxError: {exc.msg} (line {exc.lineno})"
    except (RecursionError, MemoryError):
        return None, f"nested too deeply to parse (over {max_depth} levels)"
    except ValueError as exc:  # a null byte; a bytes source that is not UTF-8
        return None, f"ValueError: {exc}"
    # max_depth 0: the caller walks the tree without recursion and counts the depth itself (one pass, not two)
    if max_depth and tree_depth(tree, max_depth) > max_depth:
        return None, f"nested too deeply to parse (over {max_depth} levels)"
    return tree, ""


def too_deep(max_depth: int = MAX_DEPTH) -> str:
    """The reason a tree deeper than ``max_depth`` is refused with, for callers that count the depth themselves."""
    return f"nested too deeply to parse (over {max_depth} levels)"


def tree_depth(tree: ast.AST, cap: int) -> int:
    """The nesting depth of ``tree``, counted level by level (no recursion); stops counting past ``cap``."""
    level: list[ast.AST] = [tree]
    depth = 0
    while level:
        depth += 1
        if depth > cap:
            return depth
        below: list[ast.AST] = []
        for node in level:
            for name in node._fields:
                value = getattr(node, name, None)
                if isinstance(value, ast.AST):
                    below.append(value)
                elif isinstance(value, list):
                    below.extend(v for v in value if isinstance(v, ast.AST))
        level = below
    return depth
