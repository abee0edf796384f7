"""The configuration surface of a Python file: environment variables, command-line and engine arguments and
config-class fields, each with its default as written, and what changed between two versions.

Where to look comes from the repo's :class:`~prdigest.collect.facts.surface.Surface`: environment variables in
its env files (the keys of a module-level dict of ``"NAME": ...`` entries, as in vLLM's ``envs.py``, and every
``os.getenv("NAME")`` / ``os.environ.get("NAME")`` / ``os.environ["NAME"]``), arguments in its argument files
(``add_argument("--name", default=...)``) and the fields of its argument classes (``EngineArgs``), config
fields in the classes of its config files decorated ``@dataclass`` / ``@config``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from prdigest.collect.facts.pyapi import Module, _decorator_name, _unparse
from prdigest.collect.facts.surface import Surface
from prdigest.kernel.models import Change

_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]{2,}")


@dataclass(frozen=True)
class Setting:
    """One environment variable, argument or config field: its default as written and its line."""

    kind: Literal["env", "argument", "config"]
    symbol: str
    line: int
    default: str = ""
    #: The entry's own text with its name blanked, to tell a rename (same entry, new name).
    shape: str = ""


def _env_call(node: ast.AST) -> tuple[str, str] | None:
    """``("NAME", default)`` for ``os.getenv("NAME", d)``, ``os.environ.get("NAME", d)``, ``os.environ["NAME"]``."""
    if isinstance(node, ast.Call):
        name = _decorator_name(node.func)
        if name.endswith("getenv") or name.endswith("environ.get"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                default = _unparse(node.args[1]) if len(node.args) > 1 else ""
                return node.args[0].value, default or ""
    elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) \
            and _decorator_name(node.value).endswith("environ"):  # os.environ["X"] = v sets it for the process
        key = node.slice
        if isinstance(key, ast.Constant) and isinstance(key.value, str):
            return key.value, ""
    return None


def environment(module: Module) -> dict[str, Setting]:
    """The environment variables a module declares or reads."""
    found: dict[str, Setting] = {}
    tree = module.tree
    if tree is None:
        return found
    for node in tree.body:
        value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Dict):
            for key, entry in zip(value.keys, value.values):
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and _ENV_NAME.fullmatch(key.value):
                    default = ""
                    for sub in ast.walk(entry):
                        call = _env_call(sub)
                        if call and call[0] == key.value:
                            default = call[1]
                            break
                    text = (_unparse(entry, 400) or "").replace(key.value, "")
                    found[key.value] = Setting("env", key.value, key.lineno, default, text)
    for any_node in ast.walk(tree):
        call = _env_call(any_node)
        if call and _ENV_NAME.fullmatch(call[0]) and call[0] not in found:
            found[call[0]] = Setting("env", call[0], getattr(any_node, "lineno", 0), call[1], call[1])
    return found


def arguments(module: Module, surface: Surface, *, argument_file: bool) -> dict[str, Setting]:
    """``add_argument`` options (in argument files) and the fields of the surface's argument classes."""
    found: dict[str, Setting] = {}
    tree = module.tree
    if tree is None:
        return found
    if argument_file:
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                flags = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                long = [f for f in flags if f.startswith("--")] or [f for f in flags if f.startswith("-")]
                if not long:
                    continue
                name = max(long, key=len)
                default = next((_unparse(k.value) or "" for k in node.keywords if k.arg == "default"), "")
                found.setdefault(name, Setting("argument", name, node.lineno, default, default))
    if surface.argument_classes:
        for cls in _classes(tree):
            if cls.name in surface.argument_classes:
                for field, setting in _fields(cls, "argument").items():
                    found.setdefault(field, setting)
    return found


