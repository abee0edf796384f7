"""Releases of an upstream a PR stops supporting: version gates (``if vllm_version_is("0.15.0"):``) it removes from
shipped Python code, when no shipped module of the tree at its merge commit still gates on that release. Each is a
``dependency`` fact with detail ``support dropped``, the package as symbol and the release as ``before``: main no
longer works with that release, which is an upgrade its users must make (prdigest/kernel/actions.py). Not when the
release is older than every release main pinned the package to before the PR (prdigest/collect/facts/pinned.py):
removing the gates of a release main no longer installed is a clean-up, not something a reader must do. A gate
forgotten in some module does not keep a release supported when the PR's CI stops testing it (tested.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from prdigest.collect.facts import pinned
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.models import Change

#: A call asking whether the installed upstream is one release: ``vllm_version_is("0.15.0")``.
_GATE = re.compile(r"\b([A-Za-z]\w*?)_version_is\(\s*[\"'](v?\d+(?:\.\d+)+[\w.+-]*)[\"']\s*\)")
DETAIL = "support dropped"


def gates(text: str | None) -> set[tuple[str, str]]:
    """(package, release) for each version gate ``text`` has."""
    return {(m[1], m[2].removeprefix("v")) for m in _GATE.finditer(text or "")}  # "v0.15.0" is "0.15.0"


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """A fact for each release whose gates the file had and has no more (the tree is asked later: still_gated)."""
    return [Change(kind="dependency", symbol=name, path=path, before=release, after="", detail=DETAIL,
                   language="text") for name, release in sorted(gates(before) - gates(after))]


def still_gated(facts: Sequence[Change], sha: str, clone: UpstreamClone, surface: Surface,
                parent: str | None = None, untested: Collection[tuple[str, str]] = ()) -> list[Change]:
    """``facts`` without a dropped release some shipped module of the tree at ``sha`` still gates on (one file's
    gate went, the release is still supported) unless the PR's CI also stopped testing it (``untested``: package
    key and release, prdigest/collect/facts/tested.py; a gate left behind is then dead code), nor one older than
    every release the tree at ``parent`` pins the package to (main had moved past it: its gates were dead code,
    and the upgrade was asked when the pin moved); all such facts go when the tree cannot be read."""
    dropped = {(c.symbol, c.before) for c in facts if c.kind == "dependency" and c.detail == DETAIL}
    if not dropped:
        return list(facts)
    try:
        texts = tree_texts(clone, sha, lambda path: path.endswith(".py") and not surface.is_test(path))
        installed = pinned.releases(clone, parent, {pinned.key(n) for n, _ in dropped}) if parent else {}
    except GitUnavailable:
        left = dropped  # nothing shows the release is gone everywhere: claim nothing
    else:
        left = {(n, r) for n, r in dropped if pinned.older(r, installed.get(pinned.key(n), set()))}
        for text, _ in texts.values():
            left |= {(n, r) for n, r in gates(text) & dropped if (pinned.key(n), r) not in untested}
    return [c for c in facts if not (c.kind == "dependency" and c.detail == DETAIL and (c.symbol, c.before) in left)]
