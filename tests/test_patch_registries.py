"""A new registry read from patches alone (a real git repository's diff with git's Python hunk headers): a
column-0 assignment the patch adds whole, listing classes, beside a registry a function in sight uses the same
way. A downstream entering the sibling is told to check, never that it breaks."""

from __future__ import annotations

from tests.patch_support import change_of, matched, patch_only

PATH = "vllm/kernels/linear.py"
BEFORE = '''
    from vllm.kernels.cuda import CutlassKernel, TritonKernel
    from vllm.platforms import PlatformEnum

    _POSSIBLE_FP8_KERNELS: dict[PlatformEnum, list[type]] = {
        PlatformEnum.CUDA: [CutlassKernel],
    }


    def choose(config, possible_kernels):
        return possible_kernels[PlatformEnum.CUDA][0]


    def init_fp8_linear_kernel(
        config,
        block: bool,
    ):
        kernel = choose(config, possible_kernels=_POSSIBLE_FP8_KERNELS)
        return kernel(config)
'''
AFTER = BEFORE.replace('''        PlatformEnum.CUDA: [CutlassKernel],
    }
''', '''        PlatformEnum.CUDA: [CutlassKernel],
    }

    _POSSIBLE_FP8_BLOCK_KERNELS: dict[
        PlatformEnum, list[type]
    ] = {
        PlatformEnum.CUDA: [
            TritonKernel,
        ],
    }

    _DEFAULT_SIZES: dict[str, int] = {"a": 1}
''').replace('''        kernel = choose(config, possible_kernels=_POSSIBLE_FP8_KERNELS)
''', '''        if block:
            kernel = choose(config, possible_kernels=_POSSIBLE_FP8_BLOCK_KERNELS)
        else:
            kernel = choose(config, possible_kernels=_POSSIBLE_FP8_KERNELS)
''')

DOWNSTREAM = {"ds/__init__.py": "",
              "ds/fp8.py": '''from vllm.kernels.linear import _POSSIBLE_FP8_KERNELS
from vllm.platforms import PlatformEnum


class HPUKernel:
    pass


_POSSIBLE_FP8_KERNELS[PlatformEnum.OOT] = [HPUKernel]
'''}


def test_a_new_registry_beside_one_the_downstream_enters_is_a_check(tmp_path):
    pr = change_of(tmp_path, {PATH: BEFORE}, {PATH: AFTER}, python_headers=True)
    registries = [c for c in patch_only(pr) if c.kind == "registry"]
    # _DEFAULT_SIZES lists no classes: no registry
    assert [(c.symbol, c.siblings, c.after, c.needed_by) for c in registries] == [
        ("_POSSIBLE_FP8_BLOCK_KERNELS", ("_POSSIBLE_FP8_KERNELS",), "PlatformEnum.CUDA", ())]
    impacts = [(i.path, i.line, i.severity) for i in matched(patch_only(pr), DOWNSTREAM) if i.fact.startswith("registry")]
    assert impacts == [("ds/fp8.py", 9, "check")]


def test_a_registry_no_function_in_sight_uses_beside_another_is_no_fact(tmp_path):
    after = AFTER.replace("possible_kernels=_POSSIBLE_FP8_BLOCK_KERNELS", "possible_kernels=None")
    pr = change_of(tmp_path, {PATH: BEFORE}, {PATH: after}, python_headers=True)
    assert not [c for c in patch_only(pr) if c.kind == "registry"]
