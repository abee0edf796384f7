"""An upstream change made as two commits of a real git repository and served as GitHub serves a PR's files
(each file's unified diff, three lines of context, no blobs), and the match of what its patches alone prove
against a small downstream."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from prdigest.collect.facts import Surface, patch_facts
from prdigest.connect.impact.hunks import facts_from_patches
from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, FileChange, Impact, PullRequest
from tests.git_support import commit, git, write

UP = ("vllm",)


def change_of(root: Path, before: dict[str, str], after: dict[str, str | None], *,
              python_headers: bool = False) -> PullRequest:
    """The PR that turns ``before`` into ``after``; with ``python_headers`` git writes its hunk headers with
    its Python driver (``def name(`` at any depth, as GitHub shows them), else by its default rule."""
    repo = root / "upstream"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    if python_headers:
        write(repo, {".gitattributes": "*.py diff=python\n"})
    write(repo, before)
    commit(repo, "before")
    write(repo, after)
    sha = commit(repo, "after")
    files = []
    for path in sorted(after):
        patch = git(repo, "diff", "--no-color", "-U3", f"{sha}^", sha, "--", path)
        status = "removed" if after[path] is None else "added" if path not in before else "modified"
        files.append(FileChange(path=path, status=status, patch=patch[patch.find("@@"):] if "@@" in patch else None))
    return PullRequest(number=9, url="https://example.invalid/pr/9", merged_at=datetime.now(timezone.utc),
                       files=files)


def patch_only(pr: PullRequest) -> list[Change]:
    """The facts a run without a clone matches (the entry's patch facts, then the hunk headers' others)."""
    facts = patch_facts(pr, Surface(packages=UP))
    seen = {(c.kind, c.symbol, c.path) for c in facts}
    return facts + [c for c in facts_from_patches(pr, UP) if (c.kind, c.symbol, c.path) not in seen]


def matched(facts: list[Change], downstream: dict[str, str]) -> list[Impact]:
    """The facts matched against a downstream given as {path: source}."""
    uses = resolve_uses([summarize(p, t, UP) for p, t in downstream.items()], UP)
    return match_changes(facts, UseTable.of("ds", uses, UP), UP, number=9, partial=True)
