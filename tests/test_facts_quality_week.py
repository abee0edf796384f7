"""benchmarks/facts_quality.week_prs on a real repository built here: each PR's files carry git's status (a new
file is ``added``, as GitHub's file list says), which the drafts' new-source and new-architecture signals read."""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchmarks.facts_quality import week_prs
from tests.git_support import _ENV, git, write


def _commit_at(repo: Path, message: str, when: str) -> None:
    env = {**_ENV, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", message], check=True, env=env)


def test_each_file_has_the_status_git_gives_it(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"pkg/old.py": "def f():\n    return 1\n" * 20, "pkg/gone.py": "x = 1\n", "pkg/kept.py": "y = 1\n"})
    _commit_at(repo, "Initial layout", "2026-01-05T12:00:00+00:00")
    write(repo, {"pkg/new.py": "z = 1\n", "pkg/gone.py": None, "pkg/kept.py": "y = 2\n"})
    git(repo, "mv", "pkg/old.py", "pkg/moved.py")
    _commit_at(repo, "Add new, drop gone, move old (#7)", "2026-01-06T12:00:00+00:00")  # ISO week 2026-W02
    prs, _ = week_prs(repo / ".git", "o/r", "2026-W02")
    assert [pr.number for pr in prs] == [7]
    assert {f.path: f.status for f in prs[0].files} == {
        "pkg/new.py": "added", "pkg/gone.py": "removed", "pkg/kept.py": "modified", "pkg/moved.py": "renamed"}
