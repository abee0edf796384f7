"""Checks that refuse nothing a reader could have relied on ask nothing (vllm-ascend #6968): a check of a setting
left empty (``if not cfg.torch_profiler_dir: raise``: no value a reader set is refused, and an empty one did not
work before either), and a check the file had, now reached after earlier checks that raise (``if p != "torch":
raise`` then ``if envs.X: raise``: still only with the torch profiler, as before). A check moved ahead of those
guards refuses more and still asks. Real repositories (tests/git_support.py)."""

from __future__ import annotations

import pytest

from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import week_changes

BEFORE = """
from plug import envs


def init_profiler(profiler_config):
    if profiler_config.profiler == "torch" and profiler_config.torch_profiler_dir:
        if envs.PLUG_MONITOR_DAEMON:
            raise RuntimeError("PLUG_MONITOR_DAEMON and torch profiler cannot be both enabled.")
        return profiler_config.torch_profiler_dir
    return None
"""
#: The profiler made on demand: the same checks, each its own ``if … raise``.
AFTER = """
from plug import envs


def create_profiler(profiler_config):
    if profiler_config.profiler != "torch":
        raise RuntimeError(f"Unrecognized profiler: {profiler_config.profiler}")
    if not profiler_config.torch_profiler_dir:
        raise RuntimeError("torch_profiler_dir cannot be empty.")
    if envs.PLUG_MONITOR_DAEMON:
        raise RuntimeError("PLUG_MONITOR_DAEMON and torch profiler cannot be both enabled.")
    return profiler_config.torch_profiler_dir
"""
#: The daemon refused before the profiler is even asked for: setups without the torch profiler are refused now.
WIDER = """
from plug import envs


def create_profiler(profiler_config):
    if envs.PLUG_MONITOR_DAEMON:
        raise RuntimeError("PLUG_MONITOR_DAEMON and torch profiler cannot be both enabled.")
    if profiler_config.profiler != "torch":
        raise RuntimeError(f"Unrecognized profiler: {profiler_config.profiler}")
    if profiler_config.torch_profiler_dir == "/tmp":
        raise RuntimeError("torch_profiler_dir cannot be /tmp.")
    return profiler_config.torch_profiler_dir
"""
BASE = {"plug/__init__.py": "", "plug/envs.py": "import os\n\nPLUG_MONITOR_DAEMON = os.getenv('PLUG_MONITOR_DAEMON')\n",
        "plug/worker.py": BEFORE}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Create the profiler on demand", {"plug/worker.py": AFTER}),
    2: ("Refuse the daemon first", {"plug/worker.py": WIDER}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("unset"), BASE, PRS)


def _rejected(changes: list[Change]) -> list[str]:
    return sorted(c.symbol for c in changes if c.detail == "rejected")


def test_an_empty_setting_refused_and_a_check_kept_behind_earlier_checks_ask_nothing(
        week: dict[int, list[Change]]) -> None:
    assert _rejected(week[1]) == [] and actions(week[1], "en") == []


def test_a_check_moved_ahead_of_its_guards_or_refusing_a_value_still_asks(week: dict[int, list[Change]]) -> None:
    assert _rejected(week[2]) == ["PLUG_MONITOR_DAEMON", "torch_profiler_dir"]
