"""Areas every repository has whatever it calls them (docs, CI and build, dependencies, benchmarks, tests),
proposed only when the repository's own labels do not already cover their files."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.classify.proposal.named_areas import Area
from prdigest.kernel.vocabulary import FileKind


@dataclass(frozen=True)
class Kind:
    """A kind of file with a conventional subsystem name and label."""

    name: str
    shown: str
    paths: tuple[str, ...]
    #: The drafter's file kind this subsystem stands for (``Drafting.file_kinds``), if any.
    file_kinds: tuple[FileKind, ...] = ()


KINDS = (
    Kind("docs", "Docs", (r"^docs?/", r"\.(md|rst|mdx)$", r"(^|/)examples?/"), ("doc",)),
    Kind("ci-build", "CI and build", (r"^\.github/", r"^\.buildkite/", r"^\.circleci/", r"^\.gitlab-ci",
                                       r"(^|/)Dockerfile", r"^docker/", r"(^|/)CMakeLists\.txt$", r"^cmake/",
                                       r"^Makefile$", r"^\.pre-commit-config\.yaml$", r"^(setup\.py|setup\.cfg|"
                                       r"MANIFEST\.in|build\.rs|tox\.ini|noxfile\.py)$", r"^(scripts|tools)/"),
         ("ci", "build")),
    Kind("deps", "Dependencies", (r"^requirements", r"(^|/)requirements[^/]*\.(txt|in)$", r"^pyproject\.toml$",
                                  r"(^|/)(uv|poetry|Cargo|yarn|pnpm-lock|Gemfile)\.lock$",
                                  r"(^|/)package(-lock)?\.json$",
                                  r"(^|/)Cargo\.toml$", r"(^|/)go\.(mod|sum)$"), ("dependency",)),
    Kind("benchmarks", "Benchmarks", (r"^benchmarks?/",), ("bench",)),
    Kind("tests", "Tests", (r"(^|/)(tests?|testing|__tests__)/", r"(^|/)test_[^/]*\.py$", r"_test\.(go|py|rs)$",
                            r"\.(test|spec)\.[cm]?[jt]sx?$")),
)


def kind_area(kind: Kind, files: list[str], covered_share: float) -> Area | None:
    """``kind`` as an area when the tree has such files and the labels cover under half of them."""
    patterns = [re.compile(p) for p in kind.paths]
    mine = [f for f in files if any(p.search(f) for p in patterns)]
    if files and not mine:
        return None
    if covered_share >= 0.5:
        return None
    note = (f"{len(mine)} file(s) of this kind and no label for them" if files
            else "a conventional area (no tree was read)")
    return Area(written=kind.shown, origin="kind", paths=list(kind.paths), notes=[note])
