"""A downstream's lines at one commit, and the later commit of its own that changed a line an alert flagged
("fixed in your abc123"): read from the downstream's git history (a checkout's, or the kept clone's)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from prdigest.connect.impact.downstream import DownstreamSpec, _git, clone_dir
from prdigest.kernel.errors import DownstreamError


@dataclass(frozen=True)
class Fix:
    """The downstream commit that changed a flagged line, and when it was committed."""

    sha: str
    at: datetime


def _where(spec: DownstreamSpec, state_dir: Path | None) -> Path | None:
    if spec.path:
        return Path(spec.path).expanduser()
    if spec.git and state_dir is not None:
        return clone_dir(state_dir, spec.name)
    return None


def file_text(spec: DownstreamSpec, state_dir: Path | None, commit: str, path: str) -> str | None:
    """The text of ``path`` at ``commit`` (a checkout that is no git repository: as it is now); None when the
    file is not there."""
    where = _where(spec, state_dir)
    if where is None:
        return None
    if spec.path and commit in ("", "worktree"):
        target = where / path
        return target.read_text(encoding="utf-8", errors="replace") if target.is_file() else None
    try:
        return _git(["show", f"{commit}:{path}"], cwd=where, what=f"downstream '{spec.name}'")
    except DownstreamError:
        return None


def line_text(text: str | None, line: int) -> str:
    """The stripped text of the 1-based ``line`` of ``text`` ('' when there is none)."""
    lines = (text or "").splitlines()
    return lines[line - 1].strip() if 0 < line <= len(lines) else ""


def find_fix(spec: DownstreamSpec, state_dir: Path | None, since: str, head: str, path: str,
             flagged: str) -> Fix | None:
    """The first commit after ``since`` up to ``head`` whose ``path`` no longer holds the ``flagged`` line (moved
    within the file still counts as there); None while it is still there or the history cannot be read (a
    shallow clone gives only ``head``: then ``head`` itself, when the line is gone there)."""
    where = _where(spec, state_dir)
    if where is None or not flagged or not head or head == since or since in ("", "worktree"):
        return None
    try:
        log = _git(["log", "--reverse", "--format=%H %cI", f"{since}..{head}", "--", path], cwd=where,
                   what=f"downstream '{spec.name}'")
        commits = [row.split(" ", 1) for row in log.splitlines() if row.strip()]
    except DownstreamError:  # the alert's commit is not in a shallow clone: judge the head alone
        shown = _git(["show", "-s", "--format=%H %cI", head], cwd=where, what=f"downstream '{spec.name}'")
        commits = [shown.split(" ", 1)]
    for sha, when in commits:
        text = file_text(spec, state_dir, sha, path)
        if text is None or flagged not in {x.strip() for x in text.splitlines()}:
            return Fix(sha, datetime.fromisoformat(when.strip()))
    return None
