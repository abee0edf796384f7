"""Toolchain pins outside Python packaging: what a Dockerfile builds on (``FROM image:tag``, ``ARG`` / ``ENV``
``*_VERSION``, ``*_TAG`` and ``*_COMMIT`` values such as ``CANN_VERSION=9.1.0``, ``pip install name==1.2`` on a
``RUN`` line) and what a ``version.info`` file requires
(``Version=9.0.0`` of its ``version_dir``). Each changed value is a ``dependency`` fact, like a requirement pin:
the runtime users of the main branch must have.
"""

from __future__ import annotations

import re

from prdigest.kernel.models import Change

_DOCKERFILE = re.compile(r"(^|/)(Dockerfile[^/]*|[^/]+\.dockerfile|Containerfile[^/]*)$", re.IGNORECASE)
_VERSION_INFO = re.compile(r"(^|/)version\.info$")
_FROM = re.compile(r"^[ \t]*FROM\s+(?:--platform=\S+\s+)?([^\s:@]+)(?::([^\s@]+))?", re.IGNORECASE | re.MULTILINE)
_SETTING = re.compile(r"^[ \t]*(?:ARG|ENV)\s+([A-Za-z_][A-Za-z0-9_]*?_(?:VERSION|TAG|VER|COMMIT))\s*[= ]\s*[\"']?"
                      r"([^\s\"'\\]+)", re.IGNORECASE | re.MULTILINE)
#: ``pip install name==1.2`` on a RUN line (continuations joined): a package the image installs at that version.
#: A name starts where no name character precedes it: tried inside a 1 MB word too, the scan was quadratic.
_PIP_PIN = re.compile(r"(?<![A-Za-z0-9._-])[\"']?([A-Za-z0-9][A-Za-z0-9._-]*+)==([A-Za-z0-9][\w.+-]*)")
_INFO_LINE = re.compile(r"^[ \t]*(Version|version_dir)\s*=\s*\"?([^\s\"]+)\"?", re.MULTILINE)


def is_dockerfile(path: str) -> bool:
    return bool(_DOCKERFILE.search(path))


def is_toolchain_file(path: str) -> bool:
    return bool(_DOCKERFILE.search(path) or _VERSION_INFO.search(path))


def product(name: str) -> str:
    """``CANN_VERSION`` → ``CANN``, ``quay.io/ascend/cann`` → ``cann``: the thing a version is of."""
    last = name.rsplit("/", 1)[-1]
    return re.sub(r"_(?:VERSION|TAG|VER)$", "", last, flags=re.IGNORECASE) or last


def values(path: str, text: str | None) -> dict[str, str]:
    """Pinned thing → its value in one version of the file (a base image by its name, a setting by its name)."""
    if not text:
        return {}
    found: dict[str, str] = {}
    if _VERSION_INFO.search(path):
        info = {m[1]: m[2] for m in _INFO_LINE.finditer(text)}
        if "Version" in info:
            found[info.get("version_dir", "version")] = info["Version"]
        return found
    for match in _FROM.finditer(text):
        if match[2] and "$" not in match[1]:
            found.setdefault(match[1], match[2])
    for match in _SETTING.finditer(text):
        if "$" not in match[2]:
            found.setdefault(match[1], match[2])
    for line in text.replace("\\\n", " ").splitlines():
        if re.match(r"\s*RUN\b", line, re.IGNORECASE) and "pip" in line and "install" in line:
            for match in _PIP_PIN.finditer(line):
                found.setdefault(match[1].lower(), f"=={match[2]}")
    return found


def compare(path: str, before: str | None, after: str | None, *, before_path: str | None = None,
            changed_only: bool = False) -> list[Change]:
    """One ``dependency`` fact per pinned value changed, added or removed (``changed_only``: only values both
    sides name, for patches, which hold only the lines that changed)."""
    old, new = values(before_path or path, before), values(path, after)
    facts: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        b, a = old.get(name), new.get(name)
        if b == a or (changed_only and (b is None or a is None)):
            continue
        detail = "added" if b is None else "removed" if a is None else "changed"
        facts.append(Change(kind="dependency", symbol=name, path=path if a is not None else (before_path or path),
                            line=_line(after if a is not None else before, b if a is None else a),
                            before=b or "", after=a or "", detail=detail, language="config"))
    return facts


def _line(text: str | None, value: str | None) -> int:
    if not text or not value:
        return 0
    for number, line in enumerate(text.splitlines(), 1):
        if value in line:
            return number
    return 0
