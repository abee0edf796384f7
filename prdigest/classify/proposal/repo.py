"""What a proposal reads of a repository: its config files, its tree and its recent PRs' labels, from a
checkout (nothing fetched), from PR records (what a week's changes show), or through the GitHub API
(:mod:`prdigest.classify.proposal.remote`)."""

from __future__ import annotations

import os
import stat
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from prdigest.classify.proposal.tree import TreeFile, is_incidental, is_source
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import PullRequest

#: Where each convention lives, first found wins (GitHub's own search order for CODEOWNERS).
CONFIG_FILES: dict[str, tuple[str, ...]] = {
    "labeler": (".github/labeler.yml", ".github/labeler.yaml"),
    "mergify": (".github/mergify.yml", ".mergify.yml", ".github/mergify.yaml", ".mergify.yaml"),
    "codeowners": (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"),
}
MAX_CONFIG_BYTES = 1_000_000
MAX_TREE_FILES = 300_000
MAX_READ_BYTES = 2_000_000
#: Bytes per line when only sizes are known (the API's tree): about right for source code.
BYTES_PER_LINE = 40
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox", "build",
                        "dist", "target", ".pytest_cache"})


@dataclass
class RepoSnapshot:
    """A repository as the proposal sees it."""

    repo: str
    #: Where it was read from, for the file's header ("checkout /src/x", "GitHub API", "47 PRs of a source").
    where: str
    files: list[TreeFile] = field(default_factory=list)
    #: kind (labeler, mergify, codeowners) → (path, text).
    configs: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Labels of recent PRs (as written) and how many PRs carried each.
    pr_labels: Counter[str] = field(default_factory=Counter)
    prs_seen: int = 0
    #: Label → changed lines per top folder of the PRs carrying it (for path suggestions).
    label_folders: dict[str, Counter[str]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_prs(self, prs: list[PullRequest]) -> None:
        """Count the labels these PRs carry and where their changes are."""
        self.prs_seen += len(prs)
        for pr in prs:
            for label in dict.fromkeys(pr.labels):
                self.pr_labels[label] += 1
                folders = self.label_folders.setdefault(label, Counter())
                for f in pr.files:
                    if not is_incidental(f.path):  # tests follow the code: they say nothing of the area
                        folders[_folder(f.path)] += max(f.changes, 1)


def _folder(path: str, depth: int = 2) -> str:
    parts = path.split("/")[:-1]
    return "/".join(parts[:depth])


def _config_text(path: Path, shown: str) -> str:
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{shown}: larger than {MAX_CONFIG_BYTES} bytes; is it really a config file?")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{shown}: not UTF-8 text") from None
    except OSError as exc:
        raise ConfigError(f"{shown}: cannot read: {exc.strerror or exc}") from None


def _lines(path: Path, size: int, source: bool) -> int:
    if not source or size > MAX_READ_BYTES:
        return max(size // BYTES_PER_LINE, 1)
    try:
        with path.open("rb") as handle:
            return handle.read().count(b"\n") + 1
    except OSError:
        return max(size // BYTES_PER_LINE, 1)


def from_checkout(root: Path, repo: str) -> RepoSnapshot:
    """Read a local checkout; nothing is fetched. Symbolic links are not followed."""
    if not root.is_dir():
        raise ConfigError(f"--checkout {root}: not a folder")
    snapshot = RepoSnapshot(repo=repo, where=f"checkout {root}")
    for kind, candidates in CONFIG_FILES.items():
        for rel in candidates:
            path = root / rel
            if path.is_file() and not path.is_symlink():
                snapshot.configs[kind] = (rel, _config_text(path, str(path)))
                break
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_symlink():
                continue
            rel = path.relative_to(root).as_posix()
            try:
                info = path.stat()
            except OSError:
                continue
            if not stat.S_ISREG(info.st_mode):  # a FIFO would block the line count for ever; a device never ends
                continue
            size = info.st_size
            snapshot.files.append(TreeFile(rel, _lines(path, size, is_source(rel))))
            if len(snapshot.files) >= MAX_TREE_FILES:
                snapshot.notes.append(f"the tree was read up to {MAX_TREE_FILES} files")
                return snapshot
    return snapshot


def from_prs(repo: str, prs: list[PullRequest]) -> RepoSnapshot:
    """What PR records show of a repository: the paths they change (weighted by lines) and their labels."""
    snapshot = RepoSnapshot(repo=repo, where=f"the changed files and labels of {len(prs)} PRs")
    weights: Counter[str] = Counter()
    for pr in prs:
        for f in pr.files:
            weights[f.path] += max(f.changes, 1)
    snapshot.files = [TreeFile(p, n) for p, n in sorted(weights.items())]
    snapshot.add_prs(prs)
    return snapshot
