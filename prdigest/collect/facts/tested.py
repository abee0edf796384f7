"""The releases of a package a repository's CI tests main against, read from its workflow files: a matrix list
(``vllm_version: [8b63257…, v0.17.0]``) or an input's default (``vllm_version:`` … ``default: "v0.17.0"``) under a
key named ``<package>_version``. Commits are no release and are left out. A release the CI of a PR stops testing,
with the version gates on it the PR removes, is support dropped even where a forgotten gate is left
(prdigest/collect/facts/versiongates.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from prdigest.collect.facts.pinned import key

_WORKFLOW = re.compile(r"(^|/)\.github/workflows/[^/]+\.ya?ml$")
_KEY = re.compile(r"^([ \t]*)(?:-[ \t]*)?([A-Za-z][\w-]*?)_versions?[ \t]*:[ \t]*(.*)$")
_INLINE = re.compile(r"^\[([^\]]*)\]")
_DEFAULT = re.compile(r"^[ \t]*default[ \t]*:[ \t]*[\"']?(v?\d+(?:\.\d+)+[\w.+-]*)[\"']?[ \t]*$")
_RELEASE = re.compile(r"v?\d+(?:\.\d+)+[\w.+-]*")
#: Lines under a block key read for its default at most.
_MAX_BLOCK = 12


def is_workflow(path: str) -> bool:
    return bool(_WORKFLOW.search(path))


def releases(text: str | None) -> set[tuple[str, str]]:
    """(package key, release) for each release a workflow file tests (``v0.17.0`` is ``0.17.0``); one pass over
    its lines, each block key reading at most a few lines below it."""
    found: set[tuple[str, str]] = set()
    lines = (text or "").splitlines()
    for at, line in enumerate(lines):
        match = _KEY.match(line)
        if not match:
            continue
        package, rest = key(match[2]), match[3].strip()
        inline = _INLINE.match(rest)
        if inline:
            found |= {(package, v.removeprefix("v")) for v in (i.strip().strip("\"'") for i in inline[1].split(","))
                      if _RELEASE.fullmatch(v)}
        elif not rest:  # a block: its ``default:`` is the release an input tests when none is given
            for below in lines[at + 1:at + 1 + _MAX_BLOCK]:
                if below.strip() and len(below) - len(below.lstrip()) <= len(match[1]):
                    break  # the key's block ended
                default = _DEFAULT.match(below)
                if default:
                    found.add((package, default[1].removeprefix("v")))
                    break
    return found


def untested(files: Iterable[tuple[str, str | None, str | None]]) -> set[tuple[str, str]]:
    """(package key, release) the commit's workflow files tested before and no longer test: ``files`` are
    (path, text before, text after)."""
    before: set[tuple[str, str]] = set()
    after: set[tuple[str, str]] = set()
    for path, old, new in files:
        if is_workflow(path):
            before |= releases(old)
            after |= releases(new)
    return before - after
