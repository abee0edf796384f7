"""Which subsystems' path rules take a path, every rule of the file in one pass.

A week of 1,000 PRs with ~2,600 files asked 24 subsystems' path patterns one by one: ~220,000 searches, each
through RE2's Python wrapper. Here every pattern RE2 runs with Python's meaning is one RE2 set, matched once
per path; the few that need Python's engine (lookarounds) run one by one, and only when they could change the
answer. A path seen before (the same file in several PRs, a PR classified again) is answered from a cache.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from prdigest.kernel.patterns import Pattern, compile_rule, re2_form

#: Paths remembered per classifier (a path and a small set each): far above a week's distinct files.
CACHE_SIZE = 65_536


class PathMatcher:
    """The subsystems (by index) whose ``paths`` take a path and whose ``exclude_paths`` do not."""

    def __init__(self, rules: Sequence[tuple[Sequence[str], Sequence[str]]]) -> None:
        options = re2.Options()
        options.log_errors = False
        self._set = re2.Set.SearchSet(options)
        #: Per pattern of the set: its subsystem and whether it excludes.
        self._owners: list[tuple[int, bool]] = []
        #: Patterns on Python's engine: subsystem, excludes, pattern.
        self._python: list[tuple[int, bool, Pattern]] = []
        for index, (paths, excludes) in enumerate(rules):
            for pattern, excluding in [*((p, False) for p in paths), *((p, True) for p in excludes)]:
                form = re2_form(pattern)
                if form is not None:
                    self._set.Add(form)
                    self._owners.append((index, excluding))
                else:
                    self._python.append((index, excluding, compile_rule(pattern)))
        self._compiled = bool(self._owners)
        if self._compiled:
            self._set.Compile()
        self._cache: dict[str, frozenset[int]] = {}

    def matching(self, path: str) -> frozenset[int]:
        """The indices of the subsystems whose path rules take ``path``."""
        found = self._cache.get(path)
        if found is not None:
            return found
        taken: set[int] = set()
        excluded: set[int] = set()
        for hit in (self._set.Match(path) or ()) if self._compiled else ():
            index, excluding = self._owners[hit]
            (excluded if excluding else taken).add(index)
        for index, excluding, pattern in self._python:
            # an include only matters for a subsystem not taken yet; an exclude only for one taken
            if excluding != (index in taken) or index in excluded:
                continue
            if pattern.search(path):
                (excluded if excluding else taken).add(index)
        found = frozenset(taken - excluded)
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[path] = found
        return found
