"""A package's re-exports removed, read from the patch of its ``__init__.py`` alone (a real git repository's diff)."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

INIT = "vllm/model_executor/layers/fused_moe/__init__.py"
NAMES = ["FusedMoE", "FusedMoEConfig", "FusedMoEMethodBase", "FusedMoEParallelConfig", "FusedMoEQuantConfig",
         "FusedMoERouter", "MoEActivation", "RoutingMethodType", "SharedFusedMoE", "ZeroExpertFusedMoE"]
BEFORE = ("from torch import Tensor\n"
          "from vllm.model_executor.layers.fused_moe.config import MoEConfig\n"
          "from vllm.model_executor.layers.fused_moe.layer import (\n"
          + "".join(f"    {n},\n" for n in NAMES) + ")\n"
          "from .utils import moe_align\n\n"
          "__version__ = '1'\n")
# SharedFusedMoE dropped (the hunk starts inside the parentheses: git's default header is their opening line),
# MoEConfig moved to another import line, an import from outside the package dropped
AFTER = BEFORE.replace("    SharedFusedMoE,\n", "").replace("from torch import Tensor\n", "") \
    .replace("from .utils import moe_align\n", "from .utils import MoEConfig, moe_align\n") \
    .replace("from vllm.model_executor.layers.fused_moe.config import MoEConfig\n", "")


def test_a_removed_re_export_is_a_removal_from_the_package(tmp_path):
    pr = change_of(tmp_path, {INIT: BEFORE}, {INIT: AFTER})
    assert any(line.startswith("@@") and line.endswith("import (") for line in pr.files[0].patch.splitlines())
    facts = [c for c in patch_only(pr) if c.detail == "re-export removed"]
    assert [(c.symbol, c.before) for c in facts] == [
        ("SharedFusedMoE", "vllm.model_executor.layers.fused_moe.layer.SharedFusedMoE")]
    assert facts[0].breaks
    downstream = {"ds/__init__.py": "",
                  "ds/moe.py": "from vllm.model_executor.layers.fused_moe import FusedMoE, SharedFusedMoE\n"
                               "from vllm.model_executor.layers.fused_moe import MoEConfig\n"}
    got = {(i.line, i.severity) for i in matched(facts, downstream)}
    assert got == {(1, "breaks")}


def test_a_re_export_that_stays_or_an_ordinary_module_gives_no_removal(tmp_path):
    plain = "vllm/ops.py"
    pr = change_of(tmp_path, {INIT: BEFORE, plain: "from .layer import FusedMoE\n"},
                   {INIT: BEFORE.replace("    FusedMoE,\n", "").replace("    ZeroExpertFusedMoE,\n",
                                                                          "    ZeroExpertFusedMoE,\n    FusedMoE,\n"),
                    plain: "x = 1\n"})
    assert not [c for c in patch_only(pr) if c.detail == "re-export removed"]
