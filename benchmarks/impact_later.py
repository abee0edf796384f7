"""A second, looser evidence for a ``breaks`` flag, shown beside the stricter one (never instead of it): the
downstream changed the statement holding the flagged use between d0 and its last commit on ``main`` at most
:data:`LATER_DAYS` days after d1 (and no later than :data:`HISTORY_END`, the end of the history the benchmark may
read).

Why looser, and why beside: the stricter evidence (benchmarks.impact_downstreams.score) asks whether the
adaptation commits (d0 → d1) changed the function holding the use; a plugin also fixes a break after d1, or fixes
its statement (a multi-line import, a call over several lines) below the line the index names. A change after d1
may adapt to a later upstream than the measured span, or be a refactor: this column is an upper bound of what the
history supports, and the hand verdicts (benchmarks/data/impact_handcheck.json) stay what decides a flag.

The statement holding a use: the smallest statement whose lines hold it; a compound statement (a ``def``, a
``class``, an ``if``) counts by its header only (decorators, signature, condition), so a later change anywhere in
a function's body does not count for a flag on its ``def`` line. For a patch ``X.f = g`` whose ``g`` is imported
from another of the downstream's modules, a change of ``g``'s definition there counts too (where a plugin fixes
what it installs).
"""

from __future__ import annotations

import ast
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.kernel.models import Impact

#: How long after the last adaptation commit (d1) a change of the flagged statement still counts.
LATER_DAYS = 60
#: The end of the downstreams' history the benchmark reads (the brief of issue 36: up to 2026-05-31).
HISTORY_END = datetime(2026, 5, 31, 23, 59, 59, tzinfo=timezone.utc)


def _git(gitdir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], check=True, capture_output=True,
                          text=True).stdout


def later_commit(gitdir: Path, d1: str, branch: str = "main") -> tuple[str, datetime]:
    """The last first-parent commit of ``branch`` made no later than d1's date plus :data:`LATER_DAYS` and
    :data:`HISTORY_END`, and its date; d1 itself when ``branch`` does not hold d1."""
    made = datetime.fromisoformat(_git(gitdir, "log", "-1", "--format=%cI", d1).strip())
    until = min(made + timedelta(days=LATER_DAYS), HISTORY_END)
    sha = _git(gitdir, "rev-list", "-1", "--first-parent", f"--before={until.isoformat()}", branch).strip()
    held = subprocess.run(["git", "--git-dir", str(gitdir), "merge-base", "--is-ancestor", d1, sha],
                          capture_output=True).returncode == 0 if sha else False
    if not held:
        return d1, made
    return sha, datetime.fromisoformat(_git(gitdir, "log", "-1", "--format=%cI", sha).strip())


def changed_since(gitdir: Path, package: str | Sequence[str], d0: str, later: str) -> dict[str, set[int]]:
    """D0's lines (D0's numbering) that ``later`` changed or deleted under ``package`` (or each of several), a
    renamed file followed to its new path (its unchanged lines do not count); a pure insertion counts for the line
    it follows."""
    diff = _git(gitdir, "diff", "-U0", "-M", d0, later, "--", *([package] if isinstance(package, str) else package))
    lines: dict[str, set[int]] = defaultdict(set)
    path = ""
    for row in diff.splitlines():
        if row.startswith("--- "):
            path = row[6:] if row.startswith("--- a/") else ""
        elif row.startswith("@@") and path:
            start, _, count = row.split()[1][1:].partition(",")
            lines[path].update(range(int(start), int(start) + max(int(count) if count else 1, 1)))
    return lines


def statement(tree: Path, path: str, line: int) -> set[int]:
    """The lines of the statement holding ``line`` in the checkout ``tree`` (a compound one: its header)."""
    best: tuple[int, int] | None = None
    for node in ast.walk(ast.parse((tree / path).read_bytes())):
        if not isinstance(node, ast.stmt):
            continue
        end = node.end_lineno or node.lineno
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
            end = max(node.lineno, body[0].lineno - 1)  # a compound statement: its header
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        if start <= line <= end and (best is None or end - start < best[1] - best[0]):
            best = (start, end)
    return set(range(best[0], best[1] + 1)) if best else {line}


def installed_elsewhere(tree: Path, path: str, line: int) -> tuple[str, set[int]] | None:
    """For a patch ``X.f = g`` at ``line`` whose ``g`` the file imports from another of the downstream's modules
    (``from pkg.mod import g``): that module's file and the lines of ``g``'s definition there; else None."""
    parsed = ast.parse((tree / path).read_bytes())
    value = next((n.value.id for n in ast.walk(parsed) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                  and n.lineno <= line <= (n.end_lineno or n.lineno)), None)
    source = next((n.module for n in ast.walk(parsed) if isinstance(n, ast.ImportFrom) and n.module and not n.level
                   and any((a.asname or a.name) == value for a in n.names)), None)
    if value is None or source is None:
        return None
    original = next(a.name for n in ast.walk(parsed) if isinstance(n, ast.ImportFrom) and n.module == source
                    for a in n.names if (a.asname or a.name) == value)
    for candidate in (source.replace(".", "/") + ".py", source.replace(".", "/") + "/__init__.py"):
        if (tree / candidate).is_file():
            for node in ast.parse((tree / candidate).read_bytes()).body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == original:
                    return candidate, set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return None


def later_evidence(breaks: list[Impact], region: list[Impact], tree: Path,
                   changed: dict[str, set[int]]) -> list[Impact]:
    """The flags the stricter evidence holds (``region``), those whose statement ``changed`` (d0 → the later
    commit) touches, and patches whose installed function, defined in another of the downstream's modules,
    it changed (the stricter region follows an installed function only within the patching file)."""
    out = []
    for i in breaks:
        elsewhere = installed_elsewhere(tree, i.path, i.line) if i.how == "patches" else None
        if i in region or statement(tree, i.path, i.line) & changed.get(i.path, set()) \
                or (elsewhere is not None and elsewhere[1] & changed.get(elsewhere[0], set())):
            out.append(i)
    return out
