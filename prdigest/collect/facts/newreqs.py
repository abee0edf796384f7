"""A runtime requirement a PR adds asks a reader to install something only when the repository installed that
package before at a version the new requirement no longer allows.

A package no requirement file and no install command of the docs named before the PR (``arctic-inference==0.1.1``
first listed in ``requirements.txt``) comes with the package: ``pip install`` pulls it in, and an environment
updated with ``pip install -e .`` gets it too, so nothing is asked (so is one listed before at the version it now
requires: moved from ``requirements-dev.txt`` at the same pin). One the repository already installed at a lower
pin or with none (``xgrammar`` listed bare in ``requirements-dev.txt``, now ``xgrammar>=0.1.30``; ``triton-ascend``
pinned to a dev build in a tutorial, now ``==3.2.0``) is an upgrade readers keep missing: environments hold the old
one. So is a package no requirement named but the shipped code already imported (``transformers==5.5.3`` added to
a plugin whose models import ``transformers``): another route installed it (the upstream's own requirements), at
whatever version that route chose, and the new pin moves it. Fitted on the labels of twelve vllm-ascend weeks and
four tpu-inference weeks (BENCHMARKS.md, "Action required on the labelled weeks").
The tree at the PR's parent is read only when the commit adds a runtime requirement with a version.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from prdigest.collect.facts import docpins, pins, reach_imports
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.actions import NEW_REQUIREMENT, release_key, version_of
from prdigest.kernel.models import Change


def _added(c: Change) -> bool:
    return (c.kind == "dependency" and c.detail == "added" and c.reach == "public" and not c.before
            and pins.is_pin_file(c.path) and bool(version_of(c.after)))


def _named(path: str) -> Callable[[str], bool]:
    return lambda p: p.rpartition("/")[2] == path


def installed_before(facts: Sequence[Change], parent: str | None, clone: UpstreamClone,
                     surface: Surface) -> list[Change]:
    """``facts`` where each runtime requirement added that the tree at ``parent`` never installed at a lower or
    unbounded version, nor imported from a shipped module, is marked :data:`NEW_REQUIREMENT` (it asks nothing); the
    facts stand when the tree cannot be read."""
    wanted = {c.symbol for c in facts if _added(c)}
    if not wanted or not parent:
        return list(facts)
    before: dict[str, list[str]] = {}
    try:
        for kind, keep in (("requirements.txt", lambda p: pins.is_pin_file(p) and p.endswith(".txt")),
                           ("pyproject.toml", _named("pyproject.toml")), ("doc", docpins.is_doc)):
            for text, _ in tree_texts(clone, parent, keep).values():
                found = docpins.pins(text) if kind == "doc" else pins.pins(kind, text)
                for name in wanted & found.keys():
                    before.setdefault(name, []).append(found[name])
        new = {c.symbol for c in facts if _added(c) and not _older(before.get(c.symbol, []), version_of(c.after))}
        where = reach_imports.importers(new, parent, clone, surface)
    except GitUnavailable:
        return list(facts)
    return [_marked(c, new, where) if _added(c) else c for c in facts]


def _marked(c: Change, new: set[str], where: dict[str, str]) -> Change:
    """A requirement added: new (it asks nothing), or installed before by another route (it asks), or as it was."""
    if c.symbol in where:
        return c.model_copy(update={"reach_how": f"{c.reach_how}; installed before by another route: the shipped "
                                                 f"`{where[c.symbol]}` imported it"})
    return c.model_copy(update={"detail": NEW_REQUIREMENT}) if c.symbol in new else c


def _older(specs: list[str], new: str) -> bool:
    """Whether a spec the repository installed before allows a version below ``new`` (one with no version does)."""
    return any(not version_of(spec) or release_key(version_of(spec)) < release_key(new)
               for spec in (s for spec in specs for s in spec.split(" | ")))
