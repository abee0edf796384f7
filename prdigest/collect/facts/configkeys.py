"""Config keys a repo reads from a mapping users fill: ``additional_config.get("enable_kv_nz", False)`` or
``self.kv_connector_extra_config["backend"]``, where the mapping's name says users fill it (``additional_config``,
``*_extra_config``). Each key is a ``config`` setting with its default as written, compared like every other setting
(prdigest/collect/facts/settings.py: added, removed, renamed, default changed)."""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from prdigest.collect.facts.pyapi import Module, _decorator_name, _unparse, parse
from prdigest.collect.facts.settings import Setting
from prdigest.collect.facts.surface import Surface
from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.texts import tree_texts
from prdigest.kernel.models import Change

#: Mappings users fill: vLLM's ``additional_config`` and ``*_extra_config`` (a model's ``hf_config`` or a
#: ``quant_config`` read from checkpoint files is not set by the reader).
_CONFIG_NAME = re.compile(r"^(additional|extra|user)_?config$|_extra_config$|^additional_\w*config$", re.IGNORECASE)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{1,80}")


def _config_mapping(node: ast.expr) -> bool:
    name = _decorator_name(node).rsplit(".", 1)[-1]
    return bool(name) and bool(_CONFIG_NAME.search(name))


def config_keys(module: Module) -> dict[str, Setting]:
    """Each key read from a config mapping: ``key`` → its default (the ``.get`` second argument, "" for none)."""
    found: dict[str, Setting] = {}
    if module.tree is None:
        return found
    for node in ast.walk(module.tree):
        key, default = None, ""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and _config_mapping(node.func.value) and node.args and isinstance(node.args[0], ast.Constant):
            key = node.args[0].value
            default = (_unparse(node.args[1]) or "") if len(node.args) > 1 else "None"
        elif isinstance(node, ast.Subscript) and _config_mapping(node.value) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        if isinstance(key, str) and _KEY.fullmatch(key) and key not in found:
            found[key] = Setting(kind="config", symbol=key, line=getattr(node, "lineno", 0), default=default or "")
    return found


def still_read(facts: Sequence[Change], sha: str, clone: UpstreamClone, surface: Surface) -> list[Change]:
    """``facts`` without a config key "removed" by one file that the tree at ``sha`` still reads elsewhere (the
    read moved, as ``additional_config.get("x")`` into a config object's ``__init__``): a key is removed only
    when no shipped module of the commit reads it any more. The tree is read only when such a fact is there."""
    gone = {c.symbol for c in facts if c.kind == "config" and c.detail == "removed"}
    if not gone:
        return list(facts)
    try:
        texts = tree_texts(clone, sha,
                           lambda path: path.endswith(".py") and surface.is_api(path) and not surface.is_test(path))
    except GitUnavailable:
        return list(facts)  # the tree cannot be read: the fact stands as the diff shows it
    left: set[str] = set()
    for text, _ in texts.values():
        quoted = {k for k in gone - left if text and (f'"{k}"' in text or f"'{k}'" in text)}
        if quoted:
            module = parse(text)
            left |= quoted & set(config_keys(module)) if module is not None else set()
    return [c for c in facts if not (c.kind == "config" and c.detail == "removed" and c.symbol in left)]
