"""Action required holds what a reader sets, installs or runs, read from a real repository (tests/git_support.py).

Precision: a name moved into the ``__all__`` of a sub-package no doc leads to, a check already there reworded under
another setting's test, a check inside a class the PR adds (a new model's limits), and a variable both removed and
no longer read (said once) ask nothing more. Recall: a pin moving from a pre-release to its release is an upgrade,
a development requirement the shipped code imports (an optional backend) is a runtime one, a pin in the install
commands of the user docs moves what readers install (one in a contributor doc or a CI workflow does not), a system
package a Dockerfile users build from now installs is a requirement, and a table of migrated settings in the user
docs (or a warning naming old and new) asks readers to move before the old names are removed."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change
from tests.git_support import week_changes

ROOT = Path(__file__).resolve().parents[1]

ENVS = '''
import os

env_variables = {
    "PLUGIN_PROFILER_DIR": lambda: os.getenv("PLUGIN_PROFILER_DIR", ""),
    "PLUGIN_MONITOR_DAEMON": lambda: os.getenv("PLUGIN_MONITOR_DAEMON", "0"),
    "PLUGIN_ENABLE_NZ": lambda: int(os.getenv("PLUGIN_ENABLE_NZ", "1")),
    "PLUGIN_USE_OPTIMIZED": lambda: os.getenv("PLUGIN_USE_OPTIMIZED", "1"),
    "PLUGIN_FLASHCOMM": lambda: os.getenv("PLUGIN_FLASHCOMM", "0"),
}


def __getattr__(name):
    return env_variables[name]()
'''
WORKER = '''
from plugin import envs


class Worker:
    def start(self, cfg):
        if envs.PLUGIN_PROFILER_DIR:
            if envs.PLUGIN_MONITOR_DAEMON:
                raise RuntimeError("PLUGIN_MONITOR_DAEMON and PLUGIN_PROFILER_DIR cannot be both set at the same time.")
        return cfg
'''
#: The same check, reworded and reached through the profiler's new config rather than its variable.
WORKER_REWORDED = '''
from plugin import envs


class Worker:
    def start(self, cfg):
        profiler_config = cfg.profiler_config
        if profiler_config.profiler == "torch" and profiler_config.trace_dir:
            if envs.PLUGIN_MONITOR_DAEMON:
                raise RuntimeError("PLUGIN_MONITOR_DAEMON and torch profiler cannot be both enabled at the same time.")
        return cfg
'''
GRAPH = '''
from plugin import envs


class LlamaGraph:
    def initialize(self, model):
        return model
'''
#: A new model's graph (a class the PR adds) refuses a setting: nobody ran it before, nothing to change.
GRAPH_MOE = GRAPH + '''

class MoeGraph(LlamaGraph):
    def initialize(self, model):
        if envs.PLUGIN_ENABLE_NZ == 2:
            raise ValueError("MoeGraph does not support PLUGIN_ENABLE_NZ = 2!")
        return model
'''
#: The same check added to a class that was there: it refuses what readers ran.
GRAPH_CHECKED = GRAPH.replace("        return model\n", "        if envs.PLUGIN_ENABLE_NZ == 2:\n"
                              "            raise ValueError(\"LlamaGraph does not support PLUGIN_ENABLE_NZ = 2!\")\n"
                              "        return model\n")
ENCODER = '''
from plugin import envs


def pad(x):
    if envs.PLUGIN_USE_OPTIMIZED == "0":
        return x
    return x + [0]
'''
TUTORIAL = """# Running a MoE model

Install Triton Ascend:

```bash
python3 -m pip install -i https://test.example/simple/ triton-ascend==3.2.0.dev20260105
```
"""
CONTRIBUTING = """# Developer guide

