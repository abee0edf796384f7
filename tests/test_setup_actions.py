"""What readers install and run to set up, read from a real repository (tests/git_support.py).

A tutorial's dev build moving from a wheel file to a pinned index install is an upgrade; a setup line of a
tutorial replaced by another is one thing to run instead; a runtime requirement added asks nothing when pip brings
it with the package (never installed before, or moved from the development requirements at the same pin), and
asks for the new version when the repository installed the package before at a lower or no version, or its shipped
code imported it before any requirement named it (another route installed it)."""

from __future__ import annotations

import pytest

from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Change
from tests.git_support import week_changes

WHEEL = ("pip install triton_ascend-3.2.0.dev20251229-cp311-cp311-manylinux_2_27_$(uname -i)"
         ".manylinux_2_28_$(uname -i).whl")
TUTORIAL = f"""# Running a MoE model

Install the BiSheng toolkit and Triton Ascend:

```bash
chmod a+x Ascend-BiSheng-toolkit_$(uname -i)_20251225.run
export MODEL_PATH=/root/.cache/Qwen3-30B
source /usr/local/Ascend/8.5.0/bisheng_toolkit/set_env.sh
wget https://example.invalid/triton_ascend-3.2.0.dev20251229-cp311-cp311-manylinux_2_27_$(uname -i).whl
{WHEEL}
```
"""
CONTRIBUTING = """# Developer guide

```bash
source /opt/lint/env.sh
```
"""
REQUIREMENTS = "torch==2.9.0\n"
DEV = "pytest==8.0.0\nxgrammar\narctic-inference==0.1.1\nxlite\n"

BASE = {
    "plugin/__init__.py": '"""plugin."""\n\n\ndef register():\n    return "plugin.platform:Platform"\n',
    "plugin/platform.py": "class Platform:\n    pass\n",
    "plugin/xlite_runner.py": "from xlite._C import Runtime\n",
    "plugin/models.py": "from transformers import AutoConfig\n",
    "tests/test_props.py": "import hypothesis\n",
    "requirements.txt": REQUIREMENTS,
    "requirements-dev.txt": DEV,
    "docs/source/tutorials/moe.md": TUTORIAL,
    "docs/source/developer_guide/contributing.md": CONTRIBUTING,
}

DEV_BUILD = TUTORIAL.replace(WHEEL, "python3 -m pip install -i https://test.example/simple/ "
                                    "triton-ascend==3.2.0.dev20260105")
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("[CI] update bisheng version", {"docs/source/tutorials/moe.md": DEV_BUILD}),
    2: ("[bugfix] update bishengir source envs", {
        "docs/source/tutorials/moe.md": DEV_BUILD.replace(
            "source /usr/local/Ascend/8.5.0/bisheng_toolkit/set_env.sh",
            "export PATH=/usr/local/Ascend/tools/bishengir/bin:$PATH").replace(
            "MODEL_PATH=/root/.cache/Qwen3-30B", "MODEL_PATH=/path/to/your/model"),
        "docs/source/developer_guide/contributing.md": CONTRIBUTING.replace("/opt/lint/env.sh", "/opt/lint2/env.sh")}),
    3: ("Suffix decoding by default", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"}),
    4: ("Require a new tokenizer", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"
                                                                       "fasttok==1.2.0\n"}),
    5: ("Require xgrammar 0.1.30", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"
                                                                       "fasttok==1.2.0\nxgrammar>=0.1.30\n"}),
    6: ("Make triton-ascend a requirement", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"
                                                                               "fasttok==1.2.0\nxgrammar>=0.1.30\n"
                                                                               "triton-ascend==3.2.0\n"}),
    7: ("[CI] Specify the version of xlite", {"requirements-dev.txt": DEV.replace("xlite", "xlite==0.1.0rc0")}),
    8: ("Xlite MoE support", {"requirements-dev.txt": DEV.replace("xlite", "xlite==0.1.0rc1")}),
    9: ("Pin transformers to 5.5.3", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"
                                                                       "fasttok==1.2.0\nxgrammar>=0.1.30\n"
                                                                       "triton-ascend==3.2.0\ntransformers==5.5.3\n"}),
    10: ("Pin hypothesis", {"requirements.txt": REQUIREMENTS + "arctic-inference==0.1.1\npsutil\n"
                                                               "fasttok==1.2.0\nxgrammar>=0.1.30\n"
                                                               "triton-ascend==3.2.0\ntransformers==5.5.3\n"
                                                               "hypothesis==6.151.9\n"}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("setup"), BASE, PRS)


