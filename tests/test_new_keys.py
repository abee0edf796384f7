"""A check of a setting the PR itself introduces asks nothing: the key its docs name for the first time, read by
the checking module for the first time (vllm-ascend #5168's ``prefill_pp_layer_partition``), even where another
module reads a key of that name from its own table. A check of a key the docs named before still asks
(prdigest/collect/facts/newkeys.py). Real repositories (tests/git_support.py)."""

from __future__ import annotations

import pytest

from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import week_changes

MOONCAKE = """
class MooncakeConnector:
    def __init__(self, vllm_config):
        extra = vllm_config.kv_transfer_config.kv_connector_extra_config
        prefill = extra.get("prefill", {})
        self.partition = prefill.get("layer_partition")
"""
POOL = """
class PoolWorker:
    def __init__(self, vllm_config):
        self.backend = vllm_config.kv_transfer_config.kv_connector_extra_config.get("backend", "mooncake")
"""
#: The decode side now stores too, with a layer partition of its own, checked as it is read.
POOL_PUT = """
class PoolWorker:
    def __init__(self, vllm_config):
        self.backend = vllm_config.kv_transfer_config.kv_connector_extra_config.get("backend", "mooncake")
        self.put = vllm_config.kv_transfer_config.kv_connector_extra_config.get("consumer_is_to_put", False)
        self.partitions = None
        if self.put:
            text = vllm_config.kv_transfer_config.kv_connector_extra_config.get("layer_partition", None)
            if text is not None:
                self.partitions = [int(x) for x in text.split(",")]
                if sum(self.partitions) != 4:
                    raise ValueError(f"layer_partition {sum(self.partitions)=} does not match the layers.")
"""
PLATFORM = """
def check_and_update_config(vllm_config):
    additional_config = vllm_config.additional_config or {}
    return additional_config.get("layer_sharding")
"""
PLATFORM_CHECKED = PLATFORM.replace("    return additional_config", """    if additional_config.get("layer_sharding") and vllm_config.kv_transfer_config is None:
        raise ValueError("layer_sharding can only be enabled with PD disaggregation.")
    return additional_config""")
GUIDE = "# KV pool\n\nSet `backend` in `kv_connector_extra_config`.\n"
BASE = {"plug/__init__.py": "", "plug/mooncake.py": MOONCAKE, "plug/pool.py": POOL, "plug/platform.py": PLATFORM,
        "docs/user_guide/kv_pool.md": GUIDE,
        "docs/user_guide/additional_config.md": "| key | type |\n| --- | --- |\n| `layer_sharding` | list |\n"}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Decode saves the KV cache", {"plug/pool.py": POOL_PUT, "docs/user_guide/kv_pool.md": GUIDE + (
        "\nThe decode node stores too with `consumer_is_to_put: true`; with prefill PP set `layer_partition`.\n")}),
    2: ("Refuse layer sharding without PD", {"plug/platform.py": PLATFORM_CHECKED}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("newkeys"), BASE, PRS)


def _rejected(changes: list[Change]) -> list[str]:
    return [c.symbol for c in changes if c.detail == "rejected"]


def test_a_check_of_a_key_the_pr_documents_for_the_first_time_asks_nothing(week: dict[int, list[Change]]) -> None:
    assert _rejected(week[1]) == [] and actions(week[1], "en") == []


def test_a_check_of_a_key_the_docs_named_before_still_asks(week: dict[int, list[Change]]) -> None:
    assert _rejected(week[2]) == ["layer_sharding"]
    assert actions(week[2], "en") == ["Check where you set the config key `layer_sharding`: a new check stops startup "
                                      "with it where it does not belong (`layer_sharding can only be enabled with PD "
                                      "disaggregation.`)."]
