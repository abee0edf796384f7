"""Action required: one sentence per thing a reader must do, from public facts only (prdigest/kernel/actions.py)."""

from __future__ import annotations

import pytest

from prdigest.kernel.actions import action_key, actions, version_of
from prdigest.kernel.models import Change

CANN = Change(kind="dependency", symbol="CANN_VERSION", path="Dockerfile", before="8.5.0", after="9.1.0",
              language="config", reach="public", reach_how="a runtime requirement (`Dockerfile`)")
IMAGE = Change(kind="dependency", symbol="quay.io/ascend/cann", path="Dockerfile.a3", before="8.5.0-a3",
               after="9.1.0-a3", language="config")
NPU = Change(kind="dependency", symbol="torch-npu", path="requirements.txt", before="==2.9.0", after="==2.10.0.post4",
             language="config")
LINT = Change(kind="dependency", symbol="ruff", path="requirements-lint.txt", before="==0.4", after="==0.5",
              language="config", reach="internal")
CEILING = Change(kind="dependency", symbol="fastapi", path="requirements.txt", before=">=0.1", after=">=0.1,<0.124",
                 language="config")
ENV_RENAMED = Change(kind="env", symbol="VLLM_NEW", path="envs.py", before="VLLM_OLD", after="VLLM_NEW",
                     detail="renamed", language="config")
INTERNAL_RENAME = Change(kind="renamed", symbol="Runner.advance", path="lib/worker.py", before="Runner.step",
                         after="Runner.advance", reach="internal", reach_how="not exported")
PUBLIC_RENAME = Change(kind="renamed", symbol="Engine.generate", path="lib/api.py", before="Engine.run",
                       after="Engine.generate", reach="public", reach_how="re-exported by `lib/__init__.py`")


@pytest.mark.parametrize(("spec", "version"), [
    ("==2.10.0.post4", "2.10.0.post4"), (">=2.6,<3", "2.6"), ("9.1.0-910b-ubuntu22.04-py3.11", "9.1.0"),
    ("<3", ""), ("v0.20.2", "v0.20.2"), ("ascend910b1", ""), ("==1.0 ; platform_machine == 'x86_64'", "1.0"),
])
def test_the_version_a_pin_asks_for(spec: str, version: str) -> None:
    assert version_of(spec) == version


def test_the_platform_upgrade_is_one_sentence_naming_each_version() -> None:
    assert actions([CANN, IMAGE, NPU, LINT, CEILING], "en") == [
        "Upgrade `CANN` to `9.1.0`, `torch-npu` to `2.10.0.post4` before pulling main."]
    assert actions([CANN, NPU], "zh-CN") == ["拉取 main 前先升级 `CANN` 至 `9.1.0`、`torch-npu` 至 `2.10.0.post4`。"]


def test_an_internal_rename_asks_nothing_and_a_public_one_names_the_change() -> None:
    assert actions([INTERNAL_RENAME], "en") == []
    assert actions([PUBLIC_RENAME, ENV_RENAMED], "en") == [
        "Rename `Engine.run` to `Engine.generate` in code that uses it.",
        "Rename the environment variable `VLLM_OLD` to `VLLM_NEW` where you set it."]


def test_a_cleared_item_stays_cleared_until_the_symbol_changes_again() -> None:
    cleared = {action_key(ENV_RENAMED)}
    assert actions([ENV_RENAMED], "en", cleared) == []
    again = ENV_RENAMED.model_copy(update={"before": "VLLM_NEW", "after": "VLLM_NEWER", "symbol": "VLLM_NEWER"})
    assert actions([again], "en", cleared) == [
        "Rename the environment variable `VLLM_NEW` to `VLLM_NEWER` where you set it."]


def test_a_pin_moved_back_says_so() -> None:
    down = NPU.model_copy(update={"before": "==2.10.0", "after": "==2.9.0"})
    assert actions([down], "en") == ["Downgrade `torch-npu` to `2.9.0` before pulling main."]


def test_a_new_runtime_requirement_is_installed_not_upgraded_in_the_pr_s_one_upgrade_sentence() -> None:
    new = Change(kind="dependency", symbol="torchaudio", path="requirements.txt", after="==2.9.0", detail="added",
                 language="config")
    assert actions([new, NPU], "en") == [
        "Upgrade `torch-npu` to `2.10.0.post4` and install `torchaudio` `2.9.0` before pulling main."]
    assert actions([new, NPU], "zh-CN") == ["拉取 main 前先升级 `torch-npu` 至 `2.10.0.post4`，并安装 `torchaudio` `2.9.0`。"]
    down = NPU.model_copy(update={"before": "==2.10.0", "after": "==2.9.0"})
    assert actions([new, down], "en") == [
        "Downgrade `torch-npu` to `2.9.0` and install `torchaudio` `2.9.0` before pulling main."]
    assert actions([new], "en") == ["Install `torchaudio` `2.9.0` before pulling main."]


def test_an_image_s_pip_pin_asks_for_the_upgrade_and_its_commit_of_upstream_main_does_not() -> None:
    from prdigest.collect.facts.toolchain import compare
    before = """FROM quay.io/ascend/cann:8.5.1-910b
ARG VLLM_COMMIT=d886c26d4d4fef7d079696beb4ece1cfb4b008a8
RUN python3 -m pip install -v triton-ascend==3.2.0 && \\
    pip cache purge
"""
    after = """FROM quay.io/ascend/cann:9.0.0-910b
ARG VLLM_COMMIT=4d51588e2381018348f1022dfa3a7698899805b7
RUN python3 -m pip install triton-ascend==3.2.1 --extra-index-url https://x && \\
    pip cache purge
"""
    facts = [f.model_copy(update={"reach": "public"}) for f in compare("Dockerfile", before, after)]
    assert actions(facts, "en") == ["Upgrade `cann` to `9.0.0`, `triton-ascend` to `3.2.1` before pulling main."]


def test_an_index_replaced_beside_the_pr_s_upgrades_is_said_in_their_sentence() -> None:
    index = Change(kind="dependency", symbol="--extra-index-url", path="Dockerfile", before="https://repo.example/a",
                   after="https://repo.example/b", detail="changed", language="config")
    assert actions([NPU, index], "en") == [
        "Upgrade `torch-npu` to `2.10.0.post4` before pulling main, switching `--extra-index-url` from "
        "`https://repo.example/a` to `https://repo.example/b` where you install from it."]
    assert actions([NPU, index], "zh-CN") == [
        "拉取 main 前先升级 `torch-npu` 至 `2.10.0.post4`（安装时将 `--extra-index-url` 由 `https://repo.example/a` 改为 "
        "`https://repo.example/b`）。"]
    assert actions([index], "en") == [  # alone it is its own item
        "Switch `--extra-index-url` from `https://repo.example/a` to `https://repo.example/b` where you install from it."]
