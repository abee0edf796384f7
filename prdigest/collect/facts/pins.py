"""Dependency pins: the packages a requirements file, ``pyproject.toml`` or ``setup.py`` names and the bound
of each, and which were added, removed or re-pinned between two versions (kind ``dependency``, ``before`` and
``after`` the specifiers)."""

from __future__ import annotations

import ast
import logging
import re
import tomllib
from collections.abc import Iterable

from prdigest.collect.facts.reading import named
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change

log = logging.getLogger(__name__)

_REQUIREMENTS = re.compile(r"(^|/)requirements[^/]*\.(txt|in)$|(^|/)requirements/[^/]+\.(txt|in)$")
#: A requirement's name (PEP 508), optional extras, then the rest (specifier, URL, marker).
_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")
#: What may follow the name: nothing, a version specifier, a direct URL (``@``), a marker (``;``), the old
#: parenthesised specifier, or a requirements-file option (``--hash``) or line continuation. Anything else
#: (``new line 0``, prose in a file's text) is not a requirement, so no package is named from it.
_AFTER_NAME = re.compile(r"(===?|[<>!~]=|[<>]|@|;|\(|--|\\|$)")


def is_pin_file(path: str) -> bool:
    return bool(_REQUIREMENTS.search(path)) or path.rpartition("/")[2] in ("pyproject.toml", "setup.py")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement(line: str) -> tuple[str, str] | None:
    line = line.split(" #", 1)[0].strip()
    if not line or line.startswith(("#", "-", "git+", "http:", "https:", "file:", ".", "/")):
        return None
    match = _REQUIREMENT.match(line)
    if not match:
        return None
    name, _extras, rest = match.groups()
    if not _AFTER_NAME.match(rest):
        return None
    spec = " ".join(rest.split())
    if spec.startswith("@"):  # a direct URL: its URL is its bound
        spec = spec[:120]
    return _normal(name), spec


def _from_lines(lines: Iterable[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for line in lines:
        req = _requirement(line)
        if req:
            key = req[0]
            # The same package twice (per platform markers): keep both bounds, so either changing shows.
            found[key] = f"{found[key]} | {req[1]}" if key in found and found[key] != req[1] else req[1]
    return found


def pins(path: str, text: str | None) -> dict[str, str]:
    """Package (normalised name) → specifier as written (``>=2.5,<3``, ``==0.6.1 ; platform_machine…``)."""
    if not text:
        return {}
    name = path.rpartition("/")[2]
    if name == "pyproject.toml":
        try:
            data = tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return {}
        except (RecursionError, MemoryError):  # tomllib recurses into nested arrays and tables
            log.warning("%s: skipped for its pins: nested too deeply to parse", named(path))
            return {}
        project = data.get("project") or {}
        lines: list[str] = [d for d in project.get("dependencies") or [] if isinstance(d, str)]
        for extra in (project.get("optional-dependencies") or {}).values():
            lines += [d for d in extra or [] if isinstance(d, str)]
        lines += [d for d in (data.get("build-system") or {}).get("requires") or [] if isinstance(d, str)]
        return _from_lines(lines)
    if name == "setup.py":
        return _from_lines(_setup_requirements(text, path))
    return _from_lines(text.splitlines())


def _setup_requirements(text: str, path: str = "setup.py") -> list[str]:
    """The string literals of ``install_requires=[...]`` / ``extras_require={...}`` in a setup.py."""
    tree, problem = safe_parse.parse(text, filename=path)
    if tree is None:  # too large, too deep or not Python: no pins from it, named
        log.warning("%s: skipped for its pins: %s", named(path), problem)
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in ("install_requires", "setup_requires", "extras_require"):
            for sub in ast.walk(node.value):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                    out.append(sub.value)
    return out


def compare(path: str, before: str | None, after: str | None, *, before_path: str | None = None) -> list[Change]:
    """One ``dependency`` fact per package added, removed or re-pinned."""
    old, new = pins(before_path or path, before), pins(path, after)
    facts: list[Change] = []
    for package in sorted(old.keys() | new.keys()):
        b, a = old.get(package), new.get(package)
        if b == a:
            continue
        detail = "added" if b is None else "removed" if a is None else "changed"
        facts.append(Change(kind="dependency", symbol=package, path=path if a is not None else (before_path or path),
                            line=_line(after if a is not None else before, package), before=b or "", after=a or "",
                            detail=detail, language="config"))
    return facts


def _line(text: str | None, package: str) -> int:
    if not text:
        return 0
    pattern = re.compile(rf"^[\s\"']*{re.escape(package).replace('-', '[-_.]')}\b", re.IGNORECASE)
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.search(line):
            return number
    return 0
