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
_INLINE = re.compile(r"^(\s*)([A-Za-z][\w-]*?)_versions?\s*:\s*\[([^\]\n]*)\]", re.MULTILINE)
_BLOCK = re.compile(r"^(\s*)([A-Za-z][\w-]*?)_versions?\s*:\s*$", re.MULTILINE)
_DEFAULT = re.compile(r"^\s*default\s*:\s*[\"']?(v?\d+(?:\.\d+)+[\w.+-]*)[\"']?\s*$")
_RELEASE = re.compile(r"v?\d+(?:\.\d+)+[\w.+-]*")
#: Lines under a block key read for its default at most.
_MAX_BLOCK = 12


def is_workflow(path: str) -> bool:
    return bool(_WORKFLOW.search(path))


def releases(text: str | None) -> set[tuple[str, str]]:
    """(package key, release) for each release a workflow file tests (``v0.17.0`` is ``0.17.0``)."""
    found: set[tuple[str, str]] = set()
    if not text:
        return found
    for match in _INLINE.finditer(text):
        for item in match[3].split(","):
            value = item.strip().strip("\"'")
            if _RELEASE.fullmatch(value):
                found.add((key(match[2]), value.removeprefix("v")))
    lines = text.splitlines()
    for match in _BLOCK.finditer(text):
        at, indent = text.count("\n", 0, match.start()), len(match[1])
        for line in lines[at + 1:at + 1 + _MAX_BLOCK]:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break  # the key's block ended
            default = _DEFAULT.match(line)
            if default:
                found.add((key(match[2]), default[1].removeprefix("v")))
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
