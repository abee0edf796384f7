"""Installers the user docs tell readers to download and run: a vendor's ``.run`` package whose file name holds its
version (``Ascend-BiSheng-toolkit_$(uname -i)_20260105.run``, ``Ascend-cann-toolkit_8.5.0_linux-"$(uname -i)".run``)
is a toolchain a reader installs by hand, so a version the page moves is one they must install, like a pin of an
install command (prdigest/collect/facts/docpins.py). Each moved installer is a ``dependency`` fact (detail
:data:`~prdigest.kernel.actions.INSTALLER`),
its reach public where the page is a user doc (prdigest/collect/facts/reach.py).

A page catching up with what the repository already installs asks nothing: when the tree before the PR already
pinned that version of the product in its Dockerfiles or requirement files (the images moved to CANN ``8.5.0`` in the
morning, the install guide's toolkit in the evening), the upgrade was asked when that pin moved
(:func:`caught_up`, with a clone).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.collect.facts import docpins, pinned
from prdigest.collect.facts.reach import runtime_pin_file
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.kernel.actions import CAUGHT_UP, INSTALLER, version_of
from prdigest.kernel.models import Change

#: A shell substitution inside a file name (``$(uname -i)``, ``${ARCH}``): no part of the product or its version.
_SUBSTITUTION = re.compile(r"\$\([^)\n]*\)|\$\{[^}\n]*\}")
#: A ``.run`` file name: the product up to the first ``_``, then its ``_``-separated fields (one of them the version).
_INSTALLER = re.compile(r"(?<![\w.+%-])([A-Za-z][A-Za-z0-9+-]*)_([\w.+-]*?)\.run(?![\w(.])")
#: A field that is a version: release numbers (``8.5.0``, ``20260105``), a stage (``8.3.RC2``, ``9.1.0-beta.1``).
_VERSION = re.compile(r"v?\d+(?:\.[0-9A-Za-z]+)*(?:-(?:alpha|beta|rc|dev|post|pre)\.?\d*)?", re.IGNORECASE)


def installers(text: str | None) -> dict[str, str]:
    """Installer product (as written) → ``==version`` for each versioned ``.run`` file ``text`` names (the first)."""
    found: dict[str, str] = {}
    for line in (text or "").splitlines():
        if ".run" not in line:
            continue
        line = _SUBSTITUTION.sub("", line).replace('"', "").replace("'", "")
        for name, fields in _INSTALLER.findall(line):
            version = next((f for f in fields.split("_") if _VERSION.fullmatch(f)), "")
            if version:
                found.setdefault(name, f"=={version}")
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One ``dependency`` fact per installer whose version a page of the docs moved (one only added or only
    dropped is a new or an old install route, not something that moved under a reader)."""
    if not docpins.is_doc(path):
        return []
    old, new = installers(before), installers(after)
    return [Change(kind="dependency", symbol=name, path=path, line=_line(after, name), before=old[name],
                   after=new[name], detail=INSTALLER, language="text")
            for name in sorted(old.keys() & new.keys()) if old[name] != new[name]]


def _line(text: str | None, name: str) -> int:
    for number, line in enumerate((text or "").splitlines(), 1):
        if f"{name}_" in line:
            return number
    return 0


def _keys(c: Change) -> set[str]:
    """What a docs pin may be pinned as elsewhere: its name; an installer also by one of its words
    (``Ascend-cann-toolkit`` is the ``cann`` image's toolkit; a pip package is matched by its name alone: ``triton``
    is not ``triton-ascend``)."""
    if c.detail != INSTALLER:
        return {pinned.key(c.symbol)}
    words = {w for w in re.split(r"[-_.+]+", c.symbol.lower()) if len(w) >= 3 and not w.isdigit()}
    return {pinned.key(c.symbol), *words}


def caught_up(facts: Sequence[Change], parent: str | None, clone: UpstreamClone) -> list[Change]:
    """``facts`` where each docs installer or install-command pin moved to a version the tree at ``parent`` already
    pinned for that product (in the requirement files, ``pyproject.toml``, ``setup.py`` or Dockerfiles users install
    with; a CI image moving first is no upgrade anyone was told of) is marked
    :data:`CAUGHT_UP` (it asks nothing: that pin's move asked it); the facts stand when the tree cannot be read."""
    docs = [c for c in facts if c.kind == "dependency" and c.reach == "public" and c.detail in ("changed", INSTALLER)
            and docpins.is_doc(c.path) and version_of(c.after)]
    if not docs or not parent:
        return list(facts)
    wanted = set().union(*(_keys(c) for c in docs))
    try:
        had = pinned.releases(clone, parent, wanted, where=runtime_pin_file)  # a CI image is no user's
    except GitUnavailable:
        return list(facts)
    done = {id(c) for c in docs
            if any(version_of(c.after).removeprefix("v") in had.get(k, set()) for k in _keys(c))}
    return [c.model_copy(update={"detail": CAUGHT_UP}) if id(c) in done else c for c in facts]
