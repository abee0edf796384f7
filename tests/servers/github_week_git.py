"""A synthetic week's merge commits as a real git repository, so the local GitHub server can serve each PR's
changed files before and after (``--git-dir``): one base commit holding every file the week modifies, then one
commit per merged PR in merge order, each writing its files (a changed signature and a new function in each
modified file, a new module for each added one). Built with one ``git fast-import``; each record gets its
``merge_commit``."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any


def module_text(name: str, functions: int, *, changed: bool) -> bytes:
    """A Python module of ``functions`` small functions; ``changed``: the first takes one more argument and a
    function is added at the end (a signature fact and an added name per file)."""
    lines = [f'"""Module {name}."""\n\n']
    for j in range(functions):
        extra = ", scale=1.0" if changed and j == 0 else ""
        lines.append(f"def {name}_{j}(a, b=1{extra}):\n    return a + b\n\n\n")
    if changed:
        lines.append(f"def {name}_added(x):\n    return x\n")
    return "".join(lines).encode()


def build_week_git(records: list[dict[str, Any]], git_dir: Path, *, seed: int = 1) -> None:
    """Write the repository to ``git_dir`` (bare) and set ``merge_commit`` on every merged record, in place."""
    rng = random.Random(seed)
    merged = sorted((r for r in records if r.get("merged_at")), key=lambda r: (r["merged_at"], r["number"]))
    sizes = {f["path"]: rng.randint(10, 80) for r in merged for f in r["files"]}
    stream: list[bytes] = []
    mark = 0

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        stream.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
        return mark

    def commit(message: str, files: dict[str, int], when: int, parent: int | None) -> int:
        nonlocal mark
        mark += 1
        body = message.encode()
        head = (b"commit refs/heads/main\nmark :%d\nauthor Dev <dev@example.com> %d +0000\n"
                b"committer Dev <dev@example.com> %d +0000\ndata %d\n%s\n" % (mark, when, when, len(body), body))
        if parent is not None:
            head += b"from :%d\n" % parent
        stream.append(head + b"".join(b"M 100644 :%d %s\n" % (m, p.encode()) for p, m in files.items()) + b"\n")
        return mark

    base = {f["path"]: blob(module_text(_name(f["path"]), sizes[f["path"]], changed=False))
            for r in merged for f in r["files"] if f.get("status", "modified") != "added"}
    head = commit("base", base, 1_700_000_000, None)
    commits: list[tuple[dict[str, Any], int]] = []
    for i, record in enumerate(merged):
        files = {f["path"]: blob(module_text(_name(f["path"]), sizes[f["path"]], changed=True))
                 for f in record["files"]}
        head = commit(f"{record['title']} (#{record['number']})", files, 1_700_000_100 + i, head)
        commits.append((record, head))
    subprocess.run(["git", "init", "-q", "--bare", str(git_dir)], check=True)
    marks = git_dir / "marks"
    subprocess.run(["git", "--git-dir", str(git_dir), "fast-import", "--quiet", f"--export-marks={marks}"],
                   input=b"".join(stream), check=True)
    shas = dict(line.split() for line in marks.read_text().splitlines())
    for record, m in commits:
        record["merge_commit"] = shas[f":{m}"]


def _name(path: str) -> str:
    """A Python name from a path (``vllm/v1/core/f10001_0.py`` → ``f10001_0``)."""
    return path.rsplit("/", 1)[-1].removesuffix(".py").replace("-", "_")
