"""A config key is removed only when no shipped module of the tree at the merge commit reads it any more
(prdigest/collect/facts/configkeys.py ``still_read``): a read moved from one module into the config object keeps the
key, and asks nothing of a reader; the last read removed is a fact and an action. Real repositories
(tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import commit_week

CONFIG = """
class GraphExConfig:
    def __init__(self, fuse=True):
        self.fuse = fuse


class PluginConfig:
    def __init__(self, vllm_config):
        additional_config = vllm_config.additional_config or {}
        self.graph_ex_config = GraphExConfig(**additional_config.get("graph_ex_config", {}))
"""
PASSES = """
class PassManager:
    def __init__(self, config):
        self.graph_ex_config: dict = config.additional_config.get("graph_ex_config", {})
        self.fuse = self.graph_ex_config.get("fuse", True)
"""
PASSES_MOVED = """
from lib.config import get_plugin_config


class PassManager:
    def __init__(self, config):
        self.graph_ex_config = get_plugin_config().graph_ex_config
        self.fuse = self.graph_ex_config.fuse
"""
BASE = {
    "lib/__init__.py": "",
    "lib/config.py": CONFIG,
    "lib/passes.py": PASSES,
    # a test still writing the key is no read of it
    "tests/test_config.py": 'def test_config():\n    cfg = {"graph_ex_config": {"fuse": False}}\n    assert cfg\n',
}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Read the graph config once", {"lib/passes.py": PASSES_MOVED}),
    2: ("Drop the graph config", {"lib/config.py": CONFIG.replace(
        '        self.graph_ex_config = GraphExConfig(**additional_config.get("graph_ex_config", {}))\n',
        "        self.graph_ex_config = GraphExConfig()\n")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    repo = tmp_path_factory.mktemp("keys") / "up"
    prs = commit_week(repo, BASE, PRS)
    state: Path = tmp_path_factory.mktemp("s")
    return week_facts(prs, surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=state)).changes


def test_a_read_moved_into_the_config_object_keeps_the_key(week: dict[int, list[Change]]) -> None:
    assert not [c for c in week[1] if c.kind == "config"]
    assert actions(week[1], "en") == []


def test_the_last_read_removed_is_the_key_removed(week: dict[int, list[Change]]) -> None:
    [gone] = [c for c in week[2] if c.kind == "config"]
    assert (gone.symbol, gone.detail, gone.path) == ("graph_ex_config", "removed", "lib/config.py")
    assert actions(week[2], "en") == ["Stop setting the config key `graph_ex_config`; it was removed."]


def test_without_a_clone_a_key_another_changed_file_still_reads_is_kept() -> None:
    from prdigest.collect.facts.commit import commit_facts
    from prdigest.collect.git.diff import CommitDiff, FileDiff
    files = (FileDiff(status="M", path="lib/passes.py", before=PASSES, after=PASSES_MOVED),
             FileDiff(status="M", path="lib/config.py", before=CONFIG, after=CONFIG.replace("fuse=True", "fuse=False")))
    both = [c for c in commit_facts(CommitDiff("a" * 40, "b" * 40, files), Surface()) if c.kind == "config"]
    # ``fuse`` turning off is a fact of its own (tests/test_default_flips.py); no key is removed
    assert [(c.symbol, c.detail) for c in both] == [("GraphExConfig.fuse", "default")]
    alone = commit_facts(CommitDiff("a" * 40, "b" * 40, files[:1]), Surface())  # nothing in sight reads it
    assert [(c.symbol, c.detail) for c in alone if c.kind == "config"] == [("graph_ex_config", "removed")]
