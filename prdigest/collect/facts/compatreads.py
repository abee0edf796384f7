"""Settings deprecated with the one that turns their compatibility branch on: environment variables read only under
an ``if`` on a deprecated variable go with it.

``if os.getenv("VLLM_X_ENABLE") == "1": size = os.getenv("VLLM_X_SIZE") … warnings.warn("VLLM_X_ENABLE is
deprecated …")`` (vllm-ascend #6442): the warning names only the switch, but the sizes read under it have no other
use left, so they are deprecated too, with the switch's removal release and replacement. A variable the file also
reads outside such a branch is still in use and stays out.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from prdigest.collect.facts.rejections import setting_read
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse


def _envs(node: ast.AST) -> set[str]:
    """The environment variables ``node`` reads anywhere inside it."""
    found: set[str] = set()
    for sub in ast.walk(node):
        key = setting_read(sub)
        if key is not None and key[0] == "env":
            found.add(key[1])
    return found


def compare(path: str, after: str | None, deprecated: Sequence[Change]) -> list[Change]:
    """A ``deprecated`` fact for each variable read only in the branch a deprecated variable of ``path`` turns on
    (with that variable's removal release and replacement), none already deprecated."""
    switches = {c.symbol: c for c in deprecated if c.kind == "deprecated" and c.path == path}
    if not switches or not after:
        return []
    tree, _ = parse(after)
    if not isinstance(tree, ast.Module):
        return []
    inside: dict[str, tuple[Change, int]] = {}
    branches: list[ast.If] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            tested = _envs(node.test) & switches.keys()
            if len(tested) == 1:
                branches.append(node)
                switch = switches[next(iter(tested))]
                for stmt in node.body:
                    for name in sorted(_envs(stmt) - switches.keys()):
                        inside.setdefault(name, (switch, stmt.lineno))
    if not inside:
        return []
    # every read outside those branches: a variable still used elsewhere is no part of the deprecation
    outside: set[str] = set()
    within = {id(sub) for branch in branches for stmt in branch.body for sub in ast.walk(stmt)}
    for sub in ast.walk(tree):
        if id(sub) not in within:
            key = setting_read(sub)
            if key is not None and key[0] == "env":
                outside.add(key[1])
    return [Change(kind="deprecated", symbol=name, path=path, line=line, after=switch.after, detail=switch.detail,
                   language="python")
            for name, (switch, line) in inside.items() if name not in outside]
