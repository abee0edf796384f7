"""A switch whose default flipped in shipped code no rules file declares (a config class's field or ``__init__``
parameter, ``os.getenv(..., "0")``, ``add_argument(..., default=False)``) is a ``default`` setting fact and an
action saying how to keep the old behaviour (prdigest/collect/facts/defaults.py); a number retuned, a class that
holds no configuration, a test file ask nothing. Real repositories (tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import commit_week

CONFIG = """
from dataclasses import dataclass


class GraphExConfig:
    def __init__(self, enable: bool = False, fuse: bool = True, ratio: float = 0.8, *, static: bool = False):
        self.enable = enable
        self.fuse = fuse
        self.ratio = ratio
        self.static = static


@dataclass
class SchedulerOptions:
    async_mode: bool = True
    budget: int = 8192


class Runner:
    def __init__(self, eager: bool = False):
        self.eager = eager
"""
RUNTIME = """
import os

USE_FAST = os.getenv("PLUG_USE_FAST", "0") == "1"
"""
CLI = """
import argparse


def parser():
    p = argparse.ArgumentParser()
    p.add_argument("--warmup", action="store_true", default=False)
    return p
"""
TEST = """
class FakeConfig:
    def __init__(self, enable=False):
        self.enable = enable


def test_fake():
    assert FakeConfig().enable is False
"""
#: The user docs name the keys users set (a config class's field no page names is the code's own: reach.py).
DOCS = "# Configuration\n\n| key | default |\n|---|---|\n| `enable` | `False` |\n| `async_mode` | `True` |\n"
BASE: dict[str, str | None] = {"plug/__init__.py": "", "plug/config.py": CONFIG, "plug/runtime.py": RUNTIME, "plug/cli.py": CLI,
        "tests/test_fake.py": TEST, "docs/configuration.md": DOCS}
# Each PR changes the tree the one before left.
CONFIG_1 = CONFIG.replace("enable: bool = False", "enable: bool = True").replace("ratio: float = 0.8", "ratio: float = 1.0")
CONFIG_3 = CONFIG_1.replace("eager: bool = False", "eager: bool = True")
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Enable the graph backend by default", {"plug/config.py": CONFIG_1}),
    2: ("Fast path and warmup on by default", {"plug/runtime.py": RUNTIME.replace('"0"', '"1"'),
                                               "plug/cli.py": CLI.replace("default=False", "default=True")}),
    3: ("Eager runner, test tweak", {"plug/config.py": CONFIG_3,
                                     "tests/test_fake.py": TEST.replace("enable=False", "enable=True")}),
    4: ("Async scheduling off by default", {"plug/config.py": CONFIG_3.replace("async_mode: bool = True",
                                                                               "async_mode: bool = False")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    repo = tmp_path_factory.mktemp("defaults") / "up"
    prs = commit_week(repo, BASE, PRS)
    state: Path = tmp_path_factory.mktemp("s")
    return week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state)).changes


def _flips(changes: list[Change]) -> list[tuple[str, str, str, str, str]]:
    return [(c.kind, c.symbol, c.before, c.after, c.reach) for c in changes if c.detail == "default"]


def test_a_config_class_switch_turned_on_is_a_fact_and_an_action(week: dict[int, list[Change]]) -> None:
    # ratio 0.8 -> 1.0 is a tuned number, not a switch: no fact of this kind
    assert _flips(week[1]) == [("config", "GraphExConfig.enable", "False", "True", "public")]
    assert actions(week[1], "en") == [
        "`GraphExConfig.enable` is now on by default: set it to `False` to keep the old behaviour."]
    assert actions(week[1], "zh-CN") == ["`GraphExConfig.enable` 现已默认开启：如需保持旧行为，请显式设为 `False`。"]


def test_an_environment_variable_and_an_argument_read_anywhere(week: dict[int, list[Change]]) -> None:
    assert sorted(_flips(week[2])) == [("argument", "--warmup", "False", "True", "public"),
                                       ("env", "PLUG_USE_FAST", "'0'", "'1'", "public")]
    assert "`PLUG_USE_FAST` is now on by default: set it to `'0'` to keep the old behaviour." in actions(week[2], "en")


def test_a_class_that_holds_no_configuration_and_a_test_ask_nothing(week: dict[int, list[Change]]) -> None:
    assert _flips(week[3]) == []
    assert actions(week[3], "en") == []


def test_a_dataclass_field_turned_off(week: dict[int, list[Change]]) -> None:
    assert _flips(week[4]) == [("config", "SchedulerOptions.async_mode", "True", "False", "public")]
    assert actions(week[4], "en") == [
        "`SchedulerOptions.async_mode` is now off by default: set it to `True` to keep the old behaviour."]
