"""A zh-CN headline keeps the object of its title's verb: the words that name what changed (the PR's own names
in backticks, its acronyms, the terms the glossary knows), each said once; when the object cannot be said the
headline gives way to the fallback (the main code fact, else the files) instead of a bare verb."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.draft.language import mixes_languages
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.models import FileChange, PullRequest

WHEN = datetime(2026, 3, 20, tzinfo=timezone.utc)


def _head(title: str, paths: tuple[str, ...], body: str = "Body.") -> str:
    pr = PullRequest(number=1, url="https://github.com/o/r/pull/1", title=title, author="a", merged_at=WHEN,
                     body=body, files=[FileChange(path=p, status="modified", additions=30, deletions=2) for p in paths],
                     additions=30 * len(paths), deletions=2 * len(paths))
    return OfflineDrafter().draft(pr, [], "zh-CN").headline


#: (title, the PR's files, the headline it gets); None: the title's object cannot be said, so the fallback speaks.
CASES = [
    ("[Attention] add gpt-oss support", ("vllm_ascend/attention/attention_v1.py",), "新增 `gpt-oss` 支持"),
    ("[EPLB] Avoiding eplb's dependency on a specified model", ("vllm_ascend/eplb/adaptor/vllm_adaptor.py",),
     "避免 EPLB 依赖"),
    ("implement batch invariant with ascendc", ("vllm_ascend/batch_invariant.py", "csrc/ascendc/kernel.cpp"),
     "实现 `batch_invariant`，结合 `ascendc`"),
    ("[BugFix] Add support for rotary_dim parameter when using partial rope in rotary_embedding",
     ("vllm_ascend/ops/rotary_embedding.py",), "为 `rotary_dim` 参数新增支持"),
    ("[fix bug] fix tensor mismatch bug in sigmoid operate test case", ("tests/ut/ops/test_sigmoid.py",), None),
    ("[P/D][PCP] mooncake layerwise support pcp function",
     ("vllm_ascend/distributed/mooncake_layerwise_connector.py",), "`mooncake` 逐层支持 PCP 函数"),
    ("[Refact]Refact MLA/SFA weight prefetch to consist with moe weight prefetch",
     ("vllm_ascend/ops/weight_prefetch.py",), "重构 MLA/SFA 权重预取"),
    ("DispatchGmmCombineDecode support bf16/float16 gmm1/gmm2 weight and support gmm weight with ND format",
     ("csrc/dispatch_gmm_combine_decode/op_host.cpp",), "`DispatchGmmCombineDecode` 支持 `bf16/float16` `gmm1/gmm2` 权重"),
    ("[CI][Misc] Use offline mode for model downloads", (".github/workflows/nightly.yaml",), None),
    ("[Patch] Fix balance scheduling", ("vllm_ascend/patch/platform/patch_scheduler.py",), None),
    ("[Feature] Add Mooncake layerwise connector for PD disaggregation", ("vllm_ascend/distributed/x.py",),
     "为 PD 分离新增 Mooncake 逐层连接器"),
    # a name stays a name; only lowercase words the glossary cannot say join into the file's name
    ("[KV] Support KV cache offload prefill with LMCache connector", ("vllm/distributed/kv_connector/lmcache_connector.py",),
     "支持 KV 缓存预填充，结合 LMCache 连接器"),
    # words a file's name is made of after its first are no names: "align sum kernels" cannot be said
    ("[perf] Speed up align sum kernels", ("csrc/moe/moe_align_sum_kernels.cu",), None),
    # the PR's own folder names beside Chinese are code
    ("[Misc] Remove hunyuan_vl patch", ("vllm_ascend/patch/worker/patch_hunyuan_vl.py",), "移除 `hunyuan_vl` `patch`"),
    ("[Test] add attention ut for sfa_cp", ("tests/ut/attention/test_sfa_cp.py",), "为 `sfa_cp` 新增注意力 `ut`"),
    ("[Feature] Support the merged graph for mtp", ("vllm_ascend/spec_decode/mtp_proposer.py",), "为 `mtp` 支持合并图"),
    ("[Doc]: fixing doc typos", ("docs/usage/v1_guide.md",), "修复文档拼写错误"),
    # "note for X": the note's subject is the object, and "unsupported" cannot be said
    ("[Doc] Add note for unsupported PCP + FULL", ("docs/source/user_guide/feature_guide/graph_mode.md",), None),
    # an aside in parentheses goes, and the title goes on after it
    ("[Feat]Adapt the graph mode (piecewise and full_decode_only) of PCP and DCP for DeepSeek v3.2.",
     ("vllm_ascend/compilation/acl_graph.py",), "为 `DeepSeek` v3.2 适配图模式 PCP DCP"),
    ('[Docs] Fix typo ("defult") and double spacing', ("docs/configuration/optimization.md",), "修复拼写错误"),
    # a verb after its subject: the object after the verb is said whole, or the fallback speaks
    ("[P/D][KVPool]Mooncake Layerwise Connector supports kv_pool", ("vllm_ascend/distributed/kv_pool/x.py",),
     "Mooncake 逐层连接器支持 `kv_pool`"),
    ("A5 support reshape and cache in CP situation", ("vllm_ascend/attention/attention_v1.py",), None),
    # a term the glossary knows is said, though the PR's folder has its name
    ("[Doc] update Qwen3.5 user guide", ("docs/source/user_guide/qwen3.5.md",), "升级 `Qwen3.5` 用户指南"),
]


@pytest.mark.parametrize(("title", "paths", "expected"), CASES)
def test_the_headline_keeps_the_object_of_the_verb_or_gives_way(
        title: str, paths: tuple[str, ...], expected: str | None) -> None:
    head = _head(title, paths)
    if expected is None:
        assert head == f"变更：改动 {paths[0]}", head
    else:
        assert head == expected, head
    assert not mixes_languages(head)


@pytest.mark.parametrize("title", [
    "[Refact]Refact MLA/SFA weight prefetch to consist with moe weight prefetch",
    "DispatchGmmCombineDecode support bf16/float16 gmm1/gmm2 weight and support gmm weight with ND format",
    "[Lint] fix typos error in the example server",
])
def test_no_term_is_said_twice(title: str) -> None:
    head = _head(title, ("vllm_ascend/x.py",))
    for term in ("权重", "预取", "支持", "错误", "修复"):
        assert head.count(term) <= 1, head


@pytest.mark.parametrize(("title", "verb"), [("Refact the scheduler", "重构"), ("Refactor the scheduler", "重构"),
                                              ("Refactored the scheduler", "重构")])
def test_a_variant_of_a_known_verb_is_that_verb(title: str, verb: str) -> None:
    assert _head(title, ("vllm_ascend/x.py",)) == f"{verb}调度器"


def test_without_files_a_title_that_cannot_be_said_is_kept_whole_after_the_area() -> None:
    # "启用 `DeepSeek` `V3`" would say DeepSeek was enabled; the title said in part misleads, half said mixes
    assert _head("[Feature] Enable two-batch overlap for DeepSeek V3", ()) == \
        "变更：Enable two-batch overlap for `DeepSeek` `V3`"
