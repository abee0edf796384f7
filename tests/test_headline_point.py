"""zh-CN headlines say the point of a PR in Chinese: the title's verb, names and known terms (code in
backticks), a purpose clause, the main fact at most; never a count of changes nor the English title."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.draft.language import mixes_languages
from prdigest.draft.offline import OfflineDrafter
from prdigest.kernel.models import Change, FileChange, PullRequest

WHEN = datetime(2026, 3, 20, tzinfo=timezone.utc)


def _head(title: str, changes: list[Change] = (), path: str = "vllm_ascend/x.py") -> str:  # type: ignore[assignment]
    pr = PullRequest(number=1, url="https://github.com/o/r/pull/1", title=title, author="a", merged_at=WHEN,
                     body="Body.", files=[FileChange(path=path, status="modified", additions=300, deletions=20)],
                     additions=300, deletions=20, changes=list(changes))
    return OfflineDrafter().draft(pr, [], "zh-CN").headline


@pytest.mark.parametrize(("title", "expected"), [
    ("[Feat] Add Mooncake layerwise connector for PD disaggregation", "为 PD 分离新增 Mooncake 逐层连接器"),
    ("Optimize prefix caching validation: focus on prefill TTFT gains", "优化前缀缓存校验"),
    ("[Misc] add enable_sparse_c8 option in configuration options", "`enable_sparse_c8`"),
    ("Bump version from 0.17.0 to 0.18.0", "版本由 0.17.0 升级至 0.18.0"),
])
def test_the_title_s_point_in_chinese(title: str, expected: str) -> None:
    head = _head(title)
    assert expected in head and not mixes_languages(head)


def test_many_facts_are_never_counted_in_the_headline() -> None:
    facts = [Change(kind="added", symbol=f"Connector{i}", path="vllm_ascend/c.py") for i in range(160)]
    head = _head("[Feat] Add Mooncake layerwise connector for PD disaggregation", facts)
    assert "项改动" not in head and "等" not in head


def test_a_title_the_phrasebook_cannot_say_is_not_kept_in_english() -> None:
    title = "Recompute scheduler output leaks when the draft stalls midway"
    head = _head(title)
    assert title not in head and "Recompute scheduler" not in head


def test_code_names_beside_chinese_are_backticked_one_by_one() -> None:
    assert "新增 `fiav2` 至 `acl_graph`" in _head("[Feature]add fiav2 into acl_graph")


def test_a_revert_says_the_reverted_point_in_chinese() -> None:
    head = _head('Revert "[Perf] Optimize prefix caching validation for the scheduler"')
    assert head.endswith("回滚「为调度器优化前缀缓存校验」"), head


def test_the_verb_is_not_said_twice() -> None:
    head = _head("[Feature] w8a8c8 support in dsv3.2/glm5")
    assert head.count("支持") == 1, head


def test_a_body_change_never_stands_in_for_the_title_s_point() -> None:
    # The only fact says a method's body changed: the title's point (what was fixed) says more.
    body = [Change(kind="body", symbol="NPUPlatform.check_and_update_config", path="vllm_ascend/platform.py",
                   detail="body changed", reach="internal")]
    head = _head("[BugFix] Fix server init error when max_num_seqs is not a multiple of tp", body)
    assert head.startswith("修复服务初始化错误") and "的实现" not in head


def test_the_first_sentence_says_the_point_when_the_headline_is_a_fact() -> None:
    fact = Change(kind="signature", symbol="FusedMoE", path="vllm_ascend/ops/moe.py", before="(self, x)",
                  after="(self, x, router)", detail="+router", reach="public", reach_how="re-exported")
    pr = PullRequest(number=1, url="https://github.com/o/r/pull/1", title="Fix `FusedMoE` routing weirdness for "
                     "expert parallelism", author="a", merged_at=WHEN, body="Body.", changes=[fact], additions=30,
                     deletions=2, files=[FileChange(path="vllm_ascend/ops/moe.py", status="modified", additions=30,
                                                    deletions=2)])
    draft = OfflineDrafter().draft(pr, [], "zh-CN")
    assert "router" in draft.headline  # the main fact: the one the title does not say
    label, _, rest = draft.rationale.partition("：")
    assert rest.split("；")[0] == "为专家并行修复 `FusedMoE` 路由"  # the point, then the reasons and facts
