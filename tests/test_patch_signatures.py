"""Signatures read back from patches alone (a real git repository's diff, no blobs): vLLM's one-parameter-per-line
signatures, whose ``def`` line a change never touches, and return annotations."""

from __future__ import annotations

import pytest

from prdigest.connect.impact.hunks import facts_from_patches
from tests.patch_support import UP, change_of, matched, patch_only

SCHED = "vllm/v1/core/sched/scheduler.py"
BEFORE = '''
    import torch


    class Scheduler:
        """Schedules."""

        def __init__(
            self,
            block_size: int,
            kv_cache_config: dict | None = None,
            mm_registry: object = None,
            log_stats: bool = False,
        ) -> None:
            self.block_size = block_size

        def schedule(self, budget: int) -> float:
            return 0.0


    def make_scheduler(
        config: dict,
        block_size: int = 16,
    ) -> Scheduler:
        return Scheduler(config, block_size)
'''
# one parameter inserted with a default before others (positions shift), one renamed, one default changed,
# a return annotation changed on a one-line def
AFTER = BEFORE.replace("            block_size: int,\n", "            block_size: int,\n"
                       "            hash_block_size: int | None = None,\n") \
    .replace("mm_registry: object = None", "registry: object = None") \
    .replace("        block_size: int = 16,\n    ) -> Scheduler", "        block_size: int = 32,\n    ) -> Scheduler") \
    .replace("def schedule(self, budget: int) -> float:", "def schedule(self, budget: int) -> torch.Tensor:")
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/sched.py": '''from vllm.v1.core.sched.scheduler import Scheduler, make_scheduler


class MyScheduler(Scheduler):
    def __init__(self, block_size, kv_cache_config=None, mm_registry=None, log_stats=False):
        super().__init__(block_size, kv_cache_config, mm_registry, log_stats)

    def schedule(self, budget):
        return 1.0


def build(config):
    return make_scheduler(config)
''',
}


def _facts(tmp_path, python_headers):
    pr = change_of(tmp_path, {SCHED: BEFORE}, {SCHED: AFTER}, python_headers=python_headers)
    return {(c.kind, c.symbol): c for c in patch_only(pr) if c.kind in ("signature", "returns")}


@pytest.mark.parametrize("python_headers", [False, True], ids=["default headers", "python headers"])
def test_a_multi_line_signature_is_read_whole_when_its_def_line_is_in_sight(tmp_path, python_headers):
    facts = _facts(tmp_path, python_headers)
    init = facts[("signature", "Scheduler.__init__")]
    assert init.before == "(self, block_size, kv_cache_config=None, mm_registry=None, log_stats=False)"
    assert init.after == ("(self, block_size, hash_block_size=None, kv_cache_config=None, registry=None, "
                          "log_stats=False)")
    assert "+hash_block_size=None" in init.detail and "-mm_registry" in init.detail
    assert init.breaks
    default = facts[("signature", "make_scheduler")]
    assert default.detail == "block_size=16→32" and default.before == "(config, block_size=16)"
    returns = facts[("returns", "Scheduler.schedule")]
    assert (returns.before, returns.after) == ("float", "torch.Tensor")
    # no fact names a method as a module-level function, nor reads "def __init__(" as "no parameters"
    assert not [k for k in facts if k[1] in ("__init__", "schedule")]


def test_signature_facts_from_patches_flag_the_downstream(tmp_path):
    impacts = matched(list(_facts(tmp_path, False).values()), DOWNSTREAM)
    got = {(i.line, i.how, i.severity) for i in impacts}
    assert (5, "overrides", "breaks") in got  # the override takes mm_registry, gone
    assert (8, "overrides", "breaks") in got  # returns a float where upstream now wants a tensor
    assert (13, "calls", "check") in got  # relies on block_size's default, now 32


TAIL_BEFORE = '''
    class Runner:
        def __init__(self):
            pass

        def execute(
            self,
            scheduler_output: dict,
            intermediate: list | None = None,
            dtype: str = "bf16",
        ) -> dict:
            return scheduler_output
