"""Keywords a PR's added calls pass to a module-level function whose signature gains them, read from the patches
alone (prdigest.collect.facts.patchpassed): a downstream's replacement of the function that does not take them
breaks, as full files say (vLLM 0.20's ``ops.rotary_embedding(…, rope_dim_offset=…)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, patch_facts
from prdigest.kernel.models import Impact
from tests.git_support import commit_week
from tests.impact_support import match_downstream

UP = ("up",)
OPS = '''import torch


def rotary_embedding(
    positions: torch.Tensor,
    query: torch.Tensor,
    key: torch.Tensor,
    is_neox: bool,
) -> None:
    torch.ops._C.rotary_embedding(positions, query, key, is_neox)
'''
OPS_AFTER = OPS.replace("    is_neox: bool,\n) -> None:", "    is_neox: bool,\n    inverse: bool = False,\n) -> None:")
LAYER = '''from up import ops


class RotaryEmbedding:
    def forward(self, positions, query, key):
        ops.rotary_embedding(
            positions, query, key,
            self.is_neox,
        )
        return query, key
'''
PASSES = LAYER.replace("            self.is_neox,\n", "            self.is_neox,\n            inverse=self.inverse,\n")
#: The downstream replaces the function with its own, which does not take ``inverse``.
PATCHER = '''from up import ops


def npu_rotary_embedding(positions, query, key, is_neox):
    return None


ops.rotary_embedding = npu_rotary_embedding
'''


def _impacts(tmp_path: Path, after: dict[str, str | None]) -> list[Impact]:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/ops.py": OPS, "up/layer.py": LAYER},
                       {1: ("Inverse rotary", after)})
    return match_downstream(tmp_path, patch_facts(pr, Surface(packages=UP)), {"ds/patch.py": PATCHER})


@pytest.mark.parametrize("layer", [
    pytest.param(PASSES, id="through its module"),
    pytest.param(PASSES.replace("from up import ops", "from up.ops import rotary_embedding").replace(
        "ops.rotary_embedding(", "rotary_embedding("), id="by its bare name"),
])
def test_a_keyword_an_added_call_passes_to_a_module_function_breaks_its_replacement(tmp_path: Path, layer: str):
    found = _impacts(tmp_path, {"up/ops.py": OPS_AFTER, "up/layer.py": layer})
    assert [(i.path, i.severity) for i in found if i.fact.startswith("signature:")] == [("ds/patch.py", "breaks")]


def test_a_module_function_nobody_passes_the_keyword_to_stays_a_check(tmp_path: Path):
    found = _impacts(tmp_path, {"up/ops.py": OPS_AFTER, "up/layer.py": LAYER + "\n\nVERSION = 2\n"})
    assert [i.severity for i in found if i.fact.startswith("signature:")] == ["check"]


def test_a_dotted_call_of_a_name_the_pr_also_defines_as_a_method_is_no_call_of_the_function(tmp_path: Path):
    # ``self.rope.rotary_embedding(…, inverse=…)`` may call the method the PR adds, not the module's function
    method = "    def rotary_embedding(self, positions, query, key, is_neox, inverse=False):\n        return None\n\n"
    layer = PASSES.replace("    def forward(", method + "    def forward(").replace(
        "ops.rotary_embedding(", "self.rope.rotary_embedding(")
    found = _impacts(tmp_path, {"up/ops.py": OPS_AFTER, "up/layer.py": layer})
    assert [i.severity for i in found if i.fact.startswith("signature:")] == ["check"]
