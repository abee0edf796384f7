"""A setting the shipped code stops rewriting: ``if config.x == A: config.x = B`` in a file before the PR and
nowhere in it after. Whoever sets ``x`` to ``A`` (or keeps a default that is ``A``, as vLLM's ``cudagraph_mode``
``FULL_AND_PIECEWISE`` was turned into ``PIECEWISE`` on Ascend) now runs with ``A``: a default changed for a
user-set key, said as one sentence ("set it to ``B`` to keep the old behaviour").

The setting is one :func:`~prdigest.collect.facts.rejections.setting_read` recognises (an attribute of an object
named like a config, a key of a config mapping, an environment variable); whether users set it is the reach's
to say (prdigest/collect/facts/reach.py: a name the user docs write as code). A fact ``config`` (or ``env``) with
detail :data:`UNREWRITTEN`, ``before`` what the value was turned into, ``after`` the value now kept.
"""

from __future__ import annotations

import ast

from prdigest.collect.facts.rejections import setting_read
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

#: The ``detail`` of a setting no longer rewritten.
UNREWRITTEN = "no longer rewritten"


def _shown(node: ast.expr) -> str:
    """A value as a reader sets it: ``CUDAGraphMode.PIECEWISE`` → ``PIECEWISE``, ``'x'`` → ``x``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Constant):
        return str(node.value)
    return ast.unparse(node)


def rewrites(text: str | None) -> dict[tuple[str, str, str, str], int]:
    """(kind, setting, value tested, value assigned) → line, for each ``if S == A: S = B`` of ``text``."""
    tree, _ = parse(text or "")
    found: dict[tuple[str, str, str, str], int] = {}
    if not isinstance(tree, ast.Module):
        return found
    for node in ast.walk(tree):
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1
                and isinstance(node.test.ops[0], (ast.Eq, ast.Is))):
            continue
        key = setting_read(node.test.left)
        if key is None:
            continue
        target, tested = ast.unparse(node.test.left), node.test.comparators[0]
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and ast.unparse(stmt.targets[0]) == target \
                    and _shown(stmt.value) != _shown(tested):
                found.setdefault((key[0], key[1], _shown(tested), _shown(stmt.value)), node.lineno)
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One fact per setting ``before`` rewrote and ``after`` no longer rewrites at all (a rewrite reworded or
    given another value is a body change, not a default readers get back by setting it)."""
    if not before or "==" not in before:
        return []
    new = rewrites(after)
    still = {(kind, name) for kind, name, _, _ in new}
    return [Change(kind="env" if kind == "env" else "config", symbol=name, path=path, line=line, before=value,
                   after=tested, detail=UNREWRITTEN, language="config")
            for (kind, name, tested, value), line in rewrites(before).items() if (kind, name) not in still]
