"""Config keys moved under a nested config, read from a real repository (tests/git_support.py).

A key the code stops reading that a config the PR adds now reads (by its defaults, or a row the user docs move to
that config's table, renamed or not) is one migration: "move these keys under ``eplb_config``"; a key nothing took
the place of stays a removal, and a docs table reorganised while the code reads the same keys asks nothing."""

from __future__ import annotations

import pytest

from prdigest.collect.facts.configmoves import doc_moves, table_rows
from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change
from tests.git_support import week_changes

CONFIG = '''
class AscendConfig:
    """The plugin's options, read from --additional-config."""

    def __init__(self, additional_config):
        self.dump_path = additional_config.get("dump_path", None)
        self.dynamic_balance = additional_config.get("dynamic_balance", False)
        self.balance_map_path = additional_config.get("balance_map_path", None)
        self.policy_type = additional_config.get("policy_type", 1)
        self.update_iterations = additional_config.get("update_iterations", 400)
        self.gate_balance = additional_config.get("gate_balance", False)
        self.legacy_cache = additional_config.get("legacy_cache", False)
        self.enable_fastpath = additional_config.get("enable_fastpath", False)
'''
TABLE = """# Additional configuration

The following table lists the options:

| Name | Type | Default | Description |
| ---- | ---- | ------- | ----------- |
| `dump_path` | str | `None` | Where to dump. |
| `dynamic_balance` | bool | `False` | Whether to enable dynamic balancing. |
| `balance_map_path` | str | `None` | The expert map to load. |
| `update_iterations` | int | `400` | Forward iterations when balancing begins. Tune per workload. |
| `gate_balance` | bool | `False` | Whether to balance only once. |
| `legacy_cache` | bool | `False` | Whether to use the legacy cache. |
"""
MOVED_CONFIG = '''
class AscendConfig:
    """The plugin's options, read from --additional-config."""

    def __init__(self, additional_config):
        self.dump_path = additional_config.get("dump_path", None)
        balance_config = additional_config.get("balance_config", {})
        self.balance_config = BalanceConfig(balance_config)
        self.legacy_cache = additional_config.get("legacy_cache", False)
        self.enable_fastpath = additional_config.get("enable_fastpath", False)


class BalanceConfig:
    """The balancer's options."""

    _defaults = {
        "dynamic_balance": False,
        "balance_map_path": None,
        "heat_collection_interval": 400,
        "policy_type": 1,
    }

    def __init__(self, user_config):
        self.config = dict(self._defaults, **user_config)
'''
MOVED_TABLE = TABLE.replace(
    "| `dynamic_balance` | bool | `False` | Whether to enable dynamic balancing. |\n"
    "| `balance_map_path` | str | `None` | The expert map to load. |\n"
    "| `update_iterations` | int | `400` | Forward iterations when balancing begins. Tune per workload. |\n"
    "| `gate_balance` | bool | `False` | Whether to balance only once. |\n",
    "| `balance_config` | dict | `{}` | Options of the balancer. |\n") + """
**balance_config**

| Name | Type | Default | Description |
| ---- | ---- | ------- | ----------- |
| `dynamic_balance` | bool | `False` | Whether to enable dynamic balancing. |
| `balance_map_path` | str | `None` | The expert map to load. |
| `heat_collection_interval` | int | `400` | Forward iterations when balancing begins. |
"""

FASTPATH = """

class FastpathConfig:
    def __init__(self, enable: bool = False, static_shapes: bool = False, **kwargs):
        self.enable = enable
        self.static_shapes = static_shapes
"""

