"""Environment variables renamed where shipped code reads them: ``envs.VLLM_NIXL_ABORT_REQUEST_TIMEOUT`` →
``envs.VLLM_MOONCAKE_ABORT_REQUEST_TIMEOUT`` or ``os.getenv("OLD", "0")`` → ``os.getenv("NEW", "0")`` in any
shipped module, not only in the repo's env files (prdigest/collect/facts/settings.py reads those).

A read is ``os.getenv("X")``, ``os.environ.get("X")``, ``os.environ["X"]`` or an attribute ``X`` of a module named
like an env module (``envs.X``, ``envs_ascend.X``, ``vllm.envs.X``). A file that stops reading one variable and starts
reading another on a line otherwise the same renamed it: an ``env`` fact, detail ``renamed where read``, the old
name as ``before``. Readers who set the old name must set the new one, unless some shipped module of the tree at the
merge commit still reads the old name (:func:`still_read`): then the old setting still does something, and the
fact goes. A file that stops reading a variable with no other name in its place makes a fact too, detail ``no
longer read`` (:data:`UNREAD`), under the same condition: read nowhere in the tree at the merge commit.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from prdigest.collect.facts.rejections import setting_read
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.models import Change
from prdigest.kernel.safe_parse import parse

DETAIL = "renamed where read"
#: A variable a file stops reading with no other name taking its place, read nowhere else in the tree at the merge
#: commit (``envs_vllm.VLLM_TORCH_PROFILER_DIR`` → ``profiler_config.torch_profiler_dir``): setting it does nothing.
UNREAD = "no longer read"
_PLACEHOLDER = "\0"


def reads(text: str | None) -> dict[str, set[str]]:
    """Each environment variable ``text`` reads by name → the lines reading it, the name blanked."""
    tree, _ = parse(text or "")
    found: dict[str, set[str]] = {}
    if not isinstance(tree, ast.Module):
        return found
    lines = (text or "").splitlines()
    for node in ast.walk(tree):
        key = setting_read(node)
        if key is None or key[0] != "env":
            continue
        at: int = getattr(node, "lineno", 0)
        line = lines[at - 1] if 0 < at <= len(lines) else ""
        blanked = line.replace(key[1], _PLACEHOLDER)  # a plain replace: one compiled pattern per name was slow
        found.setdefault(key[1], set()).add(" ".join(blanked.split()))
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """A fact for each variable ``after`` reads where ``before`` read another, on a line otherwise the same."""
    if not before or not after or "env" not in before:
        return []  # nothing read by name before (or the module deleted: file facts say so)
    old, new = reads(before), reads(after) if "env" in after else {}  # none read after: each one is unread
    gone = {name: lines for name, lines in old.items() if name not in new}
    came = {name: lines for name, lines in new.items() if name not in old}
    facts: list[Change] = []
    for name, lines in sorted(gone.items()):
        partners = [other for other, other_lines in came.items() if lines & other_lines]
        if len(partners) == 1:  # one new name on the old one's lines: a rename, not two unrelated changes
            facts.append(Change(kind="env", symbol=partners[0], path=path, line=_line(after, partners[0]),
                                before=name, after=partners[0], detail=DETAIL, public=True, language="config"))
        elif not partners:
            facts.append(Change(kind="env", symbol=name, path=path, line=_line(before, name), before=name,
                                detail=UNREAD, public=True, language="config"))
    return facts


def _line(text: str, name: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if name in line:
            return number
    return 0


def still_read(facts: Sequence[Change], sha: str, clone: UpstreamClone, surface: Surface) -> list[Change]:
    """``facts`` without a rename whose old name some shipped module of the tree at ``sha`` still reads; all such
    renames go when the tree cannot be read (nothing shows the old name is unread)."""
    old = {c.before for c in facts if c.kind == "env" and c.detail in (DETAIL, UNREAD)}
    if not old:
        return list(facts)
    try:
        texts = tree_texts(clone, sha, lambda path: path.endswith(".py") and not surface.is_test(path))
    except GitUnavailable:
        left = old
    else:
        left = set()
        for text, _ in texts.values():
            named = {name for name in old - left if text and name in text}
            if named:
                left |= named & set(reads(text))
    return [c for c in facts if not (c.kind == "env" and c.detail in (DETAIL, UNREAD) and c.before in left)]
