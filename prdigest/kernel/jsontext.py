"""JSON as the files people read are written: indented by two spaces, UTF-8 as it is (not ``\\u`` escapes).

The standard library writes indented JSON with its pure-Python encoder (its C encoder only writes unindented
JSON), and the Slack and Feishu files of thousands of variants and readers are mostly that. :func:`pretty`
writes them with orjson (a compiled encoder), whose text is ``json.dumps(value, ensure_ascii=False, indent=2)``
byte for byte for strings, integers, booleans, None, lists, tuples, dicts with string keys and str/int enums,
which is all these files hold. Floats are written in orjson's shortest form (``1e16``, where ``json`` writes
``1e+16``; NaN and infinities, which JSON has no words for, as ``null``). What orjson refuses (integers past 64
bits, keys that are not strings, a type it does not know, nesting past its limit, a cycle) goes to
``json.dumps``, which writes it as before or says what is wrong.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

__all__ = ["pretty"]


def pretty(value: Any) -> str:
    """``value`` as indented JSON text (see the module docstring for the one difference from ``json``)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(value, ensure_ascii=False, indent=2)
