"""Switches whose default flipped where no declared surface looks: a field or ``__init__`` parameter of a config
class (``enable: bool = False`` → ``True`` in ``NpugraphExConfig``), ``os.getenv("X", "0")`` → ``"1"`` in any
shipped module, ``add_argument("--x", default=False)`` outside the argument files.

A repo without a rules file declares no env, argument or config files (prdigest/collect/facts/surface.py), so a
plugin's own switches were read only through ``additional_config`` keys; a switch that turns on by itself changes
what every user runs. Only on/off values count here (``True``/``False``, ``"1"``/``"0"``, ``"true"``/``"false"``):
a tuned number moving is a body change, not a switch users must set back. Each flip is a ``default`` setting fact,
which the action says as "now on by default: set it to ``False`` to keep the old behaviour"
(prdigest/kernel/actions.py).
"""

from __future__ import annotations

import ast
import re
from typing import Literal

from prdigest.collect.facts import settings
from prdigest.collect.facts.pyapi import Module, _unparse
from prdigest.collect.facts.settings import Setting
from prdigest.collect.facts.surface import Surface
from prdigest.kernel.actions import switch
from prdigest.kernel.models import Change

#: A class whose name says it holds configuration (``AscendConfig``, ``SchedulerArgs``, ``CompileOptions``).
_CONFIG_CLASS = re.compile(r"(?:Config|Configs|Args|Arguments|Options|Settings)$")


def config_class_defaults(module: Module) -> dict[str, Setting]:
    """``Class.field`` → its default, for each config class: annotated fields and ``__init__`` keyword defaults."""
    found: dict[str, Setting] = {}
    if module.tree is None:
        return found
    for cls in settings._classes(module.tree):
        if not _CONFIG_CLASS.search(cls.name):
            continue
        found.update({k: v for k, v in settings._fields(cls, "config").items() if v.default})
        init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
        if init is None:
            continue
        positional = [*init.args.posonlyargs, *init.args.args]
        pairs = [*zip(positional[len(positional) - len(init.args.defaults):], init.args.defaults),
                 *((a, d) for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults) if d is not None)]
        for arg, default in pairs:
            symbol = f"{cls.name}.{arg.arg}"
            if not arg.arg.startswith("_"):
                found.setdefault(symbol, Setting("config", symbol, arg.lineno, _unparse(default) or ""))
    return found


def flips(before: Module | None, after: Module | None, path: str, surface: Surface) -> list[Change]:
    """The switches of one shipped module whose on/off default flipped, besides those the surface's own env,
    argument and config files already compare."""
    if before is None or after is None:
        return []  # a new or deleted module: its settings came or went, nothing flipped
    sides: list[tuple[Literal["env", "argument", "config"], dict[str, Setting], dict[str, Setting]]] = []
    if not surface.is_config_file(path):
        sides.append(("config", config_class_defaults(before), config_class_defaults(after)))
    if not surface.is_env_file(path):
        sides.append(("env", settings.environment(before), settings.environment(after)))
    if not surface.is_argument_file(path):
        sides.append(("argument", settings.arguments(before, surface, argument_file=True),
                      settings.arguments(after, surface, argument_file=True)))
    out: list[Change] = []
    for kind, old, new in sides:
        for key, setting in new.items():
            was = old.get(key)
            if was is None or was.kind != kind:
                continue
            b, a = switch(was.default), switch(setting.default)
            if b is not None and a is not None and a != b:
                out.append(Change(kind=kind, symbol=setting.symbol, path=path, line=setting.line, before=was.default,
                                  after=setting.default, detail="default", public=True, language="config"))
    return out
