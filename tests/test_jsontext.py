"""prdigest.kernel.jsontext.pretty: the Slack and Feishu files' JSON, byte for byte what json.dumps writes for
everything but floats (orjson's shortest form), which read back as the same numbers."""

from __future__ import annotations

import enum
import json
import random

import pytest

from prdigest.kernel.jsontext import pretty


class _Word(str, enum.Enum):
    A = "a"


class _Number(enum.IntEnum):
    X = 3


def _random_value(rng: random.Random, depth: int = 0, floats: bool = False) -> object:
    roll = rng.random()
    if depth > 4 or roll < 0.3:
        return rng.choice(["s", "中文\n", "", '\t"\\', "\u2028\x01\x1f\x7f", 1, -5, 10**30, 2**63 - 1, -2**63,
                           None, True, False, _Word.A, _Number.X] + ([2.25, -0.0, 1e-7, 1e300] if floats else []))
    if roll < 0.65:
        items = [_random_value(rng, depth + 1, floats) for _ in range(rng.randint(0, 4))]
        return tuple(items) if rng.random() < 0.2 else items
    keys = ["a", "b", "中", "x y", "\n", 1, True, False, None] + ([2.5] if floats else [])
    return {rng.choice(keys) if rng.random() < 0.3 else f"k{i}": _random_value(rng, depth + 1, floats)
            for i in range(rng.randint(0, 4))}


@pytest.mark.parametrize("value", [[], {}, [[]], {"a": {}}, "x\u2028\"\\\n\x01é中", 1, 10**30, "\ud800",
                                   True, None, {1: 2, 2.5: 3, False: 1, None: 2},
                                   (1, 2), [_Word.A, _Number.X], {"k": [1, {"z": [None, ()]}]}])
def test_pretty_is_json_dumps_indented(value) -> None:
    assert pretty(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_pretty_is_json_dumps_indented_for_thousands_of_random_structures() -> None:
    rng = random.Random(30)
    for _ in range(3000):
        value = _random_value(rng)
        assert pretty(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_floats_read_back_as_the_same_numbers() -> None:
    rng = random.Random(31)
    for _ in range(1000):
        value = _random_value(rng, floats=True)
        assert json.loads(pretty(value)) == json.loads(json.dumps(value, ensure_ascii=False, indent=2))
    # NaN and the infinities are not JSON: null, as a JSON reader of the file would need.
    assert pretty([float("nan"), float("inf")]) == "[\n  null,\n  null\n]"


def test_what_json_refuses_pretty_refuses_with_jsons_error() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        pretty({"a": [object()]})
    with pytest.raises(TypeError, match="keys must be"):
        pretty({(1, 2): 3})
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular reference"):
        pretty(loop)
