"""Verdicts, headlines, read first, the prompt and the grounding check from code facts; the performance parser."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from prdigest.connect.readfirst import features
from prdigest.draft import grounding
from prdigest.draft.language import mixes_languages
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.packing import pack
from prdigest.draft.verdict import assess
from prdigest.kernel.models import Change, DraftEntry, Entry, FileChange, PullRequest, Verdict
from prdigest.kernel.prompts import load_prompt
from prdigest.kernel.prtext.prose import perf_evidence
from prdigest.kernel.prtext.signals import extract

WHEN = datetime(2026, 3, 25, tzinfo=timezone.utc)


@pytest.mark.parametrize("text", [
    "Bump flashinfer 0.3.1 -> 0.4.0", "torch 2.9 → 2.10", "Upgrade from v0.10.0 to v0.11.0",
    "from 2.4.0 to 2.5.0", "a 128x256 tile", "inputs of (4 x 8192)", "runs on 8x H100", "8x GPUs",
    "y = 2x + b", "2x + 3 = 7", "scale = 4x", "2026-03-23 → 2026-03-30", "from 2025 to 2026",
    "batch 128 -> 256", "block 16 vs 32", "python 3.10 vs 3.12", "up to 128x", "dim 4096 vs 8192",
])
def test_versions_shapes_dates_and_equations_are_not_performance(text: str) -> None:
    claims, _, factor = perf_evidence(text)
    assert claims == () and factor is None, (text, claims, factor)


@pytest.mark.parametrize(("text", "claim", "factor"), [
    ("2.3x faster than the Triton path", "2.3x", "2.3x"),
    ("latency 120 ms → 80 ms", "120 ms → 80 ms", None),
    ("from 1,865 TPS to 2,153 TPS", "from 1,865 TPS to 2,153 TPS", None),
    ("With fused kernel: 2,153 TPS (~15% improvement)", "15% improvement", None),
    ("a speedup of 1.5x on decode", "1.5x", "1.5x"),
    ("| Config | Time (s) | Speedup |\n| --- | --- | --- |\n| fp8 | 67.15 | **1.50x** |", "1.50x", "1.5x"),
    ("improves throughput by 12%", "improves throughput by 12%", None),
    ("TTFT: 1.2s vs 0.8s", "1.2s vs 0.8s", None),
    ("Mean TPOT on MI300X: EP=8 128.4 -> 94.1 ms", "128.4 -> 94.1 ms", None),
    ("raises average accepted tokens from 1.4 to 1.8", "from 1.4 to 1.8", None),
])
def test_speed_ups_and_measured_comparisons_are_performance(text: str, claim: str, factor: str | None) -> None:
    claims, _, found = perf_evidence(text)
    assert claim in claims and found == factor, (text, claims, found)


def _pr(title: str, changes: list[Change], files: list[FileChange], body: str = "") -> PullRequest:
    return PullRequest(number=4150, url="https://github.com/pytorch/ao/pull/4150", title=title, body=body,
                       merged_at=WHEN, files=files, additions=sum(f.additions for f in files),
                       deletions=sum(f.deletions for f in files), changes=changes)


LAYOUT = "torchao/dtypes/uintx/int4_cpu_layout.py"
REMOVED = [Change(kind="removed", symbol="Int4CPULayout", path=LAYOUT, line=30),
           Change(kind="removed", symbol="Int4CPUAQTTensorImpl", path=LAYOUT, line=80)]
BIG_TESTS = [FileChange(path="test/quantization/test_big.py", additions=700, deletions=10),
             FileChange(path="torchao/quantization/quant_api.py", additions=5, deletions=1)]
TEST_FACTS = [Change(kind="tests", symbol="test_big_case", path="test/quantization/test_big.py", after="test_big_case"),
              Change(kind="body", symbol="quantize_", path="torchao/quantization/quant_api.py")]


def test_size_is_not_depth_when_the_pr_has_facts() -> None:
    body = "A long description. " * 30
    without = assess(extract(_pr("Rework the quantization tests", [], BIG_TESTS, body), []))
    with_facts = assess(extract(_pr("Rework the quantization tests", TEST_FACTS, BIG_TESTS, body), []))
    assert any(r.key == "size" for r in without.reasons)
    assert not any(r.key == "size" for r in with_facts.reasons)
    assert any(r.key == "fact-internal" for r in with_facts.reasons)
    assert with_facts.score < without.score


def test_facts_only_about_tests_docs_or_pins_are_at_most_skim() -> None:
    pins = [Change(kind="dependency", symbol="torch", path="requirements.txt", before=">=2.9", after=">=2.11",
                   language="config")]
    files = [FileChange(path="requirements.txt", additions=1, deletions=1),
             FileChange(path="torchao/ops.py", additions=600, deletions=40)]
    body = ("This reworks the dispatch; the interface between the two kernels changes, and the trade-off "
            "is measured: 2.3x faster at batch 1 and 1.4x at batch 64. ") * 5
    s = extract(_pr("[CUDA] Require torch 2.11", pins, files, body), ["kernels"])
    assert s.quiet_facts
    assert assess(s).verdict is not Verdict.DEEP_READ


def test_a_public_api_break_weighs_in_the_verdict_and_is_said_with_the_fact() -> None:
    files = [FileChange(path=LAYOUT, deletions=330, status="removed")]
    a = assess(extract(_pr("Delete deprecated Int4CPULayout and related code", REMOVED, files), []))
    reason = next(r for r in a.reasons if r.key == "fact-breaking")
    from prdigest.draft.phrasing import draft_words

    english, chinese = reason.text(draft_words("en")), reason.text(draft_words("zh-CN"))
    # the reason names the break the title does not already name
    assert reason.weight > 0 and "`Int4CPUAQTTensorImpl`" in english and "`Int4CPUAQTTensorImpl`" in chinese


@pytest.mark.parametrize(("title", "changes", "expected"), [
    ("Delete deprecated Int4CPULayout and related code", REMOVED, "移除 `Int4CPULayout`，移除 `Int4CPUAQTTensorImpl`"),
    ("Delete deprecated Int4CPULayout and related code",
     [*REMOVED, Change(kind="file-deleted", symbol="int4_cpu_layout.py", path=LAYOUT)], "移除 `Int4CPULayout`"),
    ("[Core] Rename FusedMoE for clarity in the modular kernel",
     [Change(kind="renamed", symbol="FusedMoEFactory", path="vllm/moe.py", before="FusedMoE",
             after="FusedMoEFactory")], "重命名 `FusedMoE` 为 `FusedMoEFactory`"),
    ("Pass layer names through when building the spec",
     [Change(kind="signature", symbol="get_kv_cache_spec", path="vllm/attn.py", detail="+layer_names")],
     "`get_kv_cache_spec` 新增参数 `layer_names`"),
])
def test_zh_headlines_are_composed_in_chinese_from_the_facts(title: str, changes: list[Change], expected: str) -> None:
    pr = _pr(title, changes, [FileChange(path=changes[0].path, additions=10, deletions=10)])
    head = OfflineDrafter().draft(pr, [], "zh-CN").headline
    assert head.endswith(expected), head
    assert not mixes_languages(head)
    # Without facts the headline is still Chinese, never the English title (kept in the link line: issue 35).
    plain = OfflineDrafter().draft(pr.model_copy(update={"changes": []}), [], "zh-CN").headline
    assert re.search(r"[\u4e00-\u9fff]", plain) and title.split("]")[-1].strip()[:20] not in plain


def test_a_title_the_glossary_can_say_is_still_said_from_the_title() -> None:
    pr = _pr("Fix flaky tests", REMOVED, [FileChange(path="tests/test_a.py", additions=3, deletions=3)])
    assert OfflineDrafter().draft(pr, [], "zh-CN").headline.endswith("修复不稳定的测试")


def test_the_grounding_check_accepts_a_symbol_a_fact_names() -> None:
    draft = DraftEntry(number=4150, headline="Removes `Int4CPUAQTTensorImpl`", verdict=Verdict.SKIM,
                       rationale="Callers of `Int4CPULayout` must migrate.")
    with_facts = _pr("Delete deprecated layouts", REMOVED, [])
    assert grounding.unsupported(draft, with_facts) == []
    assert grounding.unsupported(draft, with_facts.model_copy(update={"changes": []})) == [
        "Int4CPUAQTTensorImpl", "Int4CPULayout"]


def test_the_offline_draft_of_a_pr_with_facts_is_grounded_and_names_them() -> None:
    pr = _pr("Delete deprecated Int4CPULayout and related code", REMOVED,
             [FileChange(path=LAYOUT, deletions=330, status="removed")])
    for language in ("zh-CN", "en"):
        d = OfflineDrafter().draft(pr, [], language)
        assert grounding.unsupported(d, pr) == []
        # the rationale names what the title does not; the focus names both breaks
        assert "`Int4CPUAQTTensorImpl`" in d.rationale
        assert "`Int4CPULayout`" in d.focus[0] and "`Int4CPUAQTTensorImpl`" in d.focus[0]


def test_the_model_prompt_lists_the_facts_breaking_first() -> None:
    changes = [Change(kind="added", symbol="helper", path="a.py", line=3), *REMOVED]
    pr = _pr("Delete deprecated layouts", changes, [FileChange(path=LAYOUT, deletions=330)])
    user = load_prompt("entry").render("user", {"language": "en", "pr": pack(pr, 6000), "subsystems": []})
    facts = user[user.index("Code facts (read from the files"):].splitlines()[1:4]
    assert facts[0] == f"- removed Int4CPULayout in {LAYOUT}:30 [breaking]"
    assert facts[1] == f"- removed Int4CPUAQTTensorImpl in {LAYOUT}:80 [breaking]"
    assert facts[2] in ("- added helper in a.py:3", "- … and 1 more")  # clipped last, never a breaking one
    assert "[breaking]" in load_prompt("entry").render("system", {"language": "en"})


def test_read_first_weighs_a_breaking_entry_and_an_api_change() -> None:
    pr = _pr("Delete deprecated layouts", REMOVED, [FileChange(path=LAYOUT, deletions=330)])
    draft = DraftEntry(number=4150, headline="h", verdict=Verdict.SKIM, rationale="r")
    entry = Entry.from_draft(pr, [], draft)
    keys = {f.key for f in features(entry, extract(pr, []))}
    assert {"fact-breaking", "fact-api"} <= keys
    cleared = entry.model_copy(update={"breaking": False})  # the editor's nobreak
    assert "fact-breaking" not in {f.key for f in features(cleared, extract(pr, []))}


@pytest.mark.parametrize(("headline", "mixed"), [
    ("从 0.17.0 to 0.18.0 升级 version", True),   # "to" is English before a version too
    ("升级 transformers v5", False),               # a package named with its version is a name
    ("升级 flashinfer 0.3.1", False),
    ("重命名 `FusedMoE` 为 `FusedMoEFactory`", False),
    ("修复 the scheduler 的问题", True),
])
def test_the_mixing_check_excuses_names_before_versions_not_english_words(headline: str, mixed: bool) -> None:
    assert mixes_languages(headline) is mixed


def test_a_version_bump_title_is_not_half_translated() -> None:
    pr = _pr("Bump version from 0.17.0 to 0.18.0", [], [FileChange(path="version.txt", additions=1, deletions=1)])
    head = OfflineDrafter().draft(pr, [], "zh-CN").headline
    assert head == "版本由 0.17.0 升级至 0.18.0"  # not "从 0.17.0 to 0.18.0 升级 version", nor the English title
