"""What a patch alone cannot be sure of is never a ``breaks`` (issue 36, the flags vllm-ascend's patches-alone run
got wrong): a class moved to another module and imported back, a method whose class is out of the hunk's sight,
a method read as a module's function, a class's bases read as a signature. Each row is an upstream change in a
real git repository served as GitHub serves its files; the controls beside them still break."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

BASE = "vllm/spec/eagle.py"
NEW = "vllm/spec/base_proposer.py"
PROPOSER = ("import torch\n\n\nclass BaseProposer:\n    def __init__(self, config):\n        self.config = config\n\n"
            "    def load_model(self, model):\n        return model\n\n    def dummy_run(self, n):\n        return n\n")
EAGLE = "\n\nclass EagleProposer(BaseProposer):\n    def propose(self):\n        return 1\n"
USER = {"ds/__init__.py": "",
        "ds/proposer.py": "from vllm.spec.eagle import BaseProposer\n\n\nclass Mine(BaseProposer):\n"
                          "    def __init__(self, config):\n        super().__init__(config)\n\n"
                          "    def load_model(self, model):\n        return self.dummy_run(1)\n"}


def _breaks(pr, downstream):
    return sorted((i.path, i.line, i.symbol) for i in matched(patch_only(pr), downstream) if i.severity == "breaks")


def test_a_class_moved_and_imported_back_breaks_nothing(tmp_path):
    pr = change_of(tmp_path, {BASE: PROPOSER + EAGLE},
                   {BASE: "import torch\n\nfrom vllm.spec.base_proposer import BaseProposer\n" + EAGLE,
                    NEW: PROPOSER})
    moved = [c for c in patch_only(pr) if c.kind in ("moved", "removed")]
    assert [(c.kind, c.path, c.before, c.after, c.detail) for c in moved] == [
        ("moved", NEW, "vllm.spec.eagle", "vllm.spec.base_proposer", "re-exported")]
    assert _breaks(pr, USER) == []


def test_a_class_moved_without_a_re_export_breaks_its_import_once(tmp_path):
    pr = change_of(tmp_path, {BASE: PROPOSER + EAGLE},
                   {BASE: "import torch\n\nfrom vllm.spec import base_proposer\n"
                          + EAGLE.replace("(BaseProposer)", "(base_proposer.BaseProposer)"), NEW: PROPOSER})
    impacts = [i for i in matched(patch_only(pr), USER) if i.severity == "breaks"]
    assert [(i.line, i.fact) for i in impacts] == [
        (1, "moved: BaseProposer → vllm.spec.base_proposer.BaseProposer")]


PLATFORM = "vllm/platforms/zen.py"
FILLER = "".join(f"    def step_{n}(self):\n        return {n}\n\n" for n in range(8))
ZEN = ("class ZenPlatform(CpuPlatform):\n" + FILLER
       + "    def check_config(cls, config):\n        return config\n\n    def last(self):\n        return 0\n")
SUBCLASS = {"ds/__init__.py": "",
            "ds/platform.py": "from vllm.platforms import Platform\nfrom vllm.platforms.zen import ZenPlatform\n\n\n"
                              "class Mine(Platform):\n    def check_config(cls, config):\n        return config\n\n\n"
                              "class Zen(ZenPlatform):\n    def check_config(cls, config):\n        return config\n"}


def test_a_method_removed_out_of_its_class_sight_is_a_check(tmp_path):
    pr = change_of(tmp_path, {PLATFORM: ZEN}, {PLATFORM: ZEN.replace(
        "    def check_config(cls, config):\n        return config\n\n", "")}, python_headers=True)
    removed = [c for c in patch_only(pr) if c.kind == "removed"]
    assert [c.symbol for c in removed] == ["*.check_config"]  # the class line is out of the hunk's sight
    impacts = matched(removed, SUBCLASS)
    # it may still inherit the method (from CpuPlatform), and which class lost it the patch does not say
    assert impacts and {i.severity for i in impacts} == {"check"}


def test_a_method_removed_with_its_class_in_sight_still_breaks(tmp_path):
    small = "class ZenPlatform(CpuPlatform):\n    def check_config(cls, config):\n        return config\n\n" \
            "    def last(self):\n        return 0\n"
    pr = change_of(tmp_path, {PLATFORM: small}, {PLATFORM: small.replace(
        "    def check_config(cls, config):\n        return config\n\n", "")}, python_headers=True)
    assert _breaks(pr, SUBCLASS) == [("ds/platform.py", 11, "vllm.platforms.zen.ZenPlatform.check_config")]


MATCHER = "vllm/compilation/matcher_utils.py"
MATCHER_TEXT = "class MatcherRMSNorm:\n    def inputs(self):\n        return []\n\n    def other(self):\n        return 1\n"


def test_a_removed_method_is_not_read_as_a_module_function_of_a_parent_package(tmp_path):
    pr = change_of(tmp_path, {MATCHER: MATCHER_TEXT},
                   {MATCHER: MATCHER_TEXT.replace("    def inputs(self):\n        return []\n\n", "")})
    downstream = {"ds/__init__.py": "", "ds/ocr.py": "from vllm.inputs import MultiModalDataDict\n\n\n"
                                                     "def read(x: MultiModalDataDict):\n    return x\n",
                  "ds/norm.py": "from vllm.compilation.matcher_utils import MatcherRMSNorm\n\n\n"
                                "def use(m: MatcherRMSNorm):\n    return MatcherRMSNorm.inputs(m)\n"}
    # the method itself, named with its class, still breaks the call of it
    assert _breaks(pr, downstream) == [("ds/norm.py", 5, "vllm.compilation.matcher_utils.MatcherRMSNorm.inputs")]


LAYER = "vllm/layers/moe.py"
LAYER_TEXT = ("from vllm.custom import CustomOp, PluggableLayer\n\n\nclass FusedMoE(CustomOp):\n"
              "    def __init__(self, experts, top_k):\n        self.experts = experts\n")


def test_a_class_whose_bases_changed_is_no_signature_for_its_callers(tmp_path):
    pr = change_of(tmp_path, {LAYER: LAYER_TEXT}, {LAYER: LAYER_TEXT.replace("(CustomOp)", "(PluggableLayer)")})
    downstream = {"ds/__init__.py": "", "ds/model.py": "from vllm.layers.moe import FusedMoE\n\n\n"
                                                       "def build():\n    return FusedMoE(8, 2)\n"}
    assert not [c for c in patch_only(pr) if c.kind == "signature"]
    assert _breaks(pr, downstream) == []
