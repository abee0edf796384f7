"""System packages an image installs: the names a Dockerfile's ``RUN`` line gives ``apt-get install``, ``apt
install``, ``yum install``, ``dnf install``, ``zypper install`` or ``apk add``. A package an existing image now
installs (``clang-15`` for triton-ascend's kernels) is one a reader installing outside the images must add too:
a ``dependency`` fact with detail :data:`SYSTEM` (``after`` the package). One dropped asks nothing, and so does one
swapped for its own part or variant (``git`` → ``git-core``); one in a Dockerfile the PR adds is a new way to build
(prdigest/collect/facts/commit.py marks its facts ``new file``).
"""

from __future__ import annotations

import re

from prdigest.kernel.models import Change

#: A fact's ``detail`` for a system package (no version: the image installs what its distribution ships).
SYSTEM = "system package"
_INSTALL = re.compile(r"\b(?:apt-get|apt|yum|dnf|microdnf|zypper)\s+(?:-\S+\s+)*install\b|\bapk\s+add\b")
#: Where one command ends on a ``RUN`` line.
_END = re.compile(r"&&|\|\||[;|)]")
#: Suffixes naming a part of a package that the whole one installs (the distributions' ``-core``, ``-minimal``).
_PARTS = ("-core", "-minimal", "-base", "-headless", "-libs", "-common")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+_-]*(?:[:=][\w.+~-]+)?")


def packages(text: str | None) -> dict[str, int]:
    """Package → the line of the ``RUN`` instruction that installs it, in one version of a Dockerfile."""
    found: dict[str, int] = {}
    lines = (text or "").splitlines()
    number = 0
    while number < len(lines):
        start, parts = number, [lines[number].rstrip()]
        # continuation lines gathered, then joined once (joining as they come copies the command each time)
        while parts[-1].endswith("\\") and number + 1 < len(lines):
            parts[-1] = parts[-1][:-1]
            number += 1
            parts.append(lines[number].rstrip())
        number += 1
        command = " ".join(parts)
        if not re.match(r"\s*RUN\b", command, re.IGNORECASE):
            continue
        for match in _INSTALL.finditer(command):
            end = _END.search(command, match.end())
            for word in command[match.end():end.start() if end else len(command)].split():
                if word.startswith("-") or "$" in word or not _NAME.fullmatch(word):
                    continue  # an option (``-y``, ``--no-install-recommends``) or a variable
                found.setdefault(re.split(r"[:=]", word, maxsplit=1)[0], start + 1)
    return found


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One fact per system package the image installs that it did not before, but for one taking the place of a
    package it is a part of, which the image no longer installs (``git`` → ``git-core``: what a reader's machine
    has already serves)."""
    old, new = packages(before), packages(after)
    gone = [name for name in old if name not in new]
    return [Change(kind="dependency", symbol=name, path=path, line=line, after=name, detail=SYSTEM, language="text")
            for name, line in new.items() if name not in old and not any(_part(name, g) for g in gone)]


def _part(new: str, old: str) -> bool:
    """Whether ``new`` names a part of ``old`` (``git`` → ``git-core``, ``vim`` → ``vim-minimal``): what installs
    ``old`` installs it too. A version (``clang`` → ``clang-15``) or an addition (``python3-devel``) is not."""
    return new.lower() in {f"{old.lower()}{part}" for part in _PARTS}