def config_fields(module: Module, surface: Surface) -> dict[str, Setting]:
    """The fields of config classes (decorated with one of the surface's config decorators)."""
    found: dict[str, Setting] = {}
    if module.tree is None:
        return found
    for cls in _classes(module.tree):
        decorators = {_decorator_name(d).rpartition(".")[2] for d in cls.decorator_list}
        if decorators & set(surface.config_decorators) and cls.name not in surface.argument_classes:
            found.update(_fields(cls, "config"))
    return found


def _classes(tree: ast.Module) -> list[ast.ClassDef]:
    out: list[ast.ClassDef] = []
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ClassDef):
            out.append(node)
            stack.extend(node.body)
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend([*node.body, *node.orelse])
    return out


def _fields(cls: ast.ClassDef, kind: Literal["argument", "config"]) -> dict[str, Setting]:
    found: dict[str, Setting] = {}
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and not node.target.id.startswith("_") and "ClassVar" not in (_unparse(node.annotation) or ""):
            default = _unparse(node.value) or ""
            symbol = f"{cls.name}.{node.target.id}"
            found[symbol] = Setting(kind, symbol, node.lineno, default,
                                    f"{_unparse(node.annotation)}={default}")
    return found


def compare(before: dict[str, Setting], after: dict[str, Setting], path: str, *, before_path: str | None = None
            ) -> list[Change]:
    """Settings added, removed, renamed (one of each with the same entry) or whose default changed."""
    language: Literal["config"] = "config"
    before, after = _without_renamed_classes(before, after)
    removed = [s for k, s in before.items() if k not in after]
    added = [s for k, s in after.items() if k not in before]
    facts: list[Change] = []
    if len(removed) == 1 and len(added) == 1 and removed[0].shape and removed[0].shape == added[0].shape \
            and removed[0].kind == added[0].kind:
        b, a = removed[0], added[0]
        facts.append(Change(kind=a.kind, symbol=a.symbol, path=path, line=a.line, before=b.symbol, after=a.symbol,
                            detail="renamed", public=True, language=language))
        removed, added = [], []
    # ``before`` is never empty for what existed, ``after`` never for what exists (an absent default reads as
    # "none"): media tell added, removed and changed apart by which sides are there.
    for s in removed:
        facts.append(Change(kind=s.kind, symbol=s.symbol, path=before_path or path, line=s.line,
                            before=s.default or "none", detail="removed", public=True, language=language))
    for s in added:
        facts.append(Change(kind=s.kind, symbol=s.symbol, path=path, line=s.line, after=s.default,
                            detail="added", public=True, language=language))
    for key, a in after.items():
        was = before.get(key)
        if was is not None and was.default != a.default:
            facts.append(Change(kind=a.kind, symbol=a.symbol, path=path, line=a.line, before=was.default or "none",
                                after=a.default or "none", detail="default", public=True, language=language))
    return facts


def _without_renamed_classes(before: dict[str, Setting], after: dict[str, Setting]
                             ) -> tuple[dict[str, Setting], dict[str, Setting]]:
    """Both sides without the fields of a class that was only renamed (the same fields, as written, under a new
    class name): the rename is the API fact, and its fields did not come or go."""
    def by_class(settings: dict[str, Setting]) -> dict[str, dict[str, str]]:
        classes: dict[str, dict[str, str]] = {}
        for key, setting in settings.items():
            owner, dot, field = key.rpartition(".")
            if dot and setting.kind in ("config", "argument"):
                classes.setdefault(owner, {})[field] = setting.shape
        return classes

    old, new = by_class(before), by_class(after)
    gone = {c: f for c, f in old.items() if c not in new}
    came = {c: f for c, f in new.items() if c not in old}
    renamed_old, renamed_new = set(), set()
    for c, fields in gone.items():
        match = [n for n, f in came.items() if f == fields and n not in renamed_new]
        if len(match) == 1:
            renamed_old.add(c)
            renamed_new.add(match[0])
    return ({k: v for k, v in before.items() if k.rpartition(".")[0] not in renamed_old},
            {k: v for k, v in after.items() if k.rpartition(".")[0] not in renamed_new})
