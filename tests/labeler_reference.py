"""An independent reference of what actions/labeler v5 does, to label fixture PRs and to check the proposal.

It shares no code with ``prdigest.classify.proposal``: minimatch (``dot: true``) is matched segment by segment
with :func:`fnmatch.fnmatchcase` (a segment has no ``/``, so fnmatch's ``*`` cannot cross one) and ``**``
by recursion; braces are expanded first. The match-object semantics follow actions/labeler v5: at the
top level and under ``any:`` one match object suffices and the options inside one ``changed-files`` are
alternatives; under ``all:`` every object and every option must hold.
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase
from typing import Any


def _braces(pattern: str) -> list[str]:
    m = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not m:
        return [pattern]
    return [x for option in m.group(1).split(",") for x in _braces(pattern[:m.start()] + option + pattern[m.end():])]


def _segments(pattern: list[str], path: list[str]) -> bool:
    if not pattern:
        return not path
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_segments(rest, path[i:]) for i in range(len(path) + 1))
    return bool(path) and fnmatchcase(path[0], head) and _segments(rest, path[1:])


def minimatch(path: str, pattern: str) -> bool:
    """``path`` matches ``pattern`` as minimatch with ``dot: true`` (a leading ``!`` negates)."""
    negated = False
    while pattern.startswith("!"):
        negated, pattern = not negated, pattern[1:]
    hit = any(_segments(p.split("/"), path.split("/")) for p in _braces(pattern))
    return hit != negated


def _glob_list(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _option(mode: str, globs: list[str], files: list[str]) -> bool:
    if not files:
        return False
    if mode == "any-glob-to-any-file":
        return any(minimatch(f, g) for g in globs for f in files)
    if mode == "any-glob-to-all-files":
        return all(any(minimatch(f, g) for g in globs) for f in files)
    if mode == "all-globs-to-any-file":
        return any(all(minimatch(f, g) for g in globs) for f in files)
    if mode == "all-globs-to-all-files":
        return all(all(minimatch(f, g) for g in globs) for f in files)
    raise ValueError(mode)


def _object(obj: dict[str, Any], files: list[str], branch: str, every: bool) -> bool:
    results = []
    for key, value in obj.items():
        if key == "changed-files":
            options = [(mode, _glob_list(globs)) for option in value for mode, globs in option.items()]
            checks = [_option(mode, globs, files) for mode, globs in options]
            results.append(all(checks) if every else any(checks))
        elif key == "head-branch":
            results.append(any(re.search(p, branch) for p in _glob_list(value)))
        elif key == "base-branch":
            results.append(False)
        elif key == "any":
            results.append(any(_object(o, files, branch, False) for o in value))
        elif key == "all":
            results.append(all(_object(o, files, branch, True) for o in value))
    return all(results) if every else any(results)


def labels_for(config: dict[str, list[dict[str, Any]]], files: list[str], branch: str = "main") -> list[str]:
    """The labels actions/labeler v5 adds for a PR changing ``files`` from ``branch``."""
    return [label for label, objects in config.items() if any(_object(o, files, branch, False) for o in objects)]
