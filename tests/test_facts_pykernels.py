"""Kernels of Python kernel languages (Triton, Pallas) as kernel facts, read from a real repository's commits (full
files, through a clone) and from the same commits' patches alone; and what the verdict and the headline make of
them (prdigest/collect/facts/pykernels.py, prdigest/draft/learn.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.draft.headline import headline
from prdigest.draft.verdict import assess
from prdigest.kernel.models import Change, PullRequest, Verdict
from prdigest.kernel.prtext.signals import extract
from tests.git_support import commit_week

ATTENTION = '''
    import functools

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu


    def _loop(q_ref, k_ref, o_ref, out_dtype):
        s = jnp.matmul(q_ref[...], k_ref[...], preferred_element_type=jnp.float32)
        s = s.astype(out_dtype)
        m = jnp.max(s, axis=1)
        o_ref[...] = m


    def _attention_kernel(q_ref, k_ref, o_ref, *, out_dtype):
        _loop(q_ref, k_ref, o_ref, out_dtype)


    def attention(q, k):
        kernel = functools.partial(_attention_kernel, out_dtype=q.dtype)
        return pl.pallas_call(kernel, grid=(4,), out_shape=jax.ShapeDtypeStruct(q.shape, q.dtype))(q, k)
'''
#: The scores kept in float32 until after the max (a precision fix).
LATE_CAST = ATTENTION.replace('''        s = s.astype(out_dtype)
        m = jnp.max(s, axis=1)
''', '''        # cast after the max: casting early loses precision
        m = jnp.max(s, axis=1).astype(out_dtype)
''')
GATHER = '''
    import jax
    from jax.experimental import pallas as pl


    def main_kernel(x_ref, idx_ref, out_ref):
        out_ref[...] = x_ref[idx_ref[...]]


    def col_size(hidden):
        return pl.cdiv(hidden, 128) * 128


    @jax.jit
    def ragged_gather(x, idx):
        return pl.pallas_call(main_kernel, grid=(col_size(x.shape[-1]),), out_shape=x)(x, idx)
'''
MOE = '''
    def fused_moe(x, idx):
        return x[idx]
'''
MOE_GATHER = '''
    from pkg.gather import ragged_gather


    def fused_moe(x, idx):
        return ragged_gather(x, idx)
'''
TRITON = '''
    import triton as tr
    from vllm.triton_utils import tl


    @tr.jit
    def _rms_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        x = tl.load(x_ptr + tl.arange(0, BLOCK)).to(tl.float32)
        tl.store(out_ptr, acc + x)


    def rms(x, out):
        _rms_kernel[(x.shape[0],)](x, out, x.numel(), BLOCK=1024)
'''
PRS = {
    1: ("Introduce a ragged gather", {"pkg/gather.py": GATHER, "pkg/moe.py": MOE_GATHER}),
    2: ("Fix accuracy of the attention kernel", {"pkg/attention.py": LATE_CAST}),
    3: ("Use a larger grid", {"pkg/attention.py": LATE_CAST.replace("grid=(4,)", "grid=(8,)")}),
    4: ("Comment the kernel", {"pkg/attention.py": LATE_CAST.replace("grid=(4,)", "grid=(8,)").replace(
        "        _loop(q_ref", "        # the loop does the work\n        _loop(q_ref")}),
    5: ("Accumulate in bfloat16", {"pkg/rms.py": TRITON.replace("dtype=tl.float32", "dtype=tl.bfloat16").replace(
        "BLOCK=1024", "BLOCK=2048")}),
    6: ("Add an alias-imported Triton kernel", {"pkg/scale.py": TRITON.replace("_rms_kernel", "_scale_kernel")}),
    7: ("Drop the ragged gather", {"pkg/gather.py": None, "pkg/moe.py": MOE}),
    8: ("Normalise in a Triton kernel", {"pkg/norm.py": TRITON.replace("_rms_kernel", "_norm_kernel").replace(
        "def rms(", "def norm("), "pkg/moe.py": MOE.replace("return x[idx]", "return norm(x[idx], x)").replace(
        "def fused_moe", "from pkg.norm import norm\n\n\ndef fused_moe")}),
}
BASE = {"pkg/__init__.py": "", "pkg/attention.py": ATTENTION, "pkg/moe.py": MOE, "pkg/rms.py": TRITON}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[int, list[Change]]]:
    root: Path = tmp_path_factory.mktemp("pykernels")
    prs = commit_week(root / "up", BASE, PRS)
    surface = Surface(packages=("pkg",))
    full = week_facts(prs, surface=surface, clone=open_clone((root / "up").as_uri(), state_dir=root / "s"))
    patches = week_facts(prs, surface=surface, clone=None)
    assert full.problems == [] and patches.problems == []
    return {"git": full.changes, "patches": patches.changes, "prs": {pr.number: pr for pr in prs}}  # type: ignore[dict-item]


def _kernels(changes: list[Change]) -> set[tuple[str, str, str]]:
    return {(c.symbol, c.language, c.detail) for c in changes if c.kind == "kernel"}


def test_a_new_pallas_kernel_is_one_fact_named_by_its_launcher_and_put_to_use_by_its_caller(week) -> None:
    facts = week["git"][1]
    assert _kernels(facts) == {("ragged_gather", "pallas", "added")}
    new = next(c for c in facts if c.kind == "kernel")
    assert new.needed_by == ("pkg.moe",)  # the PR's own code now calls it
    assert not any(c.symbol == "main_kernel" for c in facts)  # its body function is said with it
    assert ("col_size", "added") in {(c.symbol, c.kind) for c in facts}  # a helper of the launcher stays a name


def test_a_new_triton_kernel_is_put_to_use_through_the_function_that_launches_it(week) -> None:
    assert {(c.symbol, c.needed_by) for c in week["git"][8] if c.kind == "kernel"} == {("_norm_kernel", ("pkg.moe",))}
    assert {(c.symbol, c.needed_by) for c in week["git"][6] if c.kind == "kernel"} == {("_scale_kernel", ())}


def test_an_op_removed_stays_a_removed_name_beside_its_kernel_removed(week) -> None:
    facts = week["git"][7]
    assert ("ragged_gather", "removed") in {(c.symbol, c.kind) for c in facts}  # a downstream importing it is told
    assert _kernels(facts) == {("main_kernel", "pallas", "removed")}


def test_a_cast_moved_past_the_max_is_a_numerics_fact_on_the_kernel_code_that_casts(week) -> None:
    numerics = [c for c in week["git"][2] if c.kind == "kernel"]
    assert [(c.symbol, c.language) for c in numerics] == [("_loop", "pallas")]
    assert numerics[0].detail == "numerics: +jnp.max(s, axis=1)→out_dtype; -s→out_dtype"
    assert ("_loop", "body") in {(c.symbol, c.kind) for c in week["git"][2]}  # the body fact stays beside it


def test_a_grid_changed_is_a_launch_fact_and_a_comment_is_no_kernel_fact(week) -> None:
    assert _kernels(week["git"][3]) == {("_attention_kernel", "pallas", "launch: grid")}
    assert _kernels(week["git"][4]) == set()


def test_triton_under_an_alias_gives_numerics_launch_and_new_kernel_facts(week) -> None:
    assert _kernels(week["git"][5]) == {("_rms_kernel", "triton", "numerics: +zeros→bfloat16; -zeros→float32"),
                                        ("_rms_kernel", "triton", "launch: BLOCK")}
    assert _kernels(week["git"][6]) == {("_scale_kernel", "triton", "added")}


def test_patches_alone_show_new_kernels_and_casts_that_moved(week) -> None:
    assert ("main_kernel", "pallas", "added") in _kernels(week["patches"][1])
    assert ("_loop", "pallas", "numerics: +jnp.max(s, axis=1)→out_dtype; -s→out_dtype") in _kernels(
        week["patches"][2])
    assert _kernels(week["patches"][4]) == set()
    assert ("_rms_kernel", "triton", "numerics: +zeros→bfloat16; -zeros→float32") in _kernels(week["patches"][5])
    assert ("_scale_kernel", "triton", "added") not in _kernels(week["patches"][6])  # ``@tr.jit``: the alias is
    # out of the patch's sight unless the import is in it


@pytest.mark.parametrize(("number", "deep", "zh"), [
    (1, True, "新增 Pallas 内核 `ragged_gather`"),
    (2, True, "Pallas 内核 `_loop` 的数值精度改变"),
    (3, False, None),  # a launch retuned: a kernel fact, no lesson
])
def test_a_kernel_put_to_use_or_its_numerics_fixed_is_a_deep_read_said_by_its_kernel(week, number, deep,
                                                                                        zh) -> None:
    pr: PullRequest = week["prs"][number].model_copy(update={"changes": week["git"][number]})
    s = extract(pr, [])
    assert (assess(s).verdict is Verdict.DEEP_READ) is deep
    if zh:
        assert zh in headline(s, "zh-CN")


def test_a_cast_moved_in_a_fix_of_something_else_is_no_deep_read(week) -> None:
    pr: PullRequest = week["prs"][2].model_copy(update={"title": "Fix sync scheduler failure",
                                                         "changes": week["git"][2]})
    assert assess(extract(pr, [])).verdict is not Verdict.DEEP_READ


def test_a_kernel_the_title_says_it_speeds_up_teaches_no_lesson(week) -> None:
    pr: PullRequest = week["prs"][1].model_copy(update={"title": "Optimize the MoE gather with a Pallas kernel",
                                                         "changes": week["git"][1]})
    assert assess(extract(pr, [])).verdict is not Verdict.DEEP_READ
