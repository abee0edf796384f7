"""What a changed function's code now does differently, read with ``ast`` from both versions (nothing is imported):
the dtype casts it makes and how many values its returns give.

- **numerics**: the casts of any function (``x.astype(jnp.float32)``, ``x.to(torch.float32)``, ``dtype=`` of an
  allocation: the reading prdigest/collect/facts/pykernels.py makes of a kernel's code), counted: a fix that
  computes a norm in float32 where it rounded to bfloat16 is told by the casts it adds, kernel or not.
- **returns**: the number of values its ``return`` statements give (``return out`` → ``return out, ids``): every
  caller now unpacks something else, a contract between the function and each module that calls it.

Each is said in the function's ``body`` fact (prdigest/kernel/bodyfacts.py: ``numerics: +x→float32 | returns:
1→2``); a function whose signature changed has a signature fact instead, and no body fact is added beside it (what
a downstream that overrides it is told stays one fact). Only shipped code: tests' functions are not read.
"""

from __future__ import annotations

import ast
from collections import Counter

from prdigest.collect.facts import pyapi, pykernels
from prdigest.kernel import bodyfacts
from prdigest.kernel.models import Change


def described(facts: list[Change], sides: dict[str, tuple[str | None, str | None]]) -> list[Change]:
    """``facts`` with each changed function's numerics and returns said in its ``body`` fact (``sides``: a Python
    file's text before and after, by path; test files left out by the caller)."""
    out: list[Change] = []
    for c in facts:
        if c.kind == "body" and c.detail == bodyfacts.BODY_CHANGED and c.path in sides:
            before, after = sides[c.path]
            old, new = _function(before, c.symbol), _function(after, c.symbol)
            if old is not None and new is not None:
                c = c.model_copy(update={"detail": bodyfacts.detail(numerics=_numerics(old, new),
                                                                    returns=_returns(old, new))})
        out.append(c)
    return out


def _function(text: str | None, symbol: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    module = pyapi.parse(text) if text else None
    if module is None or module.tree is None:
        return None
    return pykernels.functions(module.tree).get(symbol)


def _numerics(before: ast.AST, after: ast.AST) -> str:
    """``+x→float32; -y→bfloat16``: the casts one version makes and the other does not."""
    old, new = Counter(pykernels.casts(before)), Counter(pykernels.casts(after))
    if old == new:
        return ""
    parts = [f"+{c}" for c in sorted((new - old).elements())] + [f"-{c}" for c in sorted((old - new).elements())]
    return "; ".join(dict.fromkeys(parts))


def _returns(before: ast.FunctionDef | ast.AsyncFunctionDef, after: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``1→2``: how many values the function's returns give, before and after (``1/2`` when they differ between
    its returns), or empty when that did not change."""
    old, new = _arity(before), _arity(after)
    return f"{old}→{new}" if old != new else ""


def _arity(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The number of values the function's own ``return`` statements give (not its nested functions'), as a
    sorted ``/``-joined set; ``0`` for a bare ``return`` or none."""
    counts: set[int] = set()
    for node in pyapi.own_nodes(fn):
        if isinstance(node, ast.Return):
            value = node.value
            if value is None or (isinstance(value, ast.Constant) and value.value is None):
                counts.add(0)
            else:
                counts.add(len(value.elts) if isinstance(value, ast.Tuple) else 1)
    return "/".join(str(n) for n in sorted(counts)) or "0"
