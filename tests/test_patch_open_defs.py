"""A function whose one-line ``def`` becomes one parameter a line (vLLM's formatter, a decorator added above it)
is not removed, and a removed function named like a package of the upstream is not that package (vLLM 0.16.0's
``vllm.config.utils.config``: read from its patch as removed, it broke every ``from vllm.config import …``)."""

from __future__ import annotations

from pathlib import Path

from tests.patch_support import change_of, matched, patch_only

BEFORE = {
    "vllm/__init__.py": "",
    "vllm/config/__init__.py": "from vllm.config.utils import config\n\n\nclass CUDAGraphMode:\n    NONE = 0\n",
    "vllm/config/utils.py": '''import dataclasses


def config(cls):
    """Make a config class."""
    return dataclasses.dataclass(cls)


def helper(x: int) -> int:
    return x


def gone(x):
    return x
''',
}
AFTER = {
    "vllm/config/utils.py": '''import dataclasses


def transform(fn):
    return fn


@transform
def config(
    cls=None,
    *,
    strict: bool = False,
):
    """Make a config class."""
    return dataclasses.dataclass(cls)


def helper(
    x: int,
    y: int = 0,
) -> int:
    return x + y
''',
}
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/run.py": '''from vllm.config import CUDAGraphMode
from vllm.config.utils import config, gone, helper


def run():
    return CUDAGraphMode.NONE, config, helper(1), gone(2)
''',
}


def test_a_def_now_one_parameter_a_line_is_not_removed_and_a_package_is_not_a_removed_name(tmp_path: Path):
    facts = patch_only(change_of(tmp_path, BEFORE, AFTER, python_headers=True))
    removed = {c.symbol for c in facts if c.kind == "removed"}
    assert "gone" in removed  # a function really removed still is
    assert not removed & {"config", "helper"}
    breaks = {(i.symbol, i.severity) for i in matched(facts, DOWNSTREAM) if i.severity == "breaks"}
    assert ("vllm.config.utils.gone", "breaks") in breaks
    # the package vllm.config is not the function vllm.config.utils.config
    assert not {s for s, _ in breaks} & {"vllm.config.CUDAGraphMode", "vllm.config.utils.config",
                                          "vllm.config.utils.helper"}


def test_a_removed_function_named_like_its_package_breaks_its_own_uses_only(tmp_path: Path):
    after = {"vllm/config/utils.py": "def helper(x: int) -> int:\n    return x\n\n\ndef gone(x):\n    return x\n"}
    facts = patch_only(change_of(tmp_path, BEFORE, after, python_headers=True))
    assert "config" in {c.symbol for c in facts if c.kind == "removed"}
    breaks = {i.symbol for i in matched(facts, DOWNSTREAM) if i.severity == "breaks"}
    assert "vllm.config.utils.config" in breaks
    assert "vllm.config.CUDAGraphMode" not in breaks