def test_a_dev_build_moved_from_a_wheel_file_is_an_upgrade(week: dict[int, list[Change]]) -> None:
    # the tutorial installed the dev build from a wheel file (its name holds the version), now from an index that
    # the new build comes from (an index added beside a pin it moves: one sentence with the upgrade)
    assert actions(week[1], "en") == ["Upgrade `triton-ascend` to `3.2.0.dev20260105` before pulling main, adding "
                                      "`--index-url` `https://test.example/simple` to your install command."]
    assert actions(week[1], "zh-CN") == ["拉取 main 前先升级 `triton-ascend` 至 `3.2.0.dev20260105`（安装命令中加入 "
                                         "`--index-url` `https://test.example/simple`）。"]


@pytest.mark.parametrize(("language", "expected"), [
    ("en", ["Run `export PATH=/usr/local/Ascend/tools/bishengir/bin:$PATH` instead of "
            "`source /usr/local/Ascend/8.5.0/bisheng_toolkit/set_env.sh` where you set up the environment."]),
    ("zh-CN", ["配置环境时改为运行 `export PATH=/usr/local/Ascend/tools/bishengir/bin:$PATH`，不再运行 "
               "`source /usr/local/Ascend/8.5.0/bisheng_toolkit/set_env.sh`。"]),
])
def test_a_setup_line_of_a_tutorial_replaced_is_one_thing_to_run_instead(week: dict[int, list[Change]],
                                                                         language: str, expected: list[str]) -> None:
    # the developer guide's setup line moved too: a contributor page asks nothing of a reader; the model path the
    # tutorial now leaves to the reader is a placeholder, no setup
    assert actions(week[2], language) == expected
    setup = next(c for c in week[2] if c.detail == "environment setup" and c.reach == "public")
    assert fact_line(setup, "en").startswith("the docs' environment setup `source")


@pytest.mark.parametrize(("number", "why"), [
    (3, "arctic-inference moved from requirements-dev at its pin, psutil with no version: pip brings both"),
    (4, "a package the repository never installed before: pip installs it with the package"),
    (7, "a development requirement the shipped code imports, listed bare, given its first pin: what CI had"),
    (10, "a package only the tests imported before: no reader's environment is asked to hold it"),
])
def test_a_requirement_pip_brings_with_the_package_asks_nothing(week: dict[int, list[Change]], number: int,
                                                                 why: str) -> None:
    assert actions(week[number], "en") == [], why


@pytest.mark.parametrize(("number", "expected"), [
    # listed bare in requirements-dev: environments hold whatever version they had
    (5, ["Install `xgrammar` `0.1.30` before pulling main."]),
    # the tutorial installed a dev build before its release
    (6, ["Install `triton-ascend` `3.2.0` before pulling main."]),
    # the optional backend shipped code imports, moved from one pin to a later one
    (8, ["Upgrade `xlite` to `0.1.0rc1` before pulling main."]),
    # no requirement named it, but the shipped models imported it: the upstream installed it at its own version
    (9, ["Install `transformers` `5.5.3` before pulling main."]),
])
def test_a_requirement_installed_before_at_a_lower_version_asks(week: dict[int, list[Change]], number: int,
                                                                expected: list[str]) -> None:
    assert actions(week[number], "en") == expected
