"""Vendor installers the user docs run (``Ascend-BiSheng-toolkit_$(uname -i)_20260105.run``), read from a real
repository (tests/git_support.py): a version a tutorial or the install guide moves is an upgrade, grouped with the
PR's other upgrades and said once beside the image it belongs to; a page catching up with the version the images
users build already had (not a CI image), a contributor page, an installer only added and a ``subprocess.run`` call ask nothing."""

from __future__ import annotations

import pytest

from prdigest.collect.facts.installers import installers
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import week_changes


def tutorial(bisheng: str, triton: str) -> str:
    return f"""# Qwen3-Next

```bash
BISHENG_NAME="Ascend-BiSheng-toolkit_$(uname -i)_{bisheng}.run"
wget "https://repo.example/vendor/${{BISHENG_NAME}}" && chmod +x ./${{BISHENG_NAME}} && ./${{BISHENG_NAME}} --install
python3 -m pip install triton-ascend=={triton}
```

```python
subprocess.run(command, check=True)
```
"""


def install(cann: str, extra: str = "") -> str:
    return f"""# Installation

```bash
wget https://repo.example/CANN%20{cann}/Ascend-cann-toolkit_{cann}_linux-"$(uname -i)".run
./Ascend-cann-toolkit_{cann}_linux-"$(uname -i)".run --full
wget https://repo.example/CANN%20{cann}/Ascend-cann-nnal_{cann}_linux-"$(uname -i)".run
{extra}```
"""


BASE = {
    "plugin/__init__.py": "def register():\n    return 'plugin.platform:Platform'\n",
    "Dockerfile": "FROM quay.io/ascend/cann:8.3.rc2-910b-ubuntu22.04-py3.11\nRUN pip install -e .\n",
    "requirements.txt": "torch==2.9.0\ntorch-npu==2.9.0\n",
    ".github/workflows/dockerfiles/Dockerfile.buildwheel": "FROM quay.io/ascend/cann:8.3.rc2-910b\n",
    "docs/source/tutorials/Qwen3-Next.md": tutorial("20251225", "3.2.0.dev20251229"),
    "docs/source/installation.md": install("8.3.RC2"),
    "docs/source/developer_guide/build.md": "```bash\n./Ascend-mindstudio-kit_7.0.0_linux.run\n```\n",
}

PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    # the tutorial moves the toolkit and triton-ascend's dev build: both are upgrades, in one sentence
    1: ("Update the BiSheng version", {"docs/source/tutorials/Qwen3-Next.md": tutorial("20260105",
                                                                                        "3.2.0.dev20260105")}),
    # a contributor page's installer is the maintainers' toolchain; a new installer line is a new install route
    2: ("Tidy the docs", {"docs/source/developer_guide/build.md": "```bash\n./Ascend-mindstudio-kit_7.1.0_linux.run\n"
                                                                  "```\n",
                          "docs/source/installation.md": install("8.3.RC2", "./Ascend-cann-ops_8.3.RC2_x.run\n")}),
    # the images and the install guide move CANN together: one upgrade, said by the image's name; torch-npu beside
    # torch is a package of its own, not a part of it
    3: ("Upgrade CANN to 8.5.0", {"Dockerfile": "FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11\n"
                                                "RUN pip install -e .\n",
                                  "docs/source/installation.md": install("8.5.0"),
                                  "requirements.txt": "torch==2.10.0\ntorch-npu==2.10.0\n"}),
    4: ("Upgrade CANN to 8.5.1 in the images", {"Dockerfile": "FROM quay.io/ascend/cann:8.5.1-910b-ubuntu22.04-py3.11"
                                                              "\nRUN pip install -e .\n"}),
    # the install guide catches up with the images the next day: the upgrade was asked when the images moved
    5: ("Update the install guide to CANN 8.5.1", {"docs/source/installation.md": install("8.5.1")}),
    # the CI's wheel image moves first: no reader was told, so the install guide's move is the upgrade
    6: ("Build wheels on CANN 8.6.0", {".github/workflows/dockerfiles/Dockerfile.buildwheel":
                                       "FROM quay.io/ascend/cann:8.6.0-910b\n"}),
    7: ("Update the install guide to CANN 8.6.0", {"docs/source/installation.md": install("8.6.0")}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("installers"), BASE, PRS)


@pytest.mark.parametrize(("number", "language", "expected"), [
    (1, "en", ["Upgrade `triton-ascend` to `3.2.0.dev20260105`, `Ascend-BiSheng-toolkit` to `20260105` before "
               "pulling main."]),
    (1, "zh-CN", ["拉取 main 前先升级 `triton-ascend` 至 `3.2.0.dev20260105`、`Ascend-BiSheng-toolkit` 至 `20260105`。"]),
    (2, "en", []),
    (3, "en", ["Upgrade `cann` to `8.5.0`, `torch` to `2.10.0`, `torch-npu` to `2.10.0` before pulling main."]),
    (4, "en", ["Upgrade `cann` to `8.5.1` before pulling main."]),
    (5, "en", []),
    (6, "en", []),
    (7, "en", ["Upgrade `Ascend-cann-nnal` to `8.6.0`, `Ascend-cann-toolkit` to `8.6.0` before pulling main."]),
])
def test_an_installer_the_user_docs_run_is_an_upgrade(week: dict[int, list[Change]], number: int, language: str,
                                                      expected: list[str]) -> None:
    assert actions(week[number], language) == expected


def test_the_installer_facts_say_where_and_why(week: dict[int, list[Change]]) -> None:
    [bisheng] = [c for c in week[1] if c.symbol == "Ascend-BiSheng-toolkit"]
    assert (bisheng.before, bisheng.after, bisheng.line, bisheng.reach) == ("==20251225", "==20260105", 4, "public")
    assert {c.symbol: c.reach for c in week[2] if c.kind == "dependency"} == {"Ascend-mindstudio-kit": "internal"}
    [late] = [c for c in week[5] if c.symbol == "Ascend-cann-toolkit"]
    assert (late.after, late.detail) == ("==8.5.1", "pinned before")  # still a fact the entry shows


@pytest.mark.parametrize(("text", "expected"), [
    ('./Ascend-cann-toolkit_8.5.0_linux-"$(uname -i)".run --full', {"Ascend-cann-toolkit": "==8.5.0"}),
    ("# https://x/Ascend-cann-kernels-910b_8.3.rc2_linux-aarch64.run", {"Ascend-cann-kernels-910b": "==8.3.rc2"}),
    ("wget https://x/Ascend-cann-toolkit_9.1.0-beta.1_linux.run", {"Ascend-cann-toolkit": "==9.1.0-beta.1"}),
    ("subprocess.run(command); os_utils.run(x); a_b.run", {}),  # calls, no versioned file
    ("./${NAME}_linux.run; ./tool_latest.run", {}),  # no version in the name
])
def test_installer_names_and_versions(text: str, expected: dict[str, str]) -> None:
    assert installers(text) == expected
