"""Upgrades a reader must follow, read from a real repository (tests/git_support.py): a release pin replaced by a
commit (main no longer supports that release) or a commit by a release, and a package index moved in a Dockerfile
(or in the install docs beside a pin it moves), a script the docs tell users to run deleted; the upstream commit CI
tests with, a commit pin moving to a later commit of the upstream's main, a mirror dropped, an index commented out,
an index a doc's text alone changes or a script no doc names asks nothing."""

from __future__ import annotations

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change
from tests.git_support import commit_week, week_changes

OLD = "35141a7eeda941a60ad5a4956670c60fd5a77029"
NEW = "14acf429ac08b6d538ca6feb3e06b6d13895804d"
INSTALL = """# Installation

```bash
pip3 install -i https://pypi.mirror.example/simple attrs numpy
uv pip install --system \\
--extra-index-url https://repo.example/pypi/incremental \\
vllm-plugin==|version|
```
"""

BASE = {
    "plugin/__init__.py": "def register():\n    return 'plugin.platform:Platform'\n",
    "Dockerfile": "FROM base:1.0\nARG VLLM_TAG=v0.18.0\nRUN git clone --branch $VLLM_TAG vllm\n",
    ".github/workflows/dockerfiles/Dockerfile.lint": f"FROM base:1.0\nARG VLLM_COMMIT={OLD}\n",
    "docs/source/installation.md": INSTALL,
    "requirements.txt": "torch==2.9.0\n#--extra-index-url https://repo.example/pypi\n",
    "docs/source/faqs.md": "# FAQ\n\nFor faster attention run:\n\n```bash\nbash tools/install_ops_a2.sh\n```\n",
    "tools/install_ops_a2.sh": "#!/bin/sh\necho install\n",
    "tools/check_headers.sh": "#!/bin/sh\necho lint\n",
    "Dockerfile.a3": "FROM base:1.0\nRUN pip install --extra-index-url https://repo.example/pypi/incremental plugin\n",
}

#: Each PR of the week: its title and the files it writes.
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Drop the v0.18.0 release", {"Dockerfile": f"FROM base:1.0\nARG VLLM_COMMIT={OLD}\n"
                                                   "RUN git fetch vllm $VLLM_COMMIT\n"}),
    2: ("Track upstream main of 0324", {".github/workflows/dockerfiles/Dockerfile.lint":
                                        f"FROM base:1.0\nARG VLLM_COMMIT={NEW}\n"}),
    3: ("Fix the wheel index", {"docs/source/installation.md": INSTALL.replace("incremental", "variant")}),
    4: ("Tidy the install page", {"docs/source/installation.md": INSTALL.replace("incremental", "variant").replace(
        "-i https://pypi.mirror.example/simple ", ""), "requirements.txt": "torch==2.9.0\n"}),
    6: ("Add the mirror install route", {"docs/source/installation.md": INSTALL.replace("incremental", "variant")
                                         + "\n```bash\npip install -i https://pypi.mirror2.example/simple pkg\n```\n"}),
    7: ("Upgrade torch with its index", {"requirements.txt": "torch==2.10.0\n", "docs/source/installation.md":
                                         INSTALL.replace("incremental", "variant") + "\n```bash\npip install "
                                         "--extra-index-url https://torch.example/simple torch==2.10.0\n```\n"}),
    5: ("Drop the custom ops for the old toolkit", {"tools/install_ops_a2.sh": None, "tools/check_headers.sh": None}),
    8: ("Follow upstream main of 0325", {"Dockerfile": f"FROM base:1.0\nARG VLLM_COMMIT={NEW}\n"
                                                      "RUN git fetch vllm $VLLM_COMMIT\n"}),
    9: ("Build the v0.20.1 release", {"Dockerfile": "FROM base:1.0\nARG VLLM_TAG=v0.20.1\n"
                                                   "RUN git clone --branch $VLLM_TAG vllm\n"}),
    10: ("Fix the image's wheel index", {"Dockerfile.a3": "FROM base:1.0\nRUN pip install --extra-index-url "
                                                          "https://repo.example/pypi/variant plugin\n"}),
    11: ("Add the A5 images and build v0.20.2", {
        "Dockerfile.a5": "FROM cann:9.0.0\nARG VLLM_TAG=v0.20.2\nARG MOONCAKE_TAG=v0.3.8.post1\nRUN pip install "
                         "--extra-index-url https://torch.example/cpu triton-ascend==3.2.1\n",
        "Dockerfile": "FROM base:1.0\nARG VLLM_TAG=v0.20.2\nRUN git clone --branch $VLLM_TAG vllm\n"}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[Change]]:
    return week_changes(tmp_path_factory.mktemp("upgrades"), BASE, PRS)


