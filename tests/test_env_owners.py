"""A variable the repository stops reading asks readers to move off it only when the repository owns it: one its
env module declares, its user docs' page of variables names, or that carries its prefix. A vendor library's
variable it stopped reading (vllm-ascend #5545's ``HCCL_INTRA_PCIE_ENABLE``: what it chose is now the default) is
still read by that library: a fact, internal, saying why (prdigest/collect/facts/envowners.py). Real repositories
(tests/git_support.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.envowners import prefix
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import commit_week

ENVS = """
import os

env_variables = {
    "PLUG_COMPILE": lambda: bool(int(os.getenv("PLUG_COMPILE", "0"))),
    "PLUG_LOG_LEVEL": lambda: os.getenv("PLUG_LOG_LEVEL", "INFO"),
    "PLUG_CACHE_DIR": lambda: os.getenv("PLUG_CACHE_DIR"),
    "HCCL_SO_PATH": lambda: os.getenv("HCCL_SO_PATH"),
}
"""
COMM = """
import os


def hierarchical():
    return os.getenv("HCCL_INTRA_ROCE_ENABLE", "") == "0" and os.getenv("HCCL_INTRA_PCIE_ENABLE", "") == "1"


def fast_path():
    return os.getenv("PLUG_FAST_PATH", "0") == "1"


def tuning():
    return os.getenv("MOE_TUNING_LEVEL")


def cores():
    return os.getenv("BIND_CORES_NUM")
"""
DOCS = "# Environment variables\n\n| name | meaning |\n| --- | --- |\n| `MOE_TUNING_LEVEL` | how hard to tune |\n"
#: A tutorial exporting the collective library's variables, which the plugin's code never reads: its namespace.
TUTORIAL = ("# Serving on two nodes\n\n```bash\nexport HCCL_IF_IP=$local_ip\nexport HCCL_SOCKET_IFNAME=eth0\n"
            "export HCCL_BUFFSIZE=1024\nexport HCCL_INTRA_PCIE_ENABLE=1\n```\n")
BASE = {"plug/__init__.py": "", "plug/envs.py": ENVS, "plug/comm.py": COMM,
        "docs/user_guide/env_vars.md": DOCS, "docs/tutorials/two_nodes.md": TUTORIAL}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    # the vendor's variables and the plugin's own, all stopped being read at once
    1: ("Enable hierarchical ops by default", {"plug/comm.py": "def hierarchical():\n    return True\n\n\n"
                                              "def fast_path():\n    return True\n\n\ndef tuning():\n"
                                              "    return 2\n\n\ndef cores():\n    return 4\n"}),
}
#: The same change in a repository with no env module: nothing tells whose a variable is, the facts stand.
BARE = {"plug/__init__.py": "", "plug/comm.py": COMM}


def _week(root: Path, base: dict[str, str | None]) -> list[Change]:
    prs = commit_week(root / "up", base, PRS)
    return week_facts(prs, surface=Surface(), clone=open_clone((root / "up").as_uri(), state_dir=root / "s")).changes[1]


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> list[Change]:
    return _week(tmp_path_factory.mktemp("owners"), BASE)


def _unread(changes: list[Change]) -> dict[str, tuple[str, str]]:
    return {c.symbol: (c.reach, c.reach_how) for c in changes if c.kind == "env" and c.detail == "no longer read"}


def test_a_vendor_librarys_variable_no_longer_read_is_a_fact_not_an_action(facts: list[Change]) -> None:
    unread = _unread(facts)
    for name in ("HCCL_INTRA_PCIE_ENABLE", "HCCL_INTRA_ROCE_ENABLE"):
        reach, how = unread[name]
        assert reach == "internal", how
        assert how == ("a variable of another program's `HCCL_` namespace, whose variables its docs set and its code "
                       "does not read (`HCCL_BUFFSIZE`, `HCCL_IF_IP`, `HCCL_SOCKET_IFNAME`); the repository does not "
                       f"own it (not declared in `plug/envs.py`, nor under its prefix `PLUG_`): whatever else reads "
                       f"`{name}` still does")
    assert not [a for a in actions(facts, "en") if "HCCL" in a]


def test_the_repositorys_own_variables_by_prefix_docs_or_no_other_namespace_still_ask(facts: list[Change]) -> None:
    unread = _unread(facts)
    # BIND_CORES_NUM: neither declared nor prefixed, but no docs set other BIND_ variables: the repository's own
    assert {n: r for n, (r, _) in unread.items() if not n.startswith("HCCL_")} == {
        "PLUG_FAST_PATH": "public", "MOE_TUNING_LEVEL": "public", "BIND_CORES_NUM": "public"}
    assert actions(facts, "en") == ["Move off the environment variables `BIND_CORES_NUM`, `MOE_TUNING_LEVEL`, "
                                    "`PLUG_FAST_PATH`: main no longer reads them, so setting them does nothing now "
                                    "(see this PR for what replaces them)."]


def test_without_an_env_module_the_facts_stand(tmp_path: Path) -> None:
    assert all(reach == "public" for reach, _ in _unread(_week(tmp_path, BARE)).values())


def test_the_prefix_is_the_first_word_most_declared_names_share() -> None:
    assert prefix(["PLUG_A", "PLUG_B", "PLUG_C", "HCCL_SO_PATH"]) == "PLUG_"
    assert prefix(["PLUG_A", "HCCL_SO_PATH"]) == ""
