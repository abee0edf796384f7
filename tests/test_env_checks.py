"""An environment variable a PR makes required: a check it adds to shipped code that stops the program unless the
variable is set is an ``env`` fact (detail ``required``) and an action naming the setting that turns the check on
(prdigest/collect/facts/envchecks.py); a check only moved, one in a test, one that forbids a variable ask nothing.
Real repositories (tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change
from tests.git_support import commit_week

EPLB = """
import os


class EplbConfig:
    def __init__(self, config):
        self.config = config
        if self.config["num_redundant_experts"] < 0:
            raise ValueError("num_redundant_experts must be >= 0")
"""
EPLB_CHECKED = EPLB + """        if self.config["dynamic_eplb"]:
            assert (
                os.getenv("DYNAMIC_EPLB", "false").lower() in ("true", "1")
                or os.getenv("EXPERT_MAP_RECORD", "false") == "true"
            ), "The environment variable DYNAMIC_EPLB or EXPERT_MAP_RECORD must be set to true."
"""
LOADER = """
import os


def load(path):
    return path
"""
BASE = {"lib/__init__.py": "", "lib/eplb.py": EPLB, "lib/loader.py": LOADER,
        "tests/test_eplb.py": "def test_eplb():\n    assert True\n"}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Make EPLB model-agnostic", {"lib/eplb.py": EPLB_CHECKED}),
    # the same check, moved below a new log line; a test asserting on a variable
    2: ("Log the EPLB config", {"lib/eplb.py": EPLB_CHECKED.replace(
        '        if self.config["dynamic_eplb"]:', '        print(self.config)\n        if self.config["dynamic_eplb"]:'),
        "tests/test_eplb.py": "import os\n\n\ndef test_eplb():\n    assert os.getenv('CI_RUNNER')\n"}),
    3: ("Check the loader's environment", {"lib/loader.py": LOADER.replace("    return path\n", """\
    if os.getenv("LOADER_LEGACY"):
        raise RuntimeError("LOADER_LEGACY is no longer supported")
    if not os.environ.get("LOADER_CACHE_DIR"):
        raise RuntimeError("set LOADER_CACHE_DIR")
    return path
""")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    repo = tmp_path_factory.mktemp("envchecks") / "up"
    prs = commit_week(repo, BASE, PRS)
    state: Path = tmp_path_factory.mktemp("s")
    return week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state)).changes


def _required(changes: list[Change]) -> list[tuple[str, str, str]]:
    return [(c.symbol, c.after, c.reach) for c in changes if c.kind == "env" and c.detail == "required"]


def test_a_new_check_on_a_variable_under_a_setting_asks_to_set_it_with_that_setting(
        week: dict[int, list[Change]]) -> None:
    assert _required(week[1]) == [("DYNAMIC_EPLB", "dynamic_eplb", "public"),
                                  ("EXPERT_MAP_RECORD", "dynamic_eplb", "public")]
    assert actions(week[1], "en") == ["If you enable `dynamic_eplb`, also set the environment variable `DYNAMIC_EPLB` "
                                      "or `EXPERT_MAP_RECORD`: startup now fails without it."]
    assert actions(week[1], "zh-CN") == ["启用 `dynamic_eplb` 时还须设置环境变量 `DYNAMIC_EPLB` 或 "
                                         "`EXPERT_MAP_RECORD`：缺少时启动会失败。"]
    fact = next(c for c in week[1] if c.symbol == "DYNAMIC_EPLB")
    assert fact_line(fact, "en") == ("environment variable `DYNAMIC_EPLB` now required with `dynamic_eplb`: a check "
                                     "stops the program without it")
    assert not fact.breaks


def test_a_check_moved_or_in_a_test_asks_nothing(week: dict[int, list[Change]]) -> None:
    assert _required(week[2]) == []
    assert actions(week[2], "en") == []


def test_a_check_that_forbids_a_variable_is_no_requirement(week: dict[int, list[Change]]) -> None:
    assert _required(week[3]) == [("LOADER_CACHE_DIR", "", "public")]
    # the variable it forbids is a setting now refused at startup (rejections.py), never a requirement
    assert actions(week[3], "en") == [
        "Set the environment variable `LOADER_CACHE_DIR` as the check asks: startup now fails without it.",
        "Check where you set the environment variable `LOADER_LEGACY`: a new check stops startup with it where it "
        "does not belong (`LOADER_LEGACY is no longer supported`)."]
