"""A repository read through the GitHub API with PyGithub: its tree (one recursive git-trees request),
the config files found in it (contents), and the labels of its recently closed PRs (one page)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from github import GithubException

from prdigest.classify.proposal.repo import BYTES_PER_LINE, CONFIG_FILES, MAX_CONFIG_BYTES, MAX_TREE_FILES, RepoSnapshot
from prdigest.classify.proposal.tree import TreeFile
from prdigest.collect.github.client import Clients, default_retry, github_errors
from prdigest.kernel.errors import ConfigError

RECENT_PRS = 100


def from_github(repo: str, *, token: str | None, base_url: str, retry_total: int = 6) -> RepoSnapshot:
    """Read ``repo``'s default branch and recent PRs; errors become one line naming the repo."""
    clients = Clients(base_url, token, retry=default_retry(total=retry_total), timeout=30,
                      seconds_between_requests=None)
    try:
        with github_errors(base_url, repo):
            return _read(clients, repo)
    finally:
        clients.close()


def _read(clients: Clients, repo: str) -> RepoSnapshot:
    gh = clients.get()
    remote = gh.get_repo(repo)
    branch = remote.default_branch
    snapshot = RepoSnapshot(repo=repo, where=f"the GitHub API ({repo}@{branch})")
    tree = remote.get_git_tree(branch, recursive=True)
    if tree.raw_data.get("truncated"):
        snapshot.notes.append("GitHub truncated the tree (a very large repository): folders are proposed from "
                              "part of it")
    blobs = {e.path: e.size or 0 for e in tree.tree if e.type == "blob"}
    for path, size in list(blobs.items())[:MAX_TREE_FILES]:
        snapshot.files.append(TreeFile(path, max(size // BYTES_PER_LINE, 1)))
    for kind, candidates in CONFIG_FILES.items():
        found = next((c for c in candidates if c in blobs), None)
        if found is None:
            continue
        if blobs[found] > MAX_CONFIG_BYTES:
            raise ConfigError(f"{repo}:{found}: larger than {MAX_CONFIG_BYTES} bytes; is it really a config file?")
        contents = remote.get_contents(found, ref=branch)
        if isinstance(contents, list):
            continue  # a folder of that name
        try:
            snapshot.configs[kind] = (found, contents.decoded_content.decode("utf-8"))
        except UnicodeDecodeError:
            raise ConfigError(f"{repo}:{found}: not UTF-8 text") from None
    labels: Counter[str] = Counter()
    seen = 0
    pr: Any  # PyGithub's PaginatedList slice is untyped
    try:
        for pr in remote.get_pulls(state="closed", sort="updated", direction="desc")[:RECENT_PRS]:
            if pr.merged_at is None:
                continue
            seen += 1
            for label in {label.name for label in pr.labels}:
                labels[label] += 1
    except GithubException as exc:
        if exc.status not in (403, 404):
            raise
        snapshot.notes.append(f"recent PRs could not be listed (HTTP {exc.status}): their labels were not read")
    snapshot.pr_labels, snapshot.prs_seen = labels, seen
    return snapshot