BASE = {
    "plugin/__init__.py": '"""plugin."""\n\n\ndef register():\n    return "plugin.platform:Platform"\n',
    "plugin/platform.py": "class Platform:\n    pass\n",
    "plugin/ascend_config.py": CONFIG,
    "docs/source/user_guide/configuration/additional_config.md": TABLE,
}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Move the balancer's options into balance_config", {
        "plugin/ascend_config.py": MOVED_CONFIG,
        "docs/source/user_guide/configuration/additional_config.md": MOVED_TABLE}),
    2: ("Drop the legacy cache", {
        "plugin/ascend_config.py": MOVED_CONFIG.replace(
            '        self.legacy_cache = additional_config.get("legacy_cache", False)\n', ""),
        "docs/source/user_guide/configuration/additional_config.md": MOVED_TABLE.replace(
            "| `legacy_cache` | bool | `False` | Whether to use the legacy cache. |\n", "")}),
    # the docs move a row under another config while the code reads the same keys: a page reorganised
    3: ("Document dump_path with the balancer", {
        "docs/source/user_guide/configuration/additional_config.md": MOVED_TABLE.replace(
            "| `dump_path` | str | `None` | Where to dump. |\n", "").replace(
            "| `heat_collection_interval` |", "| `dump_path` | str | `None` | Where to dump. |\n"
                                             "| `heat_collection_interval` |")}),
    # the feature's switch moves into its own config, handed to the class as keywords
    4: ("Refactor the fastpath config", {"plugin/ascend_config.py": MOVED_CONFIG.replace(
        '        self.enable_fastpath = additional_config.get("enable_fastpath", False)\n',
        '        fastpath_config = additional_config.get("fastpath_config", {})\n'
        '        self.fastpath_config = FastpathConfig(**fastpath_config)\n') + FASTPATH}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("moves"), BASE, PRS)


def test_keys_moved_under_a_nested_config_are_one_migration_with_their_renames(week: dict[int, list[Change]]) -> None:
    moved = {c.symbol: c.after for c in week[1] if c.kind == "config" and c.detail == "moved"}
    assert moved == {"dynamic_balance": "balance_config.dynamic_balance",
                     "balance_map_path": "balance_config.balance_map_path",
                     "update_iterations": "balance_config.heat_collection_interval",  # the docs' row, renamed
                     "policy_type": "balance_config.policy_type"}  # undocumented: the new class's defaults say it
    assert actions(week[1], "en") == [
        "Move the config keys `dynamic_balance`, `balance_map_path`, `policy_type`, `update_iterations` under "
        "`balance_config` where you set them, renaming `update_iterations` to `heat_collection_interval`.",
        "Stop setting the config key `gate_balance`; it was removed."]
    assert actions(week[1], "zh-CN")[0].startswith("将设置处的配置项 `dynamic_balance`")
    line = fact_line(next(c for c in week[1] if c.symbol == "update_iterations"), "en")
    assert line == "moved config field `update_iterations` to `balance_config.heat_collection_interval`"
    assert all(c.breaks for c in week[1] if c.detail == "moved")


def test_a_key_nothing_took_the_place_of_stays_a_removal(week: dict[int, list[Change]]) -> None:
    assert actions(week[2], "en") == ["Stop setting the config key `legacy_cache`; it was removed."]


def test_a_docs_table_reorganised_while_the_code_reads_the_same_keys_asks_nothing(
        week: dict[int, list[Change]]) -> None:
    assert actions(week[3], "en") == []


def test_a_rename_needs_one_look_alike_each_way() -> None:
    before = ("| Name | Type |\n| -- | -- |\n| `a_x` | int | `1` | Iterations. |\n"
              "| `b_x` | int | `1` | Iterations. |\n")
    after = ("**new_config**\n\n| Name | Type |\n| -- | -- |\n| `c_x` | int | `1` | Iterations. |\n")
    assert table_rows(after) == [("new_config", "c_x", ("int", "`1`", "Iterations."))]
    # two old rows alike the one new row: which was renamed cannot be told
    assert doc_moves([("docs/a.md", before, after)]) == {}
    assert doc_moves([("docs/developer_guide/a.md", before, after.replace("c_x", "a_x"))]) == {}
    assert doc_moves([("docs/a.md", before, after.replace("c_x", "a_x"))]) == {"a_x": "new_config.a_x"}


def test_a_feature_s_switch_moved_into_its_config_is_a_move_to_its_enable(week: dict[int, list[Change]]) -> None:
    assert actions(week[4], "en") == [
        "Move the config key `enable_fastpath` under `fastpath_config` where you set it, renaming `enable_fastpath` "
        "to `enable`."]
