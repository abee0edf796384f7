"""Which of a PR's changed files say most about it: the ones its title, description and code facts point to, the
core code before tests, docs, CI, build and data files. The prompt's hunks (prdigest/draft/packing.py) and the
hunks read from a clone (prdigest/collect/git/clone_hunks.py) follow this one order."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from prdigest.kernel.models import Change, FileChange, PullRequest
from prdigest.kernel.prtext.files import BENCH, BUILD, CI, DOC, EXAMPLE, SOURCE, TEST, file_kind

#: Extensions of code: a changed line there is the design; anything else under a source folder is data.
CODE_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd", ".c", ".cc", ".cpp", ".cxx", ".h", ".hh", ".hpp", ".cu", ".cuh",
                 ".rs", ".go", ".java", ".kt", ".scala", ".js", ".jsx", ".ts", ".tsx", ".swift", ".m", ".mm",
                 ".triton", ".metal", ".sh", ".cmake", ".proto")
#: Tiers in the order a prompt shows files: code, then its tests and examples, then build, CI and data, then docs.
_TIER = {SOURCE: 0, TEST: 1, BENCH: 1, EXAMPLE: 1, BUILD: 2, CI: 2, DOC: 3}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
#: Names too common to say which file a PR is about.
_COMMON = frozenset({"init", "main", "utils", "util", "test", "tests", "common", "base", "core", "config",
                     "setup", "index", "readme", "types", "model", "models", "version"})


def is_code(path: str) -> bool:
    """True for a file of code (by its extension), whatever folder it is in."""
    return path.lower().endswith(CODE_SUFFIXES)


def tier(path: str) -> int:
    """0 core code, 1 tests, benchmarks and examples, 2 build, CI, lock and data files, 3 docs."""
    kind = file_kind(path)
    level = _TIER.get(kind, 0)
    if level == 0 and not is_code(path):
        return 2  # version.info, a JSON table or a YAML file beside the code: data, not the change's design
    return level


def _words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text)}


def pointed(files: Sequence[FileChange], title: str, body: str, changes: Iterable[Change]) -> dict[str, int]:
    """Path → how strongly the PR points at it: 2 per code fact read in the file, 1 when the title or description
    names the file (its name or its stem) or a symbol a fact found in it."""
    score: dict[str, int] = {}
    prose = _words(f"{title}\n{body[:8000]}")
    symbols: dict[str, set[str]] = {}
    for c in changes:
        if c.kind == "tests":
            continue
        score[c.path] = score.get(c.path, 0) + 2
        symbols.setdefault(c.path, set()).update(p.lower() for p in re.split(r"[.:]", c.symbol) if len(p) > 3)
    for f in files:
        name = f.path.rsplit("/", 1)[-1]
        stem = name.split(".", 1)[0].lower()
        named = (stem not in _COMMON and stem in prose) or name.lower() in title.lower() \
            or bool(symbols.get(f.path, set()) & prose)
        if named:
            score[f.path] = score.get(f.path, 0) + 1
    return score


def ranked(files: Sequence[FileChange], title: str = "", body: str = "", changes: Sequence[Change] = ()
           ) -> list[FileChange]:
    """``files``, most telling first: by tier (code first), then how strongly the title, description and facts point
    at each, then changed lines, then path."""
    points = pointed(files, title, body, changes)
    return sorted(files, key=lambda f: (tier(f.path), -min(points.get(f.path, 0), 3),
                                        -(f.additions + f.deletions), f.path))


def ranked_files(pr: PullRequest, changes: Sequence[Change] = ()) -> list[FileChange]:
    """The PR's files, most telling first (:func:`ranked`), pointed at by its own title, description and facts."""
    return ranked(pr.files, pr.title, pr.body, changes or pr.changes)
