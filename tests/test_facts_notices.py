"""A file skipped for code facts for its size or depth is named with its PR (prdigest/collect/facts/reading.py):
the operator reading the run's log can find the PR and the file, not only a path."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from prdigest.collect.facts.surface import Surface
from prdigest.collect.facts.week import week_facts
from prdigest.collect.git.clone import UpstreamClone
from prdigest.kernel.models import PullRequest
from tests.git_support import commit, git, write

DEEP = "X = " + "+".join(["1"] * 1000) + "\n"  # parses, yet too deep for the visitors: refused by its depth
BIG = "X = [" + "1, " * 700_000 + "]\n"  # over 2,000,000 characters: refused by its size


def _pr(number: int, sha: str, paths: list[str]) -> PullRequest:
    return PullRequest.model_validate({
        "number": number, "url": f"https://github.com/acme/pkg/pull/{number}", "merged_at": "2026-11-17T10:00:00Z",
        "merge_commit": sha, "files": [{"path": p, "additions": 1, "deletions": 1} for p in paths]})


def test_a_module_skipped_for_its_depth_or_size_is_named_with_its_pr(tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"pkg/__init__.py": "", "pkg/deep.py": "X = 1\n", "pkg/big.py": "X = 1\n",
                 "setup.py": "setup(install_requires=['torch'])\n"})
    commit(repo, "base")
    write(repo, {"pkg/deep.py": DEEP, "setup.py": "setup(install_requires=['torch'], x=" + "-" * 100_000 + "1)\n"})
    deep = commit(repo, "deep")
    write(repo, {"pkg/big.py": BIG})
    big = commit(repo, "big")
    prs = [_pr(41, deep, ["pkg/deep.py", "setup.py"]), _pr(42, big, ["pkg/big.py"])]
    with caplog.at_level(logging.WARNING):
        week = week_facts(prs, surface=Surface(packages=("pkg",)), clone=UpstreamClone(repo / ".git"))
    assert week.source == {41: "git", 42: "git"}
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("PR #41 pkg/deep.py (after the change)") and "nested too deeply" in m
               for m in messages), messages
    assert any(m.startswith("PR #41 setup.py: skipped for its pins") for m in messages), messages
    assert any(m.startswith("PR #42 pkg/big.py: skipped for code facts: too large") for m in messages), messages
    assert not any("#42" in m and "deep.py" in m for m in messages), messages  # each notice names its own PR
