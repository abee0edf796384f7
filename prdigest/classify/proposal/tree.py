"""The repository's tree as evidence: which folders hold its code, and which of them no label covers.

A folder that holds a good share of the source lines and that no label, mergify rule or CODEOWNERS
section recognises becomes a proposed subsystem of its own (``attention/``, ``worker/``); a folder that
holds too much (the package itself) is split into its children, and what is left directly in it becomes
one ``<folder>-core`` area. Tests and examples never become areas: they follow the code they exercise.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from prdigest.classify.proposal.named_areas import Area, name_slug

SOURCE_SUFFIXES = frozenset(
    "py pyx pxd pyi rs go c cc cpp cxx h hh hpp cu cuh js jsx ts tsx mjs vue svelte java kt scala rb swift m mm cs "
    "php lua zig jl r ml hs ex exs erl clj dart sol proto sql sh".split())
#: Paths that follow the code they exercise: a PR changing only these is classified by them.
INCIDENTAL = (r"(^|/)(tests?|testing|__tests__|examples?)/", r"(^|/)test_[^/]*\.py$", r"_test\.(go|py|rs)$",
              r"\.(test|spec)\.[cm]?[jt]sx?$")
_INCIDENTAL = tuple(re.compile(p) for p in INCIDENTAL)
#: Folders that only hold other folders' code (descended into, never proposed themselves).
CONTAINERS = frozenset({"src", "lib", "libs", "pkg", "python", "packages", "crates", "internal", "cmd", "apps"})
#: Top-level folders with a kind of their own (docs, CI, tooling), left to
#: :mod:`prdigest.classify.proposal.common_areas`.
NOT_CODE = re.compile(r"^(\.[^/]+|docs?|site|benchmarks?|scripts|tools|third_party|vendor|cmake|docker)(/|$)")

MAX_SHARE = 0.25
MIN_SHARE = 0.03
MIN_FILES = 3
MAX_DEPTH = 5
MAX_AREAS = 16


@dataclass(frozen=True)
class TreeFile:
    """One file of the tree and its size in lines (estimated from bytes when read through the API)."""

    path: str
    lines: int


def is_incidental(path: str) -> bool:
    """Whether ``path`` is a test or an example."""
    return any(p.search(path) for p in _INCIDENTAL)


def is_source(path: str) -> bool:
    """Whether ``path`` is code that a subsystem could own (not tests, docs, CI or tooling)."""
    suffix = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return suffix in SOURCE_SUFFIXES and not is_incidental(path) and not NOT_CODE.match(path)


def _folder_weights(files: Iterable[TreeFile]) -> tuple[dict[str, int], dict[str, int]]:
    weights: dict[str, int] = {}
    counts: dict[str, int] = {}
    for f in files:
        parts = f.path.split("/")[:-1]
        for depth in range(len(parts) + 1):
            folder = "/".join(parts[:depth])
            weights[folder] = weights.get(folder, 0) + max(f.lines, 1)
            counts[folder] = counts.get(folder, 0) + 1
    return weights, counts


def folder_areas(files: list[TreeFile], covered: Callable[[str], bool]) -> list[Area]:
    """Proposed areas for the source folders that ``covered`` (the label rules) leaves out.

    A folder becomes an area as a whole only when nothing under it is covered; a folder that mixes
    covered and loose code, holds too much, or only contains others is split, and what is loose directly
    in it (files, folders too small on their own) becomes one ``(the rest)`` area.
    """
    source = [f for f in files if is_source(f.path)]
    total = sum(max(f.lines, 1) for f in source)
    covered_paths = {f.path for f in source if covered(f.path)}
    loose = [f for f in source if f.path not in covered_paths]
    if not total or not loose:
        return []
    direct: dict[str, list[TreeFile]] = {}
    for f in source:
        direct.setdefault(f.path.rsplit("/", 1)[0] if "/" in f.path else "", []).append(f)
    weights, counts = _folder_weights(loose)
    everything, _ = _folder_weights(source)
    children: dict[str, list[str]] = {}
    for folder in weights:
        if folder:
            parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
            children.setdefault(parent, []).append(folder)
    found: list[_Found] = []

    def big_enough(folder: str) -> bool:
        return weights[folder] >= MIN_SHARE * total and counts[folder] >= MIN_FILES

    def visit(folder: str, depth: int) -> None:
        name = folder.rsplit("/", 1)[-1]
        kids = sorted(children.get(folder, []), key=lambda c: -weights[c])
        mixed = everything[folder] != weights[folder]
        # A big folder is split only into children big enough to stand alone.
        too_big = weights[folder] > MAX_SHARE * total and any(big_enough(k) for k in kids)
        if not (folder == "" or name in CONTAINERS or mixed or too_big):
            if big_enough(folder):
                found.append(_Found(folder, weights[folder], ()))
            return
        if depth >= MAX_DEPTH:
            return
        for kid in kids:
            visit(kid, depth + 1)
        if not folder:
            return
        taken = {f.folder for f in found}
        small = tuple(k for k in kids if k not in taken and everything[k] == weights[k]
                      and not any(t.startswith(k + "/") for t in taken))
        here = direct.get(folder, [])
        left = sum(max(f.lines, 1) for f in here if f.path not in covered_paths) + sum(weights[k] for k in small)
        if left >= MIN_SHARE * total:
            mine = [f.path for f in here if f.path in covered_paths]
            alone = not any(t.startswith(folder + "/") for t in taken)
            found.append(_Found(folder, left, small, tuple(mine), rest=True, alone=alone))

    visit("", 0)
    found.sort(key=lambda x: -x.weight)
    return [_area(f, total) for f in found[:MAX_AREAS]]


@dataclass(frozen=True)
class _Found:
    folder: str
    weight: int
    #: For the rest of a split folder: its loose subfolders too small to be areas, and its covered files.
    small: tuple[str, ...]
    covered_files: tuple[str, ...] = ()
    rest: bool = False
    #: No folder under it was proposed: the rest is the folder, named after it.
    alone: bool = False


def _area(found: _Found, total: int) -> Area:
    folder, share = found.folder, f"{found.weight / total:.0%} of the source lines"
    escaped = re.escape(folder)
    if not found.rest:
        return Area(written=folder + "/", origin="tree", paths=[f"^{escaped}/"],
                    notes=[f"folder {folder}/ holds {share} and no label covers it: name it as its team does"])
    paths = [f"^{escaped}/[^/]+$"]
    if found.small:
        names = "|".join(re.escape(s.rsplit("/", 1)[-1]) for s in found.small)
        paths.append(f"^{escaped}/(?:{names})/")
    written = f"{folder}/" if found.alone else f"{folder}/ (the rest)"
    area = Area(written=written, origin="tree", paths=paths,
                notes=[f"what {folder}/ holds outside the other subsystems ({share}): split or rename it"])
    if found.covered_files:
        area.exclude_paths.append("^(?:" + "|".join(re.escape(p) for p in found.covered_files) + ")$")
    return area


def area_name(area: Area) -> str:
    """A tree area's name: its last folder (``vllm/v1/worker/`` → ``worker``), ``-core`` for the rest."""
    folder = area.written.split(" ")[0].rstrip("/")
    last = name_slug(folder.rsplit("/", 1)[-1])
    return f"{last}-core" if area.written.endswith("(the rest)") else last
