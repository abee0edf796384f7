"""Files: a PR's changed files as the drafter sees them (kind, size, status, the code their patch defines)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.kernel.models import FileChange
from prdigest.kernel.prtext.prose import MAX_SCAN, clean_line, unique
from prdigest.kernel.vocabulary import DraftingHints

# File kinds, decided from the path alone.
SOURCE, TEST, DOC, CI, BUILD, BENCH, EXAMPLE = "source", "test", "doc", "ci", "build", "bench", "example"

_BUILD_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "cmakelists.txt", "uv.lock", "poetry.lock",
                "package.json", "package-lock.json", "cargo.toml", "cargo.lock", "go.mod", "go.sum")
_DEFINED = re.compile(r"^\+[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w{2,60})|"
                      r"^\+[^\n]{0,80}?__global__[ \t]+void[ \t]+(\w{3,60})", re.MULTILINE)


@dataclass(frozen=True)
class FileFact:
    """One changed file as the drafter sees it."""

    path: str
    additions: int
    deletions: int
    status: str
    kind: str
    symbols: tuple[str, ...] = ()  # functions and classes the patch adds, when the source sent a patch
    kernel_path: bool = False      # the repo's rules say files at this path are kernels

    @property
    def changes(self) -> int:
        return self.additions + self.deletions

    @property
    def is_new(self) -> bool:
        return self.status == "added"

    @property
    def is_kernel(self) -> bool:
        return self.kind == SOURCE and self.kernel_path


def file_facts(changes: list[FileChange], hints: DraftingHints | None = None) -> tuple[FileFact, ...]:
    """The files, most changed first; the ten biggest also carry what their patch defines."""
    hints = hints or DraftingHints()
    ranked = sorted(changes, key=lambda c: (-c.changes, c.path))
    facts = []
    for rank, change in enumerate(ranked):
        symbols: tuple[str, ...] = ()
        if change.patch and rank < 10:
            symbols = unique([a or b for a, b in _DEFINED.findall(change.patch[:MAX_SCAN])])[:6]
        path = clean_line(change.path, 300)
        facts.append(FileFact(path, change.additions, change.deletions, change.status,
                              file_kind(change.path), symbols, hints.is_kernel_path(path)))
    return tuple(facts)


def file_kind(path: str) -> str:
    """Classify a path as source, test, doc, ci, build, bench or example."""
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    if low.endswith((".md", ".rst", ".mdx")) or low.startswith(("docs/", "doc/")) or "/docs/" in low:
        return DOC
    if low.startswith("tests/") or "/tests/" in low or name.startswith("test_") or name.endswith("_test.py"):
        return TEST
    if low.startswith((".buildkite/", ".github/", "docker/", ".circleci/", ".gitlab")) or name.startswith(
            ("dockerfile", ".pre-commit")):
        return CI
    if (low.startswith("requirements") or "/requirements" in low or name in _BUILD_NAMES
            or low.startswith("cmake/") or name.endswith((".cmake", ".lock"))):
        return BUILD
    if low.startswith("benchmarks/"):
        return BENCH
    if low.startswith("examples/"):
        return EXAMPLE
    return SOURCE
