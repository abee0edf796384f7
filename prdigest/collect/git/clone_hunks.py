"""The diff hunks a prompt shows, read from the clone at each PR's merge commit against its first parent: with
``--git`` the GitHub source lists files without hunks, and the model must still see the code.

Only the files the prompt would show first are read (:func:`prdigest.kernel.prtext.pointing.ranked_files`: the
core change before tests, docs, CI and lock files), each patch in the REST API's shape (from the first ``@@``),
capped so one generated file cannot fill memory. Two git commands per PR (the paths' blob ids on a partial clone
are fetched in one batch for the week first), so a week costs a few seconds.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from prdigest.collect.git.clone import GitUnavailable, UpstreamClone
from prdigest.kernel.models import Change, PullRequest
from prdigest.kernel.prtext.pointing import ranked_files

#: Files whose hunks are read per PR at most (the prompt has room for the first few).
MAX_FILES = 12
#: Characters kept of one file's hunks (a prompt's whole budget is about 45,000 characters).
MAX_PATCH = 24_000
_SHA = re.compile(r"[0-9a-fA-F]{7,40}")
_HEADER = re.compile(r"^diff --git ", re.M)


def _unquote(name: str) -> str:
    """A path as git prints it in a ``---``/``+++`` line: C-quoted when it holds a quote, a backslash or a control
    character (``core.quotePath=false`` leaves other characters alone)."""
    if name.startswith('"') and name.endswith('"'):
        try:
            value = ast.literal_eval(name)
        except (ValueError, SyntaxError):
            return name
        return value if isinstance(value, str) else name
    return name


def _split(text: str) -> dict[str, str]:
    """``git diff`` output → path (after the change; before it for a deleted file) → its hunks from the first ``@@``."""
    out: dict[str, str] = {}
    for chunk in _HEADER.split(text)[1:]:
        head, at, hunks = chunk.partition("\n@@")
        if not at:
            continue  # binary, a mode change or a pure rename: no lines to show
        old = new = ""
        for line in head.splitlines():
            if line.startswith("--- "):
                old = _unquote(line[4:].rstrip("\t"))
            elif line.startswith("+++ "):
                new = _unquote(line[4:].rstrip("\t"))
        path = new[2:] if new.startswith("b/") else old[2:] if old.startswith("a/") else ""
        if not path:
            continue
        patch = "@@" + hunks
        if len(patch) > MAX_PATCH:
            patch = patch[:patch.rfind("\n", 0, MAX_PATCH)]
        out[path] = patch.rstrip("\n")
    return out


def _wanted(pr: PullRequest, changes: Sequence[Change], max_files: int) -> list[str]:
    """The paths to diff: the most telling files without a patch, and the old path of a renamed one (so that git
    sees the rename and shows its changed lines, not the whole file as new)."""
    files = [f for f in ranked_files(pr, changes) if not f.patch][:max_files]
    return [*(f.path for f in files), *(f.previous_path for f in files if f.previous_path)]


def clone_hunks(clone: UpstreamClone, prs: Sequence[PullRequest], max_files: int = MAX_FILES
                ) -> dict[int, dict[str, str]]:
    """PR number → path → the file's hunks at the PR's merge commit, for its most telling files that came without a
    patch; a PR without a merge commit, or whose commit the clone lacks, gets nothing."""
    wanted = {pr.number: (pr.merge_commit, _wanted(pr, pr.changes, max_files)) for pr in prs
              if pr.merge_commit and _SHA.fullmatch(pr.merge_commit)}
    wanted = {n: (sha, paths) for n, (sha, paths) in wanted.items() if sha and paths}
    if clone.partial:  # fetch the week's blobs in one request rather than one by one as git diff reads them
        oids: set[str] = set()
        for sha, paths in wanted.values():
            try:
                raw = clone.run(["--literal-pathspecs", "diff-tree", "-r", "-z", "--no-renames", "--no-commit-id",
                                 f"{sha}^1", sha, "--", *paths], what="diff-tree")
            except GitUnavailable:
                continue
            for meta in raw.split(b"\0")[::2]:
                parts = meta.split()
                if len(parts) >= 4:
                    oids.update(o.decode() for o in parts[2:4] if o.strip(b"0"))
        clone.fetch_blobs(oids)
    out: dict[int, dict[str, str]] = {}
    for number, (sha, paths) in wanted.items():
        try:
            text = clone.run(["-c", "core.quotePath=false", "--literal-pathspecs", "diff", "--no-color",
                              "--no-ext-diff", "--no-textconv", "-M", "--unified=3", f"{sha}^1", sha, "--", *paths],
                             what="diff").decode("utf-8", "replace")
        except GitUnavailable:
            continue  # not in the clone (the facts step said so already), or a root commit
        found = _split(text)
        if found:
            out[number] = found
    return out
