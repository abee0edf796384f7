"""Obligations no API fact reached (issue 36): a new registry a downstream has to enter beside the one it enters, a
module-level container whose kind changed under the downstream's calls, a platform hook that only raises
``NotImplementedError`` and that upstream now calls on its current platform. Each on an upstream change committed
in a real git repository (read with its whole tree, as a ``--git`` run reads it) and a downstream committed in
another; beside each break, the near miss that must stay a check or say nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, patch_facts
from prdigest.kernel.models import Impact
from tests.git_support import commit_week
from tests.impact_support import line_in as _line
from tests.impact_support import match_downstream
from tests.impact_support import upstream_facts as _facts
from tests.impact_support import upstream_impacts as _impacts

UP = ("up",)


def _found(found: list[Impact], kind: str) -> list[tuple[str, int, str]]:
    return sorted((i.path, i.line, i.severity) for i in found if i.fact.startswith(kind + ":"))


# --- a new registry beside the one a downstream enters -----------------------------------------------------------

PLATFORMS = '''
    import enum


    class PlatformEnum(enum.Enum):
        CUDA = 1
        ROCM = 2
        OOT = 3


    class Platform:
        _enum = PlatformEnum.CUDA


    current_platform = Platform()
    '''
KERNELS = '''
    from up.platforms import PlatformEnum, current_platform


    class ScaledKernel:
        pass


    class CudaKernel(ScaledKernel):
        pass


    class RocmKernel(ScaledKernel):
        pass


    _FP8_KERNELS: dict[PlatformEnum, list[type[ScaledKernel]]] = {
        PlatformEnum.CUDA: [CudaKernel],
        PlatformEnum.ROCM: [RocmKernel],
    }


    def choose(possible_kernels):
        return possible_kernels[current_platform._enum][0]


    def init_kernel(block):
        return choose(possible_kernels=_FP8_KERNELS)
    '''
#: a block-kernel registry, read by the same function in its own branch, looked up with ``[key]`` by ``choose``
BLOCK = KERNELS.replace('''    def choose(''', '''    class CudaBlockKernel(ScaledKernel):
        pass


    _FP8_BLOCK_KERNELS: dict[PlatformEnum, list[type[ScaledKernel]]] = {
        PlatformEnum.CUDA: [CudaBlockKernel, CudaKernel],
    }


    def choose(''').replace("        return choose(possible_kernels=_FP8_KERNELS)", '''        if block:
            return choose(possible_kernels=_FP8_BLOCK_KERNELS)
        return choose(possible_kernels=_FP8_KERNELS)''')
REGISTRY_BEFORE = {"up/__init__.py": "", "up/platforms.py": PLATFORMS, "up/kernels.py": KERNELS}
OOT = '''from up.kernels import _FP8_KERNELS, ScaledKernel
from up.platforms import PlatformEnum


class MyKernel(ScaledKernel):
    pass


if PlatformEnum.OOT not in _FP8_KERNELS:
    _FP8_KERNELS[PlatformEnum.OOT] = [MyKernel]
'''


def test_a_new_registry_missing_the_key_you_enter_beside_it_breaks_where_you_enter_it(tmp_path):
    found = _impacts(tmp_path, REGISTRY_BEFORE, {"up/kernels.py": BLOCK}, {"ds/kernels.py": OOT})
    assert _found(found, "registry") == [("ds/kernels.py", _line(OOT, "_FP8_KERNELS[PlatformEnum.OOT]"), "breaks")]
    impact = next(i for i in found if i.fact.startswith("registry:"))
    assert impact.symbol == "up.kernels._FP8_BLOCK_KERNELS"
    assert "no entry for PlatformEnum.OOT" in impact.fact and "choose" in impact.fact


def test_an_entry_appended_to_the_list_under_your_key_counts_as_entering_the_registry(tmp_path):
    appends = OOT.replace("    _FP8_KERNELS[PlatformEnum.OOT] = [MyKernel]\n",
                          "    _FP8_KERNELS[PlatformEnum.OOT] = []\n\n_FP8_KERNELS[PlatformEnum.OOT].append(MyKernel)\n")
    found = _impacts(tmp_path, REGISTRY_BEFORE, {"up/kernels.py": BLOCK}, {"ds/kernels.py": appends})
    assert "_FP8_KERNELS[PlatformEnum.OOT].append" in appends
    # one line per downstream function (module level is one): the break, at its first line
    assert _found(found, "registry") == [("ds/kernels.py", _line(appends, "_FP8_KERNELS[PlatformEnum.OOT] = []"),
                                          "breaks")]
    only_append = appends.replace("if PlatformEnum.OOT not in _FP8_KERNELS:\n    _FP8_KERNELS[PlatformEnum.OOT] = []\n",
                                  "")
    found = _impacts(tmp_path / "append", REGISTRY_BEFORE, {"up/kernels.py": BLOCK}, {"ds/kernels.py": only_append})
    assert _found(found, "registry") == [("ds/kernels.py", _line(only_append, ".append(MyKernel)"), "breaks")]


def test_the_registry_fact_says_its_siblings_keys_classes_and_who_looks_it_up(tmp_path):
    facts = _facts(tmp_path, REGISTRY_BEFORE, {"up/kernels.py": BLOCK})
    [fact] = [f for f in facts if f.kind == "registry"]
    assert (fact.symbol, fact.after, fact.siblings, fact.needed_by, fact.listed) == (
        "_FP8_BLOCK_KERNELS", "PlatformEnum.CUDA", ("_FP8_KERNELS",), ("up.kernels.choose",),
        ("up.kernels.CudaBlockKernel", "up.kernels.CudaKernel"))
    # a registry both versions have is no new obligation
    assert [f for f in _facts(tmp_path / "again", {**REGISTRY_BEFORE, "up/kernels.py": BLOCK},
                              {"up/kernels.py": BLOCK + "\n\nVERSION = 2\n"}) if f.kind == "registry"] == []


#: (upstream after, downstream, the severity at the entering line; None: nothing said of the registry)
REGISTRY_NEAR_MISSES = [
    pytest.param(BLOCK, OOT.replace("PlatformEnum.OOT", "PlatformEnum.CUDA"), "check",
                 id="the key you enter is one the new registry has"),
    pytest.param(BLOCK.replace("return possible_kernels[current_platform._enum][0]",
                               "return possible_kernels.get(current_platform._enum, [None])[0]"),
                 OOT, "check", id="upstream looks the new registry up with a default"),
    pytest.param(BLOCK.replace("    def choose(possible_kernels):",
                               "    def choose(possible_kernels):\n        if current_platform._enum not in "
                               "possible_kernels:\n            return None"),
                 OOT, "check", id="upstream tests the key first"),
    pytest.param(BLOCK.replace('''        if block:
            return choose(possible_kernels=_FP8_BLOCK_KERNELS)
''', "").replace("    def choose(", '''    def init_block_kernel():
        return choose(possible_kernels=_FP8_BLOCK_KERNELS)


    def choose('''), OOT, None, id="no upstream function reads the new registry beside yours"),
]


@pytest.mark.parametrize(("after", "downstream", "severity"), REGISTRY_NEAR_MISSES)
def test_a_new_registry_is_a_check_or_nothing_without_exact_evidence(tmp_path: Path, after: str, downstream: str,
                                                                     severity: str | None) -> None:
    found = _impacts(tmp_path, REGISTRY_BEFORE, {"up/kernels.py": after}, {"ds/kernels.py": downstream})
    line = _line(downstream, "_FP8_KERNELS[PlatformEnum.")
    assert _found(found, "registry") == ([("ds/kernels.py", line, severity)] if severity else [])
    assert [i for i in found if i.severity == "breaks"] == []


def test_a_subclass_of_a_class_the_new_registry_lists_is_told_to_register_it(tmp_path):
    downstream = "from up.kernels import CudaBlockKernel\n\n\nclass MyBlockKernel(CudaBlockKernel):\n    pass\n"
    before = {**REGISTRY_BEFORE, "up/kernels.py": KERNELS.replace("    def choose(", "    class CudaBlockKernel("
                                                                  "ScaledKernel):\n        pass\n\n\n    def choose(")}
    found = _impacts(tmp_path, before, {"up/kernels.py": BLOCK}, {"ds/kernels.py": downstream})
    assert _found(found, "registry") == [("ds/kernels.py", 4, "check")]


# --- a module-level container of another kind --------------------------------------------------------------------

LORA = '''
    class LinearWithLoRA:
        pass


    class EmbeddingWithLoRA:
        pass


    _all_lora_classes: set[type] = {
        LinearWithLoRA,
        EmbeddingWithLoRA,
    }


    def from_layer(layer):
        for cls in _all_lora_classes:
            return cls
    '''
TUPLE = LORA.replace("set[type] = {", "tuple[type, ...] = (").replace("        EmbeddingWithLoRA,\n    }",
                                                                        "        EmbeddingWithLoRA,\n    )")
ADDS = '''import up.lora
from up.lora import _all_lora_classes, EmbeddingWithLoRA


class MyEmbedding(EmbeddingWithLoRA):
    pass


_all_lora_classes.discard(EmbeddingWithLoRA)


def register():
    up.lora._all_lora_classes.add(MyEmbedding)


def count():
    return len(_all_lora_classes)
'''


def test_a_set_made_a_tuple_breaks_each_call_of_a_method_a_tuple_lacks(tmp_path):
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/lora.py": LORA}, {"up/lora.py": TUPLE},
                     {"ds/lora.py": ADDS})
    assert _found(found, "retyped") == [("ds/lora.py", _line(ADDS, ".discard("), "breaks"),
                                        ("ds/lora.py", _line(ADDS, ".add("), "breaks")]
    assert "a tuple has no .add()" in next(i.fact for i in found if i.line == _line(ADDS, ".add("))


def test_a_set_made_a_tuple_breaks_the_same_calls_from_the_patch_alone(tmp_path):
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/lora.py": LORA},
                       {1: ("Order the LoRA classes", {"up/lora.py": TUPLE})})
    facts = patch_facts(pr, Surface(packages=UP))
    assert [(f.symbol, f.before, f.after) for f in facts if f.kind == "retyped"] == [("_all_lora_classes", "set",
                                                                                      "tuple")]
    found = match_downstream(tmp_path, facts, {"ds/lora.py": ADDS})
    assert _found(found, "retyped") == [("ds/lora.py", _line(ADDS, ".discard("), "breaks"),
                                        ("ds/lora.py", _line(ADDS, ".add("), "breaks")]


@pytest.mark.parametrize(("before", "after"), [
    pytest.param("_classes = {\n    1,\n}\n", "_classes = (\n    1,\n)\n",
                 id="a brace and a parenthesis say no kind on their own"),
    pytest.param("_classes: list[int] = [\n    1,\n]\n", "_classes: List[int] = [\n    1,\n]\n",
                 id="the same kind spelled otherwise"),
    pytest.param("class C:\n    classes: set = {\n        1,\n    }\n",
                 "class C:\n    classes: tuple = (\n        1,\n    )\n", id="an indented assignment is no module's name"),
])
def test_a_patch_proves_no_other_kind_from_what_it_cannot_read(tmp_path: Path, before: str, after: str) -> None:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/lora.py": before},
                       {1: ("Change it", {"up/lora.py": after})})
    assert [f for f in patch_facts(pr, Surface(packages=UP)) if f.kind == "retyped"] == []


#: (upstream before, after, downstream: nothing it does fails on the new kind)
RETYPED_NEAR_MISSES = [
    pytest.param(LORA, TUPLE, "from up.lora import _all_lora_classes\n\n\ndef first():\n"
                 "    return next(iter(_all_lora_classes))\n", id="a downstream that only reads it"),
    pytest.param(LORA, LORA.replace("set[type] = {", "frozenset[type] = frozenset({").replace(
        "        EmbeddingWithLoRA,\n    }", "        EmbeddingWithLoRA,\n    })"),
        "from up.lora import _all_lora_classes\n\n\ndef both(other):\n    return _all_lora_classes.union(other)\n",
        id="a set made a frozenset, a method both have"),
    pytest.param(LORA, LORA.replace("set[type] = {", "set[type] = {  # the classes"), ADDS,
                 id="the same set, written another way"),
]


@pytest.mark.parametrize(("before", "after", "downstream"), RETYPED_NEAR_MISSES)
def test_a_container_of_another_kind_breaks_nothing_that_still_works(tmp_path: Path, before: str, after: str,
                                                                     downstream: str) -> None:
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/lora.py": before}, {"up/lora.py": after},
                     {"ds/lora.py": downstream})
    assert [i for i in found if i.severity == "breaks"] == []


# --- a platform hook upstream now calls on its current platform --------------------------------------------------

INTERFACE = '''
    class Platform:
        @classmethod
        def set_device(cls, device):
            raise NotImplementedError
    '''
HOOK = INTERFACE.rstrip(" ") + '''
        @classmethod
        def manual_seed_all(cls, seed):
            """Seed every device."""
            raise NotImplementedError
    '''
PACKAGE = '''
    from typing import TYPE_CHECKING

    from up.platforms.interface import Platform

    _current_platform = None

    if TYPE_CHECKING:
        current_platform: Platform


    def __getattr__(name):
        if name == "current_platform":
            return _current_platform
        raise AttributeError(name)
    '''
SEED = '''
    import random


    def set_random_seed(seed):
        random.seed(seed)
    '''
SEEDS_ALL = SEED.rstrip(" ") + '''        from up.platforms import current_platform

        current_platform.manual_seed_all(seed)
    '''
HOOK_BEFORE = {"up/__init__.py": "", "up/platforms/__init__.py": PACKAGE, "up/platforms/interface.py": INTERFACE,
               "up/utils.py": SEED}
NPU = '''from up.platforms.interface import Platform


class NPUPlatform(Platform):
    @classmethod
    def set_device(cls, device):
        return device
'''


def test_a_hook_upstream_now_calls_on_the_current_platform_breaks_a_platform_without_it(tmp_path):
    found = _impacts(tmp_path, HOOK_BEFORE, {"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL},
                     {"ds/platform.py": NPU})
    assert _found(found, "abstract") == [("ds/platform.py", _line(NPU, "class NPUPlatform"), "breaks")]
    assert "upstream calls it in set_random_seed" in next(i.fact for i in found if i.fact.startswith("abstract:"))
    facts = _facts(tmp_path / "facts", HOOK_BEFORE, {"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL})
    assert [f.needed_by for f in facts if f.kind == "abstract"] == [("up.utils.set_random_seed",)]


#: (upstream after, downstream: the hook stays a check, or is not said)
HOOK_NEAR_MISSES = [
    pytest.param({"up/platforms/interface.py": HOOK}, NPU, "check", id="nothing upstream calls it yet"),
    pytest.param({"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL.replace(
        "        current_platform.manual_seed_all(seed)",
        "        if hasattr(current_platform, 'manual_seed_all'):\n            current_platform.manual_seed_all(seed)")},
        NPU, "check", id="upstream asks hasattr first"),
    pytest.param({"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL.replace(
        "        current_platform.manual_seed_all(seed)",
        "        try:\n            current_platform.manual_seed_all(seed)\n        except NotImplementedError:\n"
        "            pass")}, NPU, "check", id="upstream falls back on NotImplementedError"),
    pytest.param({"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL.replace(
        "from up.platforms import current_platform", "from up.devices import current_platform")},
        NPU, "check", id="a receiver of that name no module declares a Platform"),
    pytest.param({"up/platforms/interface.py": HOOK, "up/utils.py": SEEDS_ALL},
                 NPU + "\n    @classmethod\n    def manual_seed_all(cls, seed):\n        return seed\n", None,
                 id="a platform that defines it"),
]


@pytest.mark.parametrize(("after", "downstream", "severity"), HOOK_NEAR_MISSES)
def test_a_hook_is_a_check_without_an_unguarded_upstream_call(tmp_path: Path, after: dict[str, str | None],
                                                              downstream: str, severity: str | None) -> None:
    found = _impacts(tmp_path, HOOK_BEFORE, after, {"ds/platform.py": downstream})
    assert [i.severity for i in found if i.fact.startswith("abstract:")] == ([severity] if severity else [])


# --- from the patches alone: a parameter the PR's own added calls pass -------------------------------------------

QUANT = '''
    class QuantizationConfig:
        @classmethod
        def override_quantization_method(
            cls, hf_quant_cfg, user_quant
        ):
            return None
    '''
CONFIG = '''
    class ModelConfig:
        def verify(self, method, cfg, quant):
            return method.override_quantization_method(
                cfg,
                quant,
            )
    '''
HF_CONFIG = QUANT.replace("cls, hf_quant_cfg, user_quant", "cls, hf_quant_cfg, user_quant, hf_config=None")
PASSES_HF = CONFIG.replace("                quant,\n", "                quant,\n                hf_config=self.hf_config,\n")
HPU_QUANT = '''from up.quant import QuantizationConfig


class HPUConfig(QuantizationConfig):
    @classmethod
    def override_quantization_method(cls, hf_quant_cfg, user_quant):
        return "hpu"
'''


def _patch_impacts(tmp_path: Path, after: dict[str, str | None]) -> list[Impact]:
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/quant.py": QUANT, "up/config.py": CONFIG},
                       {1: ("Pass the HF config", after)})
    return match_downstream(tmp_path, patch_facts(pr, Surface(packages=UP)), {"ds/quant.py": HPU_QUANT})


@pytest.mark.parametrize("config", [
    pytest.param(PASSES_HF, id="one argument a line"),
    pytest.param(CONFIG.replace("                cfg,\n                quant,\n",
                                "                cfg, quant, hf_config=self.hf_config\n"),
                 id="after positional arguments on its line"),
])
def test_a_parameter_the_prs_added_call_passes_breaks_an_override_from_the_patch_alone(tmp_path: Path,
                                                                                       config: str) -> None:
    found = _patch_impacts(tmp_path, {"up/quant.py": HF_CONFIG, "up/config.py": config})
    assert [(i.line, i.severity) for i in found if i.fact.startswith("signature:")] == [
        (_line(HPU_QUANT, "def override_quantization_method"), "breaks")]


@pytest.mark.parametrize("config", [
    pytest.param(None, id="no call passes it"),
    pytest.param(CONFIG.replace("                quant,\n", "                quant,\n                hf_config=None,\n"),
                 id="the call passed it already"),
])
def test_a_parameter_no_added_call_of_the_method_passes_is_a_check_from_the_patch_alone(tmp_path: Path,
                                                                                         config: str | None) -> None:
    before_config = config or CONFIG
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/quant.py": QUANT,
                                               "up/config.py": before_config},
                       {1: ("Pass the HF config", {"up/quant.py": HF_CONFIG,
                                                   "up/config.py": before_config + "\n\nVERSION = 2\n"})})
    found = match_downstream(tmp_path, patch_facts(pr, Surface(packages=UP)), {"ds/quant.py": HPU_QUANT})
    assert [i.severity for i in found if i.fact.startswith("signature:")] == ["check"]


def test_a_keyword_only_an_upstream_subclass_passes_to_its_base_constructor_is_no_call_from_the_patch_alone(tmp_path):
    base = "class Rope:\n    def __init__(\n        self, size\n    ):\n        self.size = size\n\n\n" \
           "class YaRNRope(Rope):\n    def __init__(self, size):\n        super().__init__(\n            size,\n" \
           "        )\n"
    after = base.replace("self, size\n    ):", "self, size, init_cache=True\n    ):").replace(
        "            size,\n        )", "            size,\n            init_cache=False,\n        )")
    [pr] = commit_week(tmp_path / "upstream", {"up/__init__.py": "", "up/rope.py": base},
                       {1: ("Defer the cache", {"up/rope.py": after})})
    assert [(f.symbol, f.passed) for f in patch_facts(pr, Surface(packages=UP)) if f.kind == "signature"] == [
        ("Rope.__init__", ())]


def test_a_keyword_the_classs_own_self_call_passes_is_no_call_on_an_unknown_object_from_the_patch_alone(tmp_path):
    own = CONFIG.replace("return method.override_quantization_method(", "return self.override_quantization_method(")
    found = _patch_impacts(tmp_path, {"up/quant.py": HF_CONFIG, "up/config.py": own.replace(
        "                quant,\n", "                quant,\n                hf_config=self.hf_config,\n")})
    assert [i.severity for i in found if i.fact.startswith("signature:")] == ["check"]
