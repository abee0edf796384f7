"""Deprecations a PR announces, read from a real repository (tests/git_support.py): each name a line it adds
deprecates is a fact, with the release that removes it and what to use instead; with a removal release it is
an action, without one only a fact; a deprecation said before, or in a test, is none
(prdigest/collect/facts/deprecations.py)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change, PullRequest
from tests.git_support import _patches, commit, git, write

BASE = {
    "pkg/__init__.py": "from pkg.engine import Engine\n",
    "pkg/envs.py": '''
        ENVS = {
            # DEPRECATED: VLLM_OLD_FLAG is kept for one more release.
            "VLLM_OLD_FLAG": lambda: 0,
            "VLLM_ENABLE_FLASHCOMM1": lambda: 0,
            "VLLM_BALANCE_SCHEDULING": lambda: 0,
        }
        ''',
    "pkg/engine.py": '''
        import logging

        logger = logging.getLogger(__name__)


        class Engine:
            def start(self, legacy_mode=None):
                return legacy_mode
        ''',
    "tests/test_engine.py": "def test_start():\n    assert True\n",
}
CHANGES = {
    "pkg/envs.py": '''
        ENVS = {
            # DEPRECATED: VLLM_OLD_FLAG is kept for one more release.
            "VLLM_OLD_FLAG": lambda: 0,
            # DEPRECATED: use additional_config.enable_flashcomm1 instead.
            "VLLM_ENABLE_FLASHCOMM1": lambda: 0,
            # DEPRECATED: VLLM_BALANCE_SCHEDULING will be removed in v0.21.0.
            # Use --additional-config '{"enable_balance_scheduling": true}' instead.
            "VLLM_BALANCE_SCHEDULING": lambda: 0,
        }
        ''',
    "pkg/engine.py": '''
        import logging

        logger = logging.getLogger(__name__)


        class Engine:
            def start(self, legacy_mode=None):
                if legacy_mode is not None:
                    logger.warning("`legacy_mode` is deprecated and will be removed in v0.22. "
                                   "Use `mode` instead.")
                return legacy_mode
        ''',
    "tests/test_engine.py": "def test_start():\n    # the deprecated `legacy_mode` still works\n    assert True\n",
}


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> list[Change]:
    repo = tmp_path_factory.mktemp("deprecations") / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    commit(repo, "Initial layout")
    write(repo, CHANGES)
    sha = commit(repo, "Move settings to the additional config (#12)")
    pr = PullRequest(number=12, url="https://github.com/o/r/pull/12", title="Move settings to the additional config",
                     author="dev", merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                     files=_patches(repo, sha))
    found = week_facts([pr], surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path_factory.mktemp("s")))
    return [c for c in found.changes[12] if c.kind == "deprecated"]


def test_each_name_a_new_line_deprecates_is_a_fact(facts: list[Change]) -> None:
    assert [(c.symbol, c.after, c.detail, c.reach) for c in facts] == [
        ("legacy_mode", "v0.22", "mode", "public"),
        ("VLLM_ENABLE_FLASHCOMM1", "", "additional_config.enable_flashcomm1", "public"),
        ("VLLM_BALANCE_SCHEDULING", "v0.21.0", '--additional-config \'{"enable_balance_scheduling": true}', "public"),
    ]
    assert fact_line(facts[2], "zh-CN") == "弃用 `VLLM_BALANCE_SCHEDULING`，将于 `v0.21.0` 移除"


def test_a_deprecation_with_its_removal_release_or_its_replacement_is_an_action(facts: list[Change]) -> None:
    # with its replacement and no release named yet: move before it is removed (tests/test_reader_actions.py)
    assert actions(facts, "en") == [
        "Move `VLLM_ENABLE_FLASHCOMM1` to `additional_config.enable_flashcomm1` before the old name is removed.",
        "Move off `legacy_mode` to `mode` before `v0.22`, which removes it.",
        "Move off `VLLM_BALANCE_SCHEDULING` to `--additional-config '{\"enable_balance_scheduling\": true}` "
        "before `v0.21.0`, which removes it."]


#: vllm-ascend #6442: a comment saying "deprecated" above the old variable's read, then the warning that names the
#: removal release ("in a v0.16.0 version") and the replacement, over two string literals.
COMPAT_BEFORE = '''
import os


class Config:
    def __init__(self, additional_config):
        self.prefetch = additional_config.get("weight_prefetch_config", {})
'''
COMPAT_AFTER = '''
import os
import warnings


class Config:
    def __init__(self, additional_config):
        self.prefetch = additional_config.get("weight_prefetch_config", {})
        self.trace = os.getenv("VLLM_TRACE_PREFETCH")
        # Deprecated env var handling for backward compatibility
        if os.getenv("VLLM_OLD_PREFETCH", "0") == "1":
            self.prefetch = {"enabled": True, "size": int(os.getenv("VLLM_OLD_PREFETCH_SIZE", "0")),
                             "trace": os.getenv("VLLM_TRACE_PREFETCH")}
            warnings.warn(
                "VLLM_OLD_PREFETCH is deprecated and will be removed in a v0.16.0 version. "
                "Please use weight_prefetch_config in additional-config for now instead.",
                DeprecationWarning,
            )
'''


def test_a_warning_after_a_comment_on_the_same_name_gives_its_removal_release_and_replacement(
        tmp_path_factory: pytest.TempPathFactory) -> None:
    repo = tmp_path_factory.mktemp("compat") / "up"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, {"pkg/__init__.py": "", "pkg/config.py": COMPAT_BEFORE})
    commit(repo, "Initial layout")
    write(repo, {"pkg/config.py": COMPAT_AFTER})
    sha = commit(repo, "Refactor the MLP prefetch (#13)")
    pr = PullRequest(number=13, url="https://github.com/o/r/pull/13", title="Refactor the MLP prefetch",
                     author="dev", merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), merge_commit=sha,
                     files=_patches(repo, sha))
    found = week_facts([pr], surface=Surface(), clone=open_clone(repo.as_uri(), state_dir=tmp_path_factory.mktemp("s")))
    deprecated = [c for c in found.changes[13] if c.kind == "deprecated"]
    # the size read only under the old switch goes with it; the trace variable, read outside too, is still in use
    assert [(c.symbol, c.after, c.detail) for c in deprecated] == [
        ("VLLM_OLD_PREFETCH", "v0.16.0", "weight_prefetch_config in additional-config"),
        ("VLLM_OLD_PREFETCH_SIZE", "v0.16.0", "weight_prefetch_config in additional-config")]
    # one thing to do: said once for both
    assert actions(deprecated, "en") == [
        "Move off `VLLM_OLD_PREFETCH`, `VLLM_OLD_PREFETCH_SIZE` to `weight_prefetch_config in additional-config` "
        "before `v0.16.0`, which removes them."]
    assert actions(deprecated, "zh-CN") == [
        "`VLLM_OLD_PREFETCH`、`VLLM_OLD_PREFETCH_SIZE` 将于 `v0.16.0` 移除：请在此之前改用 "
        "`weight_prefetch_config in additional-config`。"]
