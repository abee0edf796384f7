"""An environment variable renamed where shipped code reads it (``envs.OLD`` → ``envs.NEW``, ``os.getenv("OLD")`` →
``os.getenv("NEW")``) in any module, not only an env file: an ``env`` fact and the action to rename it where it is
set (prdigest/collect/facts/envreads.py). An old name some shipped module still reads, a read in a test, or two
unrelated reads changed ask nothing. Real repositories (tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import commit_week

CONNECTOR = """
import os

from up import envs


class Tracker:
    def expired(self, now, start):
        return now - start > envs.UP_NIXL_ABORT_REQUEST_TIMEOUT

    def workers(self):
        return int(os.getenv("UP_CONNECTOR_WORKERS", "4"))
"""
OTHER = """
from up import envs


def timeout():
    return envs.UP_SHARED_TIMEOUT
"""
PLATFORM = """import os

os.environ["UP_GRAPH_GC"] = "1"


def device():
    return os.environ["UP_DEVICE"]
"""
BASE = {"lib/__init__.py": "", "lib/platform.py": PLATFORM, "lib/connector.py": CONNECTOR, "lib/other.py": OTHER,
        "lib/pool.py": "from up import envs\n\n\ndef wait():\n    return envs.UP_SHARED_TIMEOUT\n",
        "tests/test_connector.py": "import os\n\n\ndef test_x():\n    assert os.getenv('CI_OLD') is None\n",
        "lib/profile.py": "from up import envs\n\n\ndef profile():\n    return (envs.UP_PROFILER_DIR, envs.UP_PROFILER_STACK,\n"
                          "            envs.UP_PROFILER_MEMORY)\n"}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("[Misc] Modify configuration parameters", {"lib/connector.py": CONNECTOR.replace(
        "UP_NIXL_ABORT_REQUEST_TIMEOUT", "UP_MOONCAKE_ABORT_REQUEST_TIMEOUT")}),
    2: ("Rename the workers variable", {"lib/connector.py": CONNECTOR.replace(
        "UP_NIXL_ABORT_REQUEST_TIMEOUT", "UP_MOONCAKE_ABORT_REQUEST_TIMEOUT").replace(
        "UP_CONNECTOR_WORKERS", "UP_MOONCAKE_WORKERS")}),
    # one module moves to a new name while another still reads the old one; a test's variable renamed
    3: ("Use the pool timeout", {"lib/other.py": OTHER.replace("UP_SHARED_TIMEOUT", "UP_OTHER_TIMEOUT"),
                                 "tests/test_connector.py": "import os\n\n\ndef test_x():\n"
                                                            "    assert os.getenv('CI_NEW') is None\n"}),
    # a read dropped and an unrelated one added elsewhere in the file: no rename
    4: ("Read the batch size", {"lib/connector.py": CONNECTOR.replace(
        "UP_NIXL_ABORT_REQUEST_TIMEOUT", "UP_MOONCAKE_ABORT_REQUEST_TIMEOUT").replace(
        "    def workers(self):\n        return int(os.getenv(\"UP_CONNECTOR_WORKERS\", \"4\"))\n",
        "    def workers(self):\n        return 4\n\n    def batch(self):\n        return os.environ.get(\"UP_BATCH\")\n")}),
    # a read moved to another module in the same PR: still read, nothing to do
    # three variables a module stops reading at once (a profiler moved to a config object): one sentence
    6: ("Profile through the config", {"lib/profile.py": "def profile(cfg):\n"
                                                          "    return cfg.profiler_dir, cfg.with_stack, cfg.memory\n"}),
    5: ("Move the batch size to the pool", {
        "lib/connector.py": CONNECTOR.replace("UP_NIXL_ABORT_REQUEST_TIMEOUT", "UP_MOONCAKE_ABORT_REQUEST_TIMEOUT")
        .replace("    def workers(self):\n        return int(os.getenv(\"UP_CONNECTOR_WORKERS\", \"4\"))\n",
                 "    def workers(self):\n        return 4\n"),
        "lib/pool.py": "import os\n\nfrom up import envs\n\n\ndef wait():\n    return envs.UP_SHARED_TIMEOUT\n\n\n"
                       "def batch():\n    return os.environ.get(\"UP_BATCH\")\n"}),
    # the platform stops forcing a variable it wrote for the process (vllm-ascend #5566's VLLM_ENABLE_CUDAGRAPH_GC):
    # a write is no read, and readers set nothing; then it stops reading the one it did read
    7: ("Cleanup platform", {"lib/platform.py": PLATFORM.replace('os.environ["UP_GRAPH_GC"] = "1"\n\n\n', "")}),
    8: ("Detect the device", {"lib/platform.py": "def device():\n    return 'npu'\n"}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    repo = tmp_path_factory.mktemp("envreads") / "up"
    prs = commit_week(repo, BASE, PRS)
    state: Path = tmp_path_factory.mktemp("s")
    return week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state)).changes


def _renamed(changes: list[Change]) -> list[tuple[str, str, str]]:
    return [(c.before, c.after, c.reach) for c in changes if c.kind == "env" and c.detail.startswith("renamed")]


def test_a_variable_renamed_where_a_module_reads_it_asks_readers_to_rename_it(
        week: dict[int, list[Change]]) -> None:
    assert _renamed(week[1]) == [("UP_NIXL_ABORT_REQUEST_TIMEOUT", "UP_MOONCAKE_ABORT_REQUEST_TIMEOUT", "public")]
    assert actions(week[1], "en") == ["Rename the environment variable `UP_NIXL_ABORT_REQUEST_TIMEOUT` to "
                                      "`UP_MOONCAKE_ABORT_REQUEST_TIMEOUT` where you set it."]
    assert actions(week[1], "zh-CN") == ["将设置处的环境变量 `UP_NIXL_ABORT_REQUEST_TIMEOUT` 改名为 "
                                         "`UP_MOONCAKE_ABORT_REQUEST_TIMEOUT`。"]
    assert [c for c in week[1] if c.detail.startswith("renamed")][0].breaks


def test_an_os_getenv_renamed_is_a_rename_too(week: dict[int, list[Change]]) -> None:
    assert _renamed(week[2]) == [("UP_CONNECTOR_WORKERS", "UP_MOONCAKE_WORKERS", "public")]


def test_an_old_name_still_read_elsewhere_or_in_a_test_asks_nothing(week: dict[int, list[Change]]) -> None:
    assert _renamed(week[3]) == [] and actions(week[3], "en") == []


def test_a_read_dropped_beside_an_unrelated_new_one_is_no_rename(week: dict[int, list[Change]]) -> None:
    assert _renamed(week[4]) == []


def _unread(changes: list[Change]) -> list[str]:
    return [c.symbol for c in changes if c.kind == "env" and c.detail == "no longer read"]


def test_a_variable_no_module_reads_any_more_asks_readers_to_move_off_it(week: dict[int, list[Change]]) -> None:
    # #4 stops reading UP_MOONCAKE_WORKERS (workers() returns 4) and reads nothing in its place
    assert _unread(week[4]) == ["UP_MOONCAKE_WORKERS"]
    assert actions(week[4], "en") == ["Move off the environment variable `UP_MOONCAKE_WORKERS`: main no longer reads "
                                      "it, so setting it does nothing now (see this PR for what replaces it)."]


def test_a_read_moved_to_another_module_is_still_read(week: dict[int, list[Change]]) -> None:
    assert _unread(week[5]) == [] and actions(week[5], "en") == []


def test_several_variables_a_pr_stops_reading_are_one_action(week: dict[int, list[Change]]) -> None:
    assert sorted(_unread(week[6])) == ["UP_PROFILER_DIR", "UP_PROFILER_MEMORY", "UP_PROFILER_STACK"]
    assert actions(week[6], "en") == [
        "Move off the environment variables `UP_PROFILER_DIR`, `UP_PROFILER_MEMORY`, `UP_PROFILER_STACK`: main no "
        "longer reads them, so setting them does nothing now (see this PR for what replaces them)."]


def test_a_variable_the_code_stopped_writing_is_no_setting_it_stopped_reading(week: dict[int, list[Change]]) -> None:
    assert [c for c in week[7] if c.kind == "env"] == [] and actions(week[7], "en") == []
    assert _unread(week[8]) == ["UP_DEVICE"]  # an os.environ["X"] read stays a read
