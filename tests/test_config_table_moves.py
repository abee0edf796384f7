"""A nested config merged into another: the code stops reading ``fastpath_config`` while the user docs move its
table's rows under ``compile_config`` (``enable`` renamed ``enable_fastpath``, ``static_shapes`` as it was, as
vllm-ascend #5518 did with ``npugraph_ex_config``). Readers move what they set there, not stop setting it
(prdigest/collect/facts/configmoves.py); a config whose table went with nothing taking its rows stays a removal.
Real repositories (tests/git_support.py)."""

from __future__ import annotations

import pytest

from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import week_changes

CONFIG = '''
class AscendConfig:
    """The plugin's options, read from --additional-config."""

    def __init__(self, additional_config):
        fastpath_config = additional_config.get("fastpath_config", {})
        self.fastpath_config = FastpathConfig(**fastpath_config)
        compile_config = additional_config.get("compile_config", {})
        self.compile_config = CompileConfig(**compile_config)
        trace_config = additional_config.get("trace_config", {})
        self.trace_config = TraceConfig(**trace_config)


class FastpathConfig:
    def __init__(self, enable: bool = True, static_shapes: bool = False, **kwargs):
        self.enable = enable
        self.static_shapes = static_shapes


class TraceConfig:
    def __init__(self, level: int = 0, **kwargs):
        self.level = level


class CompileConfig:
    def __init__(self, fuse_norm: bool = True, **kwargs):
        self.fuse_norm = fuse_norm
'''
MERGED = CONFIG.replace('''        fastpath_config = additional_config.get("fastpath_config", {})
        self.fastpath_config = FastpathConfig(**fastpath_config)
''', "").replace('''class FastpathConfig:
    def __init__(self, enable: bool = True, static_shapes: bool = False, **kwargs):
        self.enable = enable
        self.static_shapes = static_shapes


''', "").replace('''    def __init__(self, fuse_norm: bool = True, **kwargs):
        self.fuse_norm = fuse_norm''', '''    def __init__(self, enable_fastpath: bool = True, static_shapes: bool = False, fuse_norm: bool = True, **kwargs):
        self.enable_fastpath = enable_fastpath
        self.static_shapes = static_shapes
        self.fuse_norm = fuse_norm''')
HEAD = "| Name | Type | Default | Description |\n| ---- | ---- | ------- | ----------- |\n"
ENABLE = "| `enable` | bool | `True` | Whether to enable the fastpath backend. |\n"
STATIC = "| `static_shapes` | bool | `False` | Whether to compile for static shapes. |\n"
FUSE = "| `fuse_norm` | bool | `True` | Whether to fuse the norm. |\n"
TABLE = ("# Additional configuration\n\n" + HEAD + "| `fastpath_config` | dict | `{}` | The fastpath options. |\n"
         "| `compile_config` | dict | `{}` | The compiler's options. |\n| `trace_config` | dict | `{}` | Tracing. |\n"
         "\n**fastpath_config**\n\n" + HEAD + ENABLE + STATIC
         + "\n**compile_config**\n\n" + HEAD + FUSE
         + "\n**trace_config**\n\n" + HEAD + "| `level` | int | `0` | How much to trace. |\n")
MERGED_TABLE = TABLE.replace("| `fastpath_config` | dict | `{}` | The fastpath options. |\n", "").replace(
    "\n**fastpath_config**\n\n" + HEAD + ENABLE + STATIC, "").replace(
    HEAD + FUSE, HEAD + ENABLE.replace("`enable`", "`enable_fastpath`") + STATIC + FUSE)
BASE = {
    "plugin/__init__.py": '"""plugin."""\n\n\ndef register():\n    return "plugin.platform:Platform"\n',
    "plugin/platform.py": "class Platform:\n    pass\n",
    "plugin/ascend_config.py": CONFIG,
    "docs/source/user_guide/configuration/additional_config.md": TABLE,
}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Merge the fastpath options into the compile config", {
        "plugin/ascend_config.py": MERGED, "docs/source/user_guide/configuration/additional_config.md": MERGED_TABLE}),
    # tracing removed, its table with it: nothing took its rows
    2: ("Drop tracing", {
        "plugin/ascend_config.py": MERGED.replace('''        trace_config = additional_config.get("trace_config", {})
        self.trace_config = TraceConfig(**trace_config)
''', ""),
        "docs/source/user_guide/configuration/additional_config.md": MERGED_TABLE.replace(
            "| `trace_config` | dict | `{}` | Tracing. |\n", "").replace(
            "\n**trace_config**\n\n" + HEAD + "| `level` | int | `0` | How much to trace. |\n", "")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("tables"), BASE, PRS)


def test_a_nested_config_whose_table_moved_into_another_is_each_key_moved(week: dict[int, list[Change]]) -> None:
    moved = {c.before: c.after for c in week[1] if c.kind == "config" and c.detail == "moved"}
    assert moved == {"fastpath_config.enable": "compile_config.enable_fastpath",
                     "fastpath_config.static_shapes": "compile_config.static_shapes"}
    assert actions(week[1], "en") == [
        "Move the config keys `fastpath_config.enable`, `fastpath_config.static_shapes` under `compile_config` where "
        "you set them, renaming `fastpath_config.enable` to `enable_fastpath`."]
    assert not [c for c in week[1] if c.kind == "config" and c.detail == "removed"]


def test_a_nested_config_whose_table_went_with_nothing_in_its_place_stays_a_removal(
        week: dict[int, list[Change]]) -> None:
    assert actions(week[2], "en") == ["Stop setting the config key `trace_config`; it was removed."]
