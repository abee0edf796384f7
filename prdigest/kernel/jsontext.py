"""JSON as the files people read are written: ``json.dumps(value, ensure_ascii=False, indent=2)``, byte for byte,
in one pass.

The standard library writes indented JSON with its pure-Python encoder (a generator per nested list and dict:
its C encoder only writes unindented JSON); the Slack and Feishu files of thousands of variants and readers are
mostly that. :func:`pretty` writes the same text into one list of pieces. Anything it does not handle exactly
as ``json`` does (a type ``json`` refuses, a key it would refuse, a structure nested past Python's recursion
limit, a cycle) goes to ``json.dumps`` itself, which says what is wrong.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

__all__ = ["pretty"]

_INDENT = "  "


class _Unsupported(Exception):
    """A value :func:`pretty` leaves to ``json.dumps``."""


def pretty(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``."""
    out: list[str] = []
    try:
        _write(value, "\n", out)
    except (_Unsupported, RecursionError):
        return json.dumps(value, ensure_ascii=False, indent=2)
    return "".join(out)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == -float("inf"):
        return "-Infinity"
    return float.__repr__(value)


def _key(key: object) -> str:
    if isinstance(key, str):
        return encode_basestring(key)
    if isinstance(key, float):
        return encode_basestring(_float(key))
    if key is True:
        return '"true"'
    if key is False:
        return '"false"'
    if key is None:
        return '"null"'
    if isinstance(key, int):
        return encode_basestring(int.__repr__(key))
    raise _Unsupported


def _write(value: object, newline: str, out: list[str]) -> None:
    # The order of json.encoder's _iterencode: str, None, True, False, int, float, list/tuple, dict.
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_float(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + _INDENT
        separator = "[" + inner
        for item in value:
            out.append(separator)
            separator = "," + inner
            _write(item, inner, out)
        out.append(newline + "]")
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + _INDENT
        separator = "{" + inner
        for key, item in value.items():
            out.append(separator + _key(key) + ": ")
            separator = "," + inner
            _write(item, inner, out)
        out.append(newline + "}")
    else:
        raise _Unsupported