@pytest.mark.parametrize(("number", "language", "expected"), [
    (1, "en", [f"main no longer supports `VLLM` `v0.18.0`: install `VLLM` at commit `{OLD[:10]}` before pulling "
               "main."]),
    (1, "zh-CN", [f"main 不再支持 `VLLM` `v0.18.0`：拉取 main 前先安装 `VLLM` 提交 `{OLD[:10]}`。"]),
    (2, "en", []),  # the commit CI tests main against: no release users install
    (8, "en", []),  # the images' commit of the upstream's main moves on: they build it, nothing to install
    (9, "en", ["Install `VLLM` `v0.20.1` before pulling main."]),
    (3, "en", []),  # a doc's text changes the index: a fact; what main installs from is in the images
    (10, "en", ["Switch `--extra-index-url` from `https://repo.example/pypi/incremental` to "
                "`https://repo.example/pypi/variant` where you install from it."]),
    (4, "en", []),  # a mirror dropped from a command, an index commented out before: nothing to do
    (5, "en", ["Stop running `tools/install_ops_a2.sh`; the script was removed."]),  # not check_headers.sh
    (6, "en", []),  # a doc adds an install route through a mirror: nothing a reader must change
    (7, "en", ["Upgrade `torch` to `2.10.0` before pulling main, adding `--extra-index-url` "
               "`https://torch.example/simple` to your install command."]),
    (5, "zh-CN", ["不再运行 `tools/install_ops_a2.sh`：该脚本已被删除。"]),
    # a new image for new hardware pins what it builds with: only the image that existed asks anything
    (11, "en", ["Upgrade `VLLM` to `v0.20.2` before pulling main."]),
])
def test_each_upgrade_a_reader_must_follow_is_an_action(week: dict[int, list[Change]], number: int,
                                                        language: str, expected: list[str]) -> None:
    assert actions(week[number], language) == expected


def test_an_index_in_the_install_docs_is_public_and_one_in_ci_is_not(week: dict[int, list[Change]]) -> None:
    [index] = [c for c in week[3] if c.symbol == "--extra-index-url"]
    assert (index.reach, index.reach_how, index.detail) == (
        "public", "an index users install from (`docs/source/installation.md`)", "changed")
    assert not [c for c in week[4] if c.kind == "dependency"]


def test_a_dev_build_stamped_with_date_and_hour_is_older_than_a_later_date(tmp_path) -> None:
    """``3.2.0.dev2025110717`` (7 November, 17:00) → ``3.2.0.dev20251229``: an upgrade, though 2025110717 is the
    larger integer; and back again is a downgrade."""
    old, new = "triton-ascend==3.2.0.dev2025110717\n", "triton-ascend==3.2.0.dev20251229\n"
    prs = commit_week(tmp_path / "up", {"plugin/__init__.py": "X = 1\n", "requirements.txt": old},
                      {1: ("Bump triton-ascend", {"requirements.txt": new}),
                       2: ("Revert the bump", {"requirements.txt": old})})
    changes = week_facts(prs, surface=Surface(),
                         clone=open_clone((tmp_path / "up").as_uri(), state_dir=tmp_path / "s")).changes
    assert actions(changes[1], "en") == ["Upgrade `triton-ascend` to `3.2.0.dev20251229` before pulling main."]
    assert actions(changes[2], "en") == ["Downgrade `triton-ascend` to `3.2.0.dev2025110717` before pulling main."]