```bash
pip install ruff==0.5.0
```
"""
WORKFLOW = """name: test
on: [pull_request]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: python3 -m pip install triton-ascend==3.2.0.dev20260105 mypy==1.0.0
"""
DOCKERFILE = """FROM base:1.0
ARG PLUGIN_TAG=v0.1.0
RUN apt-get update -y && apt-get install -y git vim-tiny && rm -rf /var/lib/apt/lists/*
RUN pip install -e /workspace/plugin
"""
RUNNER = '''
from xlite._C import Runtime


def run(model):
    return Runtime(model)
'''
ADDITIONAL_CONFIG = """# Additional configuration

Additional configuration lets the plugin control its own behaviour.

## How to use

| name | type | default |
|------|------|---------|
| `enable_flashcomm` | bool | `False` |
"""
MIGRATION = """# Additional configuration

Additional configuration lets the plugin control its own behaviour.

## Migration Guide

The plugin is migrating **3 environment variables** to `--additional-config`.

- Both are supported during the transition period.
- Environment variables will be **removed** in a future release.

### Quick Reference

| Environment Variable | Config Key | Type Conversion |
|---------------------|------------|-----------------|
| `PLUGIN_FLASHCOMM` | `enable_flashcomm` | `"1"` → `true` |
| `PLUGIN_ENABLE_NZ` | `weight_nz_mode` | Integer |
| `PLUGIN_MONITOR_DAEMON` | `monitor_use_daemon` | `"1"` → `true` |

## How to use

| name | type | default |
|------|------|---------|
| `enable_flashcomm` | bool | `False` |
"""
#: A table of settings added to a page that says nothing of a migration: no deprecation.
OPTIONS_TABLE = ADDITIONAL_CONFIG + """
## Environment variables it also reads

| Environment Variable | Config Key |
|---|---|
| `PLUGIN_USE_OPTIMIZED` | `use_optimized` |
"""

PLATFORM = '''
from plugin.compilation import CUDAGraphMode


class Platform:
    @classmethod
    def check_and_update_config(cls, vllm_config):
        compilation_config = vllm_config.compilation_config
        # full graphs come later: piecewise for now
        if compilation_config.cudagraph_mode == CUDAGraphMode.FULL_AND_PIECEWISE:
            compilation_config.cudagraph_mode = CUDAGraphMode.PIECEWISE
        if compilation_config.pass_level == 3:
            compilation_config.pass_level = 2
        return vllm_config
'''
GRAPH_DOC = """# Graph mode

Set `cudagraph_mode` in `--compilation-config` to choose how graphs are captured, and `fuse_norm_quant` in
`ascend_compilation_config` to fuse the norm and the quantization.
"""
COMPILATION = '''
class AscendCompilationConfig:
    def __init__(self, fuse_norm_quant: bool = False, fuse_qk_rope_pass: bool = False, **kwargs):
        self.fuse_norm_quant = fuse_norm_quant
        self.fuse_qk_rope_pass = fuse_qk_rope_pass
'''

BASE = {
    "plugin/__init__.py": '"""plugin."""\n\n\ndef register():\n    return "plugin.platform:Platform"\n',
    "plugin/envs.py": ENVS,
    "plugin/worker.py": WORKER,
    "plugin/graph.py": GRAPH,
    "plugin/eager.py": GRAPH,
    "plugin/encoder.py": ENCODER,
    "plugin/quant/__init__.py": '"""Quantization."""\n',
    "plugin/quant/utils.py": "def is_mx(kind):\n    return kind.startswith('mx')\n\n\ndef scale(x):\n    return x\n",
    "plugin/quant/methods/__init__.py": '"""Quantization methods."""\n\n__all__: list[str] = []\n',
    "plugin/xlite/__init__.py": "",
    "plugin/xlite/runner.py": RUNNER,
    "requirements.txt": "torch==2.9.0\ntorch-npu==2.9.0\nmooncake==0.3.8rc1\n",
    "requirements-dev.txt": "pytest==8.0.0\nxlite==0.1.0rc0\n",
    "docs/source/tutorials/moe.md": TUTORIAL,
    "docs/source/developer_guide/contributing.md": CONTRIBUTING,
    "docs/source/user_guide/configuration/additional_config.md": ADDITIONAL_CONFIG,
    ".github/workflows/test.yaml": WORKFLOW,
    "Dockerfile": DOCKERFILE,
    "plugin/platform.py": PLATFORM,
    "docs/source/installation.md": "```bash\npip install torch_npu==2.9.0\n```\n",
    "plugin/compilation.py": COMPILATION,
    "docs/source/user_guide/graph_mode.md": GRAPH_DOC,
    "Dockerfile.310p": "FROM quay.io/ascend/cann:9.0.0-310p-ubuntu22.04-py3.11\nRUN pip install -e /workspace/plugin\n",
}

#: Each PR of the week: its title and the files it writes.
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Quantization module refactor", {
        "plugin/quant/utils.py": "def scale(x):\n    return x\n",
        "plugin/quant/methods/__init__.py": '"""Quantization methods."""\n\n__all__ = ["is_mx"]\n\n\n'
                                            "def is_mx(kind):\n    return kind.startswith('mx')\n"}),
    2: ("Move the profiler to its config", {"plugin/worker.py": WORKER_REWORDED}),
    3: ("Support MoE models in the graph", {"plugin/graph.py": GRAPH_MOE}),
    4: ("Refuse NZ mode 2 in eager mode", {"plugin/eager.py": GRAPH_CHECKED}),
    5: ("Clean up the unused optimized-model switch", {
        "plugin/envs.py": ENVS.replace('    "PLUGIN_USE_OPTIMIZED": lambda: os.getenv("PLUGIN_USE_OPTIMIZED", "1"),\n',
                                       ""),
        "plugin/encoder.py": "def pad(x):\n    return x + [0]\n"}),
    6: ("Use the mooncake release", {"requirements.txt": "torch==2.9.0\ntorch-npu==2.9.0\nmooncake==0.3.8\n"}),
    7: ("Update triton ascend to its release", {
        "docs/source/tutorials/moe.md": TUTORIAL.replace("-i https://test.example/simple/ ", "").replace(
            "3.2.0.dev20260105", "3.2.0"),
        ".github/workflows/test.yaml": WORKFLOW.replace("3.2.0.dev20260105", "3.2.0"),
        "docs/source/developer_guide/contributing.md": CONTRIBUTING.replace("0.5.0", "0.6.0")}),
    8: ("Xlite MoE support", {"requirements-dev.txt": "pytest==8.1.0\nxlite==0.1.0rc1\n"}),
    9: ("Bump the test tools", {"requirements-dev.txt": "pytest==8.2.0\nxlite==0.1.0rc1\n"}),
    10: ("Install clang in the image for triton", {
        "Dockerfile": DOCKERFILE.replace("RUN pip install", "RUN apt-get update -y && \\\n    apt-get -y install "
                                         "clang-15 && \\\n    rm -rf /var/lib/apt/lists/*\nRUN pip install"),
        "Dockerfile.a5": "FROM base:2.0\nRUN yum install -y gcc-c++ && yum clean all\n"}),
    11: ("Document the migrated environment variables",
         {"docs/source/user_guide/configuration/additional_config.md": MIGRATION}),
    12: ("Document the variables the config reads",
         {"docs/source/user_guide/configuration/additional_config.md": OPTIONS_TABLE}),
    13: ("Deprecate the flashcomm variable", {"plugin/worker.py": WORKER_REWORDED + '''

def flashcomm_enabled(additional_config):
    if envs.PLUGIN_FLASHCOMM:
        logger.warning("PLUGIN_FLASHCOMM is deprecated; use additional_config enable_flashcomm instead.")
    return additional_config.get("enable_flashcomm", False)
'''}),
    14: ("Go back to the previous mooncake release", {"requirements.txt": "torch==2.9.0\ntorch-npu==2.9.0\nmooncake==0.3.7\n"}),
    16: ("Support FULL_AND_PIECEWISE", {"plugin/platform.py": PLATFORM.replace(
        "        if compilation_config.cudagraph_mode == CUDAGraphMode.FULL_AND_PIECEWISE:\n"
        "            compilation_config.cudagraph_mode = CUDAGraphMode.PIECEWISE\n", "").replace(
        "        if compilation_config.pass_level == 3:\n            compilation_config.pass_level = 2\n", "")}),
    17: ("Turn the fusion passes on", {"plugin/compilation.py": COMPILATION.replace("= False", "= True")}),
    18: ("Drop the flashcomm and NZ variables", {"plugin/envs.py": ENVS.replace(
        '    "PLUGIN_ENABLE_NZ": lambda: int(os.getenv("PLUGIN_ENABLE_NZ", "1")),\n', "").replace(
        '    "PLUGIN_FLASHCOMM": lambda: os.getenv("PLUGIN_FLASHCOMM", "0"),\n', "")}),
    19: ("Upgrade torch-npu", {"requirements.txt": "torch==2.9.0\ntorch-npu==2.10.0\nmooncake==0.3.7\n",
                               "docs/source/installation.md": "```bash\npip install torch_npu==2.10.0\n```\n"}),
    15: ("Upgrade the 310P image to the CANN beta", {
        "Dockerfile.310p": "FROM quay.io/ascend/cann:9.1.0-beta.1-310p-ubuntu22.04-py3.11\n"
                           "RUN pip install -e /workspace/plugin\n"}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("actions"), BASE, PRS)


@pytest.mark.parametrize(("number", "why"), [
    (1, "a name moved into the __all__ of a sub-package no doc or entry point leads to"),
    (2, "a check already there, reworded and reached through another setting's test"),
    (3, "a check inside a class the PR adds: a new model's limits"),
    (9, "a test tool pinned in the development requirements"),
    (12, "a table of settings on a page that says nothing of a migration"),
])
def test_what_no_reader_sets_installs_or_runs_asks_nothing(week: dict[int, list[Change]], number: int,
                                                          why: str) -> None:
    assert actions(week[number], "en") == [], why


def test_a_check_added_to_a_class_that_was_there_still_asks(week: dict[int, list[Change]]) -> None:
    assert actions(week[4], "en") == [
        "Check where you set the environment variable `PLUGIN_ENABLE_NZ`: a new check stops startup with it where "
        "it does not belong (`LlamaGraph does not support PLUGIN_ENABLE_NZ = 2!`)."]


def test_a_variable_removed_and_no_longer_read_is_said_once(week: dict[int, list[Change]]) -> None:
    assert actions(week[5], "en") == ["Stop setting the environment variable `PLUGIN_USE_OPTIMIZED`; it was removed."]


@pytest.mark.parametrize(("number", "language", "expected"), [
    (6, "en", ["Upgrade `mooncake` to `0.3.8` before pulling main."]),  # a release candidate to its release
    (6, "zh-CN", ["拉取 main 前先升级 `mooncake` 至 `0.3.8`。"]),
    # the tutorial's install command (not the contributor guide's, not CI's)
    (7, "en", ["Upgrade `triton-ascend` to `3.2.0` before pulling main."]),
    (14, "zh-CN", ["拉取 main 前先回退 `mooncake` 至 `0.3.7`。"]),  # said as a sentence, the version after "至"
    (15, "en", ["Upgrade `cann` to `9.1.0-beta.1` before pulling main."]),  # the beta named, not 9.1.0
    # the setting the docs name: its value is kept now (pass_level, which no doc names, asks nothing)
    (16, "en", ["`cudagraph_mode` set to `FULL_AND_PIECEWISE` is no longer turned into `PIECEWISE`: set the config "
                "key `cudagraph_mode` to `PIECEWISE` to keep the old behaviour."]),
    (16, "zh-CN", ["`cudagraph_mode` 为 `FULL_AND_PIECEWISE` 时不再被改为 `PIECEWISE`：如需保持旧行为，请将配置项 "
                   "`cudagraph_mode` 显式设为 `PIECEWISE`。"]),
    # a documented key's default flipped; the internal pass's switch no page names asks nothing
    (17, "en", ["`AscendCompilationConfig.fuse_norm_quant` is now on by default: set it to `False` to keep the old "
                "behaviour."]),
    # several settings of one kind removed: one thing to do, one sentence
    (18, "en", ["Stop setting the environment variables `PLUGIN_ENABLE_NZ`, `PLUGIN_FLASHCOMM`; they were removed."]),
    (18, "zh-CN", ["不再设置环境变量 `PLUGIN_ENABLE_NZ`、`PLUGIN_FLASHCOMM`：它们已被移除。"]),
    # the install guide's torch_npu and the requirement's torch-npu are one package: said once
    (19, "en", ["Upgrade `torch-npu` to `2.10.0` before pulling main."]),
    (8, "en", ["Upgrade `xlite` to `0.1.0rc1` before pulling main."]),  # imported by plugin/xlite/runner.py
    # a system package the image users build from now installs (not one of a Dockerfile the PR adds)
    (10, "en", ["Install the system package `clang-15` before pulling main: the images now install it."]),
    (10, "zh-CN", ["拉取 main 前先安装系统软件包 `clang-15`：镜像现已安装它。"]),
    (11, "en", ["Move `PLUGIN_FLASHCOMM` to `enable_flashcomm`, `PLUGIN_ENABLE_NZ` to `weight_nz_mode`, "
                "`PLUGIN_MONITOR_DAEMON` to `monitor_use_daemon` before the old names are removed."]),
    (11, "zh-CN", ["在旧名称移除前，将 `PLUGIN_FLASHCOMM` 改为 `enable_flashcomm`、`PLUGIN_ENABLE_NZ` 改为 "
                   "`weight_nz_mode`、`PLUGIN_MONITOR_DAEMON` 改为 `monitor_use_daemon`。"]),
    (13, "en", ["Move `PLUGIN_FLASHCOMM` to `additional_config enable_flashcomm` before the old name is removed."]),
])
def test_what_a_reader_must_install_or_move_is_an_action(week: dict[int, list[Change]], number: int, language: str,
                                                        expected: list[str]) -> None:
    assert actions(week[number], language) == expected


def test_the_pins_readers_do_not_install_stay_internal(week: dict[int, list[Change]]) -> None:
    reach = {(c.symbol, c.path): c.reach for n in (7, 9) for c in week[n] if c.kind == "dependency"}
    assert reach.get(("ruff", "docs/source/developer_guide/contributing.md"), "internal") == "internal"
    assert reach.get(("triton-ascend", ".github/workflows/test.yaml"), "internal") == "internal"
    assert reach[("pytest", "requirements-dev.txt")] == "internal"
    xlite = next(c for c in week[8] if c.symbol == "xlite")
    assert xlite.reach == "public" and "plugin/xlite/runner.py" in xlite.reach_how


def test_a_system_package_says_what_the_images_now_install(week: dict[int, list[Change]]) -> None:
    clang = next(c for c in week[10] if c.symbol == "clang-15")
    assert (clang.kind, clang.detail, clang.reach) == ("dependency", "system package", "public")
    assert fact_line(clang, "en") == "the images now install the system package `clang-15`"
    assert [c.detail for c in week[10] if c.symbol == "gcc-c++"] == ["new file"]  # Dockerfile.a5 is new


def test_a_system_package_swapped_for_its_own_part_asks_nothing() -> None:
    from prdigest.collect.facts import syspackages

    before = "FROM a\nRUN dnf install -y wget git jq \\\n    libomp\nRUN dnf install -y gettext jq git\n"
    # the image cleaned up: git-core in git's place, the second line's duplicates dropped
    after = "FROM a\nRUN dnf install -y wget git-core jq \\\n    libomp\nRUN dnf install -y gettext\n"
    assert syspackages.compare("Dockerfile", before, after) == []
    # beside the package it belongs to, still installed, a new one is new; so are a version and an addition
    kept = after.replace("gettext", "gettext git numactl")
    assert [c.symbol for c in syspackages.compare("Dockerfile", before, kept)] == ["git-core", "numactl"]
    versioned = before.replace("jq git", "jq").replace("wget git jq", "wget git-15 git-devel jq")
    assert [c.symbol for c in syspackages.compare("Dockerfile", before, versioned)] == ["git-15", "git-devel"]



_HOSTILE = r'''
from prdigest.collect.facts import docpins, migrations, overrides, syspackages

MB = 1_000_000
# 200,000 continuation lines of one RUN, and one RUN line of 1 MB holding 100,000 install commands
continued = "RUN apt-get install -y a \\\n" + "    b \\\n" * 200_000 + "    clang\n"
installs = "RUN " + "apt install x; " * 100_000 + "\n"
assert "clang" in syspackages.compare("Dockerfile", "FROM a\n", continued)[-1].symbol
assert len(syspackages.packages(installs)) == 1
# 100,000 one-row tables under no heading, and a pip install line of 1 MB
tables = "".join(f"| `PLUGIN_X{i}` | `x{i}` |\n\n" for i in range(100_000)) + "deprecated\n"
assert len(migrations.compare("docs/a.md", "", tables)) == 100_000
pins = "pip install " + "a" * MB + "==1.0\npip install b==1.0\n"
assert docpins.compare("docs/a.md", pins, pins.replace("b==1.0", "b==2.0"))[0].symbol == "b"
# a rewrite nested 30 ifs deep and 20,000 rewrites of one setting
deep = "def f(config):\n" + "".join("    " * (i + 1) + "if config.x == 1:\n" for i in range(30)) + \
    "    " * 31 + "config.x = 2\n"
many = "def f(config):\n" + "    if config.x == 1:\n        config.x = 2\n" * 20_000
assert len(overrides.compare("a.py", deep, "def f(config):\n    pass\n")) == 1
assert len(overrides.compare("a.py", many, "def f(config):\n    pass\n")) == 1
print("ok")
'''


def test_hostile_pages_and_images_are_read_in_linear_time() -> None:
    done = subprocess.run([sys.executable, "-c", _HOSTILE], capture_output=True, text=True, cwd=ROOT,
                          preexec_fn=_cpu_limit, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", f"killed or failed: {done.stderr[-2000:]}"


def _cpu_limit() -> None:
    # 60 s of CPU: the whole read takes a few seconds; a quadratic scan of these inputs takes hours
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))
