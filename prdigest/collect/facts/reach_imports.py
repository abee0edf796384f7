"""A development requirement the shipped code imports is a runtime one: the optional backend a feature loads
(``xlite==0.1.0rc1`` in ``requirements-dev.txt``, ``from xlite._C import Runtime`` in ``plugin/xlite/runner.py``).

Repositories pin such a backend beside their test tools because only CI installs it by default, but a reader who
turns the feature on installs it too, at the version main now expects: its pin moving is an upgrade they must
follow. A test tool (``pytest``) that no shipped module imports stays internal (prdigest/collect/facts/reach.py).
A pin first given (``xlite`` listed bare, now ``xlite==0.1.0rc0``) asks nothing: labellers asked for none (vllm-ascend
2026-W02 #5612), and a requirement added asks nothing when pip brings it (prdigest/collect/facts/newreqs.py).
The tree at the merge commit is read only when the commit moves a development pin.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.diff import blob_texts
from prdigest.kernel.actions import version_of
from prdigest.kernel.models import Change

_IMPORT = "^[ \t]*(?:from|import)[ \t]+{name}(?:[ \t.,]|$)"


def import_names(package: str) -> set[str]:
    """The module names a distribution is imported as, by its own name (``triton-ascend`` → ``triton_ascend``)."""
    return {re.sub(r"[-.]+", "_", package).lower()}


def _development(c: Change) -> bool:
    # a pin moving from a version: one first given to a requirement listed bare (``xlite`` → ``xlite==0.1.0rc0``)
    # or added is what CI installed already, and no reader of the feature was asked a version before either
    return (c.kind == "dependency" and c.reach == "internal" and c.reach_how.startswith("a development")
            and bool(c.after) and bool(version_of(c.before)))


def importers(packages: Iterable[str], sha: str, clone: UpstreamClone, surface: Surface) -> dict[str, str]:
    """Package → the first shipped module (by path) of the tree at ``sha`` importing it, for those of ``packages``
    any shipped module imports; raises :class:`GitUnavailable` when the tree cannot be read."""
    wanted = {package: import_names(package) for package in packages}
    if not wanted:
        return {}
    listing = clone.run(["ls-tree", "-r", "--full-tree", sha], what="ls-tree").decode("utf-8", "replace")
    paths: dict[str, str] = {}
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and path.endswith(".py") and surface.is_api(path) \
                and not surface.is_test(path):
            paths[parts[2]] = path
    if clone.partial:
        clone.fetch_blobs(paths)
    texts = blob_texts(clone, set(paths))
    patterns = {package: re.compile("|".join(_IMPORT.format(name=re.escape(n)) for n in names), re.MULTILINE)
                for package, names in wanted.items()}
    where: dict[str, str] = {}
    for oid, path in sorted(paths.items(), key=lambda item: item[1]):
        text = (texts.get(oid) or (None, ""))[0] or ""
        for package, pattern in patterns.items():
            if package not in where and pattern.search(text):
                where[package] = path
    return where


def imported(facts: Sequence[Change], sha: str, clone: UpstreamClone, surface: Surface) -> list[Change]:
    """``facts`` (with their reach) where each development pin a shipped module of the tree at ``sha`` imports is
    public, saying which module imports it; the facts stand when the tree cannot be read."""
    wanted = {c.symbol for c in facts if _development(c)}
    if not wanted:
        return list(facts)
    try:
        where = importers(wanted, sha, clone, surface)
    except GitUnavailable:
        return list(facts)
    return [c.model_copy(update={"reach": "public", "reach_how": f"a runtime requirement of the feature that "
                                 f"imports it (`{where[c.symbol]}`), pinned in `{c.path}`"})
            if _development(c) and c.symbol in where else c for c in facts]
