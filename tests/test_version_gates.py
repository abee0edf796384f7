"""A release of the upstream a PR stops supporting: the last version gate on it (``up_version_is("0.15.0")``)
removed from shipped code is a ``dependency`` fact (detail ``support dropped``) and the action to upgrade; a gate
removed from one file while another module of the tree still has it drops nothing, nor do the gates of a release
older than every release main pinned before the PR; a gate forgotten in one module keeps nothing supported when the
PR's CI stops testing that release (prdigest/collect/facts/versiongates.py, pinned.py, tested.py). Real repositories (tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change
from tests.git_support import commit_week

ATTN = '''from lib.utils import up_version_is


def seq_lens(x):
    if up_version_is("0.15.0"):
        return x
    return x + 1
'''
SAMPLER = '''from lib.utils import up_version_is


def probs(x):
    if not up_version_is("0.15.0"):
        return x * 2
    return x
'''
WORKFLOW = """
on:
  workflow_call:
    inputs:
      up_version:
        required: false
        default: "v0.16.0"
jobs:
  unit:
    strategy:
      matrix:
        up_version: [8b6325758cce5f9c36d38f2462edbd368b97a07c, v0.16.0]
"""
BASE = {"lib/__init__.py": "", "lib/utils.py": "def up_version_is(v):\n    return v == '0.15.0'\n",
        "lib/attn.py": ATTN, "lib/sampler.py": SAMPLER,
        # main installs 0.15.0; a gate on 0.14.0 is left over from before that pin moved
        "Dockerfile": "FROM python:3.11\nARG UP_TAG=v0.15.0\nRUN git clone --branch $UP_TAG up\n",
        "lib/old.py": 'from lib.utils import up_version_is\n\nLEGACY = up_version_is("0.14.0")\n',
        "lib/spec.py": 'from lib.utils import up_version_is\n\nOLD_SPEC = up_version_is("0.16.0")\n',
        ".github/workflows/test.yaml": WORKFLOW,
        "tests/test_attn.py": 'from lib.utils import up_version_is\n\n\ndef test_gate():\n    up_version_is("0.14.0")\n'}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    # one file's gate goes; the sampler still gates on 0.15.0: still supported
    1: ("Simplify seq_lens", {"lib/attn.py": "def seq_lens(x):\n    return x + 1\n"}),
    # the last gate on 0.15.0 goes (a gate on the next release takes its place); a test's gate is no support
    2: ("clean 0.15.0 support", {"lib/sampler.py": SAMPLER.replace('"0.15.0"', '"0.16.0"'),
                                 "tests/test_attn.py": "def test_gate():\n    pass\n"}),
    # the last gate on a release older than every release main installs goes: dead code cleaned up
    3: ("clean 0.14.0 leftovers", {"lib/old.py": "LEGACY = False\n"}),
    # CI moves to the next release and the gates on the one it no longer tests go, one forgotten in spec.py
    4: ("upgrade to 0.17.0", {"lib/sampler.py": "def probs(x):\n    return x * 2\n",
                              ".github/workflows/test.yaml": WORKFLOW.replace("v0.16.0", "v0.17.0")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    repo = tmp_path_factory.mktemp("gates") / "up"
    prs = commit_week(repo, BASE, PRS)
    state: Path = tmp_path_factory.mktemp("s")
    return week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state)).changes


def _dropped(changes: list[Change]) -> list[tuple[str, str, str]]:
    return [(c.symbol, c.before, c.reach) for c in changes if c.detail == "support dropped"]


def test_a_gate_still_in_another_module_drops_no_release(week: dict[int, list[Change]]) -> None:
    assert _dropped(week[1]) == []
    assert actions(week[1], "en") == []


def test_the_last_gate_on_a_release_removed_asks_to_upgrade(week: dict[int, list[Change]]) -> None:
    assert _dropped(week[2]) == [("up", "0.15.0", "public")]
    assert actions(week[2], "en") == ["main no longer works with `up` `0.15.0`: upgrade `up` before pulling main."]
    assert actions(week[2], "zh-CN") == ["main 不再兼容 `up` `0.15.0`：拉取 main 前先升级 `up`。"]
    fact = next(c for c in week[2] if c.detail == "support dropped")
    assert fact_line(fact, "en") == "no longer works with `up` `0.15.0`: its last version gate removed"


def test_gates_of_a_release_main_had_moved_past_ask_nothing(week: dict[int, list[Change]]) -> None:
    assert _dropped(week[3]) == []
    assert actions(week[3], "en") == []


def test_a_release_ci_stops_testing_is_dropped_though_a_gate_on_it_is_forgotten(
        week: dict[int, list[Change]]) -> None:
    assert _dropped(week[4]) == [("up", "0.16.0", "public")]
    assert actions(week[4], "en") == ["main no longer works with `up` `0.16.0`: upgrade `up` before pulling main."]


def test_a_release_dropped_with_its_pin_or_beside_an_upgrade_is_said_once() -> None:
    gate = Change(kind="dependency", symbol="vllm", path="lib/attn.py", before="0.18.0", after="",
                  detail="support dropped", language="text", reach="public")
    tag = Change(kind="dependency", symbol="VLLM_TAG", path="Dockerfile", before="v0.18.0", after="", reach="public")
    commit = Change(kind="dependency", symbol="VLLM_COMMIT", path="Dockerfile", before="",
                    after="35141a7e0000000000000000000000000000aaaa", reach="public")
    pin = Change(kind="dependency", symbol="vllm", path="requirements.txt", before="vllm==0.18.0",
                 after="vllm==0.19.0", reach="public")
    assert [a for a in actions([gate, tag, commit], "en") if "0.18.0" in a] == [
        "main no longer supports `VLLM` `v0.18.0`: install `VLLM` at commit `35141a7e00` before pulling main."]
    assert actions([gate, pin], "en") == ["Upgrade `vllm` to `0.19.0` before pulling main."]
