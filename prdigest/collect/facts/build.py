"""CI and build facts: GitHub Actions jobs added, removed or changed (which of their keys), and CMake variables
and options set, read from the two versions of the file (YAML parsed, comments and layout no change).

A workflow job is a key under ``jobs:``; a job is changed when one of its keys (``steps``, ``strategy``,
``runs-on``…) holds something else after the change, and the fact names those keys. A CMake variable is a
``set(NAME value)`` or ``option(NAME "help" value)`` at any depth of the file; a name set more than once is
compared as the list of its values. A file that does not parse on either side yields no fact.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from prdigest.kernel.models import Change

_WORKFLOW = re.compile(r"(^|/)\.github/workflows/[^/]+\.ya?ml$")
_CMAKE = re.compile(r"(^|/)CMakeLists\.txt$|\.cmake$")
_CMAKE_SET = re.compile(r"^[ \t]*(set|option)\s*\(\s*([A-Za-z_][A-Za-z0-9_]*)\b([^)]*)\)", re.IGNORECASE | re.MULTILINE)
_CMAKE_COMMENT = re.compile(r"#.*$", re.MULTILINE)
_SHAPE = 60
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def is_build_file(path: str) -> bool:
    return bool(_WORKFLOW.search(path) or _CMAKE.search(path))


def compare(path: str, before: str | None, after: str | None, *, before_path: str | None = None) -> list[Change]:
    if _WORKFLOW.search(path):
        return _jobs(path, before, after, before_path or path)
    return _cmake(path, before, after, before_path or path)


def _load(text: str | None) -> tuple[dict[str, Any], Any] | None:
    """The workflow's jobs by name and its triggers (``on:``, which YAML 1.1 reads as the key True)."""
    if text is None:
        return {}, None
    try:
        data = yaml.load(text, Loader=_LOADER)  # a safe loader, the C one when libyaml is there
    except yaml.YAMLError:
        return None
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return None
    jobs = data.get("jobs") or {}
    if not isinstance(jobs, dict):
        return None
    return {str(k): v for k, v in jobs.items()}, data.get("on", data.get(True))


def _same(a: object, b: object) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _jobs(path: str, before: str | None, after: str | None, old_path: str) -> list[Change]:
    loaded_old, loaded_new = _load(before), _load(after)
    if loaded_old is None or loaded_new is None:
        return []
    (old, old_on), (new, new_on) = loaded_old, loaded_new
    facts: list[Change] = []
    if before is not None and after is not None and not _same(old_on, new_on):
        bd, ad = (x if isinstance(x, dict) else {str(x): None} if x else {} for x in (old_on, new_on))
        keys = [str(k) for k in sorted(bd.keys() | ad.keys(), key=str) if not _same(bd.get(k), ad.get(k))]
        facts.append(Change(kind="ci", symbol=path.rsplit("/", 1)[-1], path=path, detail="triggers: " + ", ".join(keys),
                            language="config"))
    for name in sorted(old.keys() | new.keys()):
        b, a = old.get(name), new.get(name)
        if name not in old:
            facts.append(Change(kind="ci", symbol=name, path=path, after=name, detail="added", language="config"))
        elif name not in new:
            facts.append(Change(kind="ci", symbol=name, path=old_path, before=name, detail="removed",
                                language="config"))
        elif not _same(b, a):
            bd, ad = (b if isinstance(b, dict) else {}), (a if isinstance(a, dict) else {})
            keys = [str(k) for k in sorted(bd.keys() | ad.keys(), key=str) if not _same(bd.get(k), ad.get(k))]
            facts.append(Change(kind="ci", symbol=name, path=path, before=name, after=name,
                                detail="changed: " + ", ".join(keys) if keys else "changed", language="config"))
    return facts


def _variables(text: str | None) -> dict[str, list[str]]:
    if not text:
        return {}
    found: dict[str, list[str]] = {}
    for match in _CMAKE_SET.finditer(_CMAKE_COMMENT.sub("", text)):
        value = " ".join(match[3].split())
        if match[1].lower() == "option":  # option(NAME "help text" ON): the default is the last word
            value = value.rsplit(" ", 1)[-1] if not value.endswith('"') else ""
        found.setdefault(match[2], []).append(value[:_SHAPE])
    return found


def _cmake(path: str, before: str | None, after: str | None, old_path: str) -> list[Change]:
    old, new = _variables(before), _variables(after)
    facts: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        b, a = "; ".join(old.get(name, [])), "; ".join(new.get(name, []))
        if name not in old:
            facts.append(Change(kind="build", symbol=name, path=path, after=a, detail="added", language="config"))
        elif name not in new:
            facts.append(Change(kind="build", symbol=name, path=old_path, before=b, detail="removed",
                                language="config"))
        elif b != a:
            facts.append(Change(kind="build", symbol=name, path=path, before=b, after=a, detail="changed",
                                language="config"))
    return facts