'''
TAIL_AFTER = TAIL_BEFORE.replace('            dtype: str = "bf16",\n', "            num_tokens: int = 0,\n") \
    .replace("-> dict:", "-> list[dict]:")


def test_a_hunk_that_starts_inside_a_signature_gives_its_tail_under_a_python_header(tmp_path):
    # the hunk (three lines of context) starts below "def execute(", which git's Python driver names in the
    # header without its class
    pr = change_of(tmp_path, {"vllm/runner.py": TAIL_BEFORE}, {"vllm/runner.py": TAIL_AFTER}, python_headers=True)
    assert "def execute(" in pr.files[0].patch.splitlines()[0]
    assert "\n     def execute(" not in pr.files[0].patch
    facts = {(c.kind, c.symbol): c for c in patch_only(pr)}
    sig = facts[("signature", "*.execute")]
    assert (sig.before, sig.after) == ("", "")  # only the tail is in sight: no whole signature
    # a renamed keyword, whatever its position, said as the match reads a fact without before/after
    assert sig.detail == "-dtype, +num_tokens=0" and sig.breaks
    assert facts[("returns", "*.execute")].after == "list[dict]"


def test_a_tail_under_a_default_header_is_no_fact_unless_at_column_0(tmp_path):
    # the default rule names the last column-0 line ("class Runner:"): which def holds the tail is not in sight
    pr = change_of(tmp_path, {"vllm/runner.py": TAIL_BEFORE}, {"vllm/runner.py": TAIL_AFTER})
    assert pr.files[0].patch.splitlines()[0].endswith("class Runner:")
    assert not [c for c in patch_only(pr) if c.kind in ("signature", "returns")]


def test_a_call_split_over_lines_is_not_read_as_a_signature(tmp_path):
    before = '''
        def run(x: int) -> int:
            total = 0
            total += 1
            total += 2
            if check(
                x,
                strict=True,
            ):
                return 1
            return 0
    '''
    after = before.replace("strict=True", "strict=False")
    pr = change_of(tmp_path, {"vllm/run.py": before}, {"vllm/run.py": after}, python_headers=True)
    assert not [c for c in patch_only(pr) if c.kind in ("signature", "returns")]


def test_a_one_line_signature_split_over_lines_is_no_removal(tmp_path):
    before = '''
        class RejectionSampler:
            def __init__(self, sampler: object):
                self.sampler = sampler
    '''
    after = '''
        class RejectionSampler:
            def __init__(
                self,
                sampler: object,
                device: str | None = None,
            ):
                self.sampler = sampler
    '''
    pr = change_of(tmp_path, {"vllm/rs.py": before}, {"vllm/rs.py": after})
    sigs = [c for c in patch_only(pr) if c.kind == "signature"]
    assert [(c.symbol, c.detail) for c in sigs] == [("RejectionSampler.__init__", "+device=None")]
    assert not sigs[0].breaks


def test_the_hunk_headers_facts_read_no_signature_from_an_opened_def_line(tmp_path):
    before = '''
        class RejectionSampler:
            def __init__(self, sampler: object):
                self.sampler = sampler
    '''
    after = before.replace("def __init__(self, sampler: object):",
                           "def __init__(\n" + " " * 16 + "self,\n" + " " * 16 + "sampler: object,\n"
                           + " " * 16 + "device: str = 'npu',\n" + " " * 12 + "):")
    pr = change_of(tmp_path, {"vllm/rs.py": before}, {"vllm/rs.py": after})
    # "def __init__(" alone is not "__init__ takes nothing now": no signature fact, a body one
    assert [(c.kind, c.symbol) for c in facts_from_patches(pr, UP)] == [("body", "RejectionSampler.__init__")]


def test_a_hunk_inside_a_long_signature_gives_what_it_shows_under_a_python_header(tmp_path):
    params = "".join(f"        p{i}: int,\n" for i in range(8))
    before = ("class Scheduler:\n    def __init__(\n        self,\n" + params
              + "        log_stats: bool = False,\n        mm_registry: object = None,\n        include: bool = False,\n"
              + "        extra: int = 0,\n    ) -> None:\n        pass\n")
    # a pure insertion: the old side of the hunk changes nothing, its signature is still read
    after = before.replace("        log_stats: bool = False,\n",
                           "        log_stats: bool = False,\n        hash_block_size: int | None = None,\n")
    pr = change_of(tmp_path, {"vllm/sched.py": before}, {"vllm/sched.py": after}, python_headers=True)
    hunk = pr.files[0].patch
    assert "def __init__(" in hunk.splitlines()[0] and ") -> None" not in hunk  # neither end in sight
    sigs = [(c.symbol, c.detail, c.before) for c in patch_only(pr) if c.kind == "signature"]
    assert sigs == [("*.__init__", "+hash_block_size=None", "")]
    # the same lines under git's default header ("class Scheduler:"): which def holds them is out of sight
    plain = change_of(tmp_path / "default", {"vllm/sched.py": before}, {"vllm/sched.py": after})
    assert not [c for c in patch_only(plain) if c.kind == "signature"]


def test_a_parameter_line_removed_is_read_though_the_new_side_shows_no_change(tmp_path):
    before = ("class Manager:\n    def __init__(\n        self,\n        block_size: int,\n        num_blocks: int,\n"
              "    ):\n        self.block_size = block_size\n        self.n = num_blocks\n")
    after = before.replace("        block_size: int,\n", "").replace("        self.block_size = block_size\n", "")
    pr = change_of(tmp_path, {"vllm/m.py": before}, {"vllm/m.py": after})
    assert [(c.symbol, c.detail) for c in patch_only(pr) if c.kind == "signature"] == [
        ("Manager.__init__", "-block_size")]


def test_a_keyword_renamed_in_a_multi_line_signature_breaks_the_call_that_passes_it(tmp_path):
    before = '''
        import math


        def round_up(
            x: int,
            multiple: int = 8,
        ) -> int:
            return math.ceil(x / multiple) * multiple
    '''
    after = before.replace("multiple: int = 8", "step: int = 8").replace("x / multiple) * multiple", "x / step) * step")
    pr = change_of(tmp_path, {"vllm/utils/math_utils.py": before}, {"vllm/utils/math_utils.py": after},
                   python_headers=True)
    facts = [c for c in patch_only(pr) if c.kind == "signature"]
    assert [(c.symbol, c.detail) for c in facts] == [("round_up", "multiple→step")]
    downstream = {"ds/__init__.py": "",
                  "ds/sizes.py": "from vllm.utils.math_utils import round_up\n\n\ndef pad(n):\n"
                                 "    return round_up(n, multiple=16) + round_up(n)\n"}
    assert {(i.line, i.severity) for i in matched(facts, downstream)} == {(1, "check"), (5, "breaks")}


def test_a_method_named_by_a_python_header_is_no_module_level_function(tmp_path):
    before = ("class Worker:\n    def a(self):\n        return 1\n\n    def compile(self, x):\n"
              + "".join(f"        y{i} = {i}\n" for i in range(8)) + "        return x\n\n\ndef helper(v):\n"
              + "".join(f"    z{i} = {i}\n" for i in range(8)) + "    return v\n")
    after = before.replace("        return x\n", "        return x + 1\n").replace("    return v\n", "    return v + 1\n")
    pr = change_of(tmp_path, {"vllm/w.py": before}, {"vllm/w.py": after}, python_headers=True)
    assert "@@ def compile(self, x):" in pr.files[0].patch
    # GitHub's header drops the class and the indentation: the method's class is out of sight, not absent
    assert {(c.kind, c.symbol) for c in facts_from_patches(pr, UP)} == {("body", "*.compile"), ("body", "helper")}


def test_a_tail_that_only_adds_kwargs_breaks_no_override(tmp_path):
    after = TAIL_BEFORE.replace('            dtype: str = "bf16",\n', '            dtype: str = "bf16",\n            **kwargs,\n')
    pr = change_of(tmp_path, {"vllm/runner.py": TAIL_BEFORE}, {"vllm/runner.py": after}, python_headers=True)
    downstream = {"ds/__init__.py": "",
                  "ds/runner.py": "from vllm.runner import Runner\n\n\nclass NPURunner(Runner):\n"
                                  "    def execute(self, scheduler_output, intermediate=None, dtype='bf16'):\n"
                                  "        return scheduler_output\n"}
    # "+**kwargs" read without the whole signature is no new required parameter: nothing breaks
    assert not [i for i in matched(patch_only(pr), downstream) if i.severity == "breaks"]
