"""Pins in the install commands of the user docs: ``pip install triton-ascend==3.2.0`` in a tutorial or an install
guide is what readers copy, so a version it moves (``3.2.0.dev20260105`` → ``3.2.0``) is one they must install.

Only the user docs count (``docs/``, READMEs; not the contributor docs: a developer guide's lint tools are no
runtime), and only a package the doc pinned before and still pins: a doc adding a new install route asks nothing
of a reader already installed. A CI workflow's install step is the CI's own environment, which readers do not
copy (its commit pins of the upstream are facts, not actions: docs/action-required.md). Each moved pin is a
``dependency`` fact (``changed``), its reach public (prdigest/collect/facts/reach.py).
"""

from __future__ import annotations

import re

from prdigest.kernel.models import Change

_DOCS = re.compile(r"^(docs?|examples?)/.+\.(md|rst)$|(^|/)README[^/]*\.(md|rst)$", re.IGNORECASE)
#: ``pip install``, ``pip3 install``, ``python3 -m pip install``, ``uv pip install`` up to the end of the command.
_COMMAND = re.compile(r"\bpip3?\s+install\b([^\n`&;|]*)")
#: A name then ``==`` and a version (placeholders such as ``|version|`` or ``${V}`` are no version).
_PIN = re.compile(r"(?<![\w.=/-])[\"']?([A-Za-z0-9][A-Za-z0-9._-]*)==([0-9][\w.+-]*)")
#: A wheel file installed by name or URL (``triton_ascend-3.2.0.dev20251229-cp311-cp311-….whl``): the distribution,
#: its version, an optional build number, then a Python tag (the platform tag may hold ``$(uname -i)``, so the name
#: is read up to the Python tag, not to ``.whl``).
_WHEEL = re.compile(r"(?<![\w.+-])([A-Za-z0-9][A-Za-z0-9_.]*)-([0-9][A-Za-z0-9_.+!]*)-(?:[0-9]\w*-)?"
                    r"(?:py|cp|pp|ip|jy)[0-9]")


def is_doc(path: str) -> bool:
    """Whether ``path`` is a page of the docs or a README (translations say the same again: not read)."""
    return bool(_DOCS.search(path)) and not path.endswith(".po") and "/locale/" not in path


def pins(text: str | None) -> dict[str, str]:
    """Package (named as requirement files are read: ``torch_npu`` is ``torch-npu``) → ``==version`` for each pin
    or wheel file an install command of ``text`` gives (the first one)."""
    found: dict[str, str] = {}
    for command in _COMMAND.finditer((text or "").replace("\\\n", " ")):
        wheels = _WHEEL.findall(command[1]) if ".whl" in command[1] else []
        for name, version in [*_PIN.findall(command[1]), *wheels]:
            found.setdefault(re.sub(r"[-_.]+", "-", name).lower(), f"=={version.rstrip('.,')}")
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One ``dependency`` fact per package whose pinned version an install command of the doc moved."""
    old, new = pins(before), pins(after)
    return [Change(kind="dependency", symbol=name, path=path, line=_line(after, name), before=old[name],
                   after=new[name], detail="changed", language="text")
            for name in sorted(old.keys() & new.keys()) if old[name] != new[name]]


def _line(text: str | None, name: str) -> int:
    pattern = re.compile(re.escape(name).replace("\\-", "[-_.]") + "==", re.IGNORECASE)
    for number, line in enumerate((text or "").splitlines(), 1):
        if pattern.search(line):
            return number
    return 0
