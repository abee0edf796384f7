"""Lone surrogates: code points U+D800-DFFF that a JSON ``\\ud800`` escape (a JSONL line, GitHub's API, a model's
answer) or a ``surrogateescape`` decode puts into a str, and that no UTF-8 file, hash or message can hold.

Text is made whole where it enters (:func:`scrub`: each becomes U+FFFD, as a strict decoder would show it);
hashes take any str anyway (:func:`hash_bytes`), so that one record built around the checks cannot stop a run.
"""

from __future__ import annotations

import re

_LONE = re.compile("[\ud800-\udfff]")


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the same object when there is none)."""
    if text.isascii():  # the common case, and the cheapest check
        return text
    return _LONE.sub("\ufffd", text)


def scrub_data(value: object) -> object:
    """``value`` with :func:`scrub` applied to every str in it (through lists, tuples and dict keys and values);
    anything else as it is."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_data(v) for v in value)
    if isinstance(value, dict):
        return {scrub_data(k): scrub_data(v) for k, v in value.items()}
    return value


def hash_bytes(text: str) -> bytes:
    """``text`` as UTF-8 for a hash or a cache key: a lone surrogate is kept as its own bytes (two texts that
    differ only there keep different keys) instead of raising ``UnicodeEncodeError``."""
    return text.encode("utf-8", "surrogatepass")
