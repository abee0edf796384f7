"""A rationale opens with its entry's final verdict in that verdict's own words, whatever opened it before."""

from __future__ import annotations

import pytest

from prdigest.kernel.models import Verdict
from prdigest.kernel.prtext.restate import opens_with_verdict, restated, without_label


@pytest.mark.parametrize(("text", "verdict", "language", "expected"), [
    ("值得精读：改变了缓存的归属。", Verdict.SKIP, "zh-CN", "可略过：改变了缓存的归属。"),
    ("值得精读：改变了缓存的归属。", Verdict.DEEP_READ, "zh-CN", "值得精读：改变了缓存的归属。"),
    ("Deep read: changes what a cache owns.", Verdict.SKIM, "en", "Skim: changes what a cache owns."),
    ("**Deep read**: a new backend.", Verdict.SKIP, "en", "Skip: a new backend."),
    ("This PR changes the cache keys.", Verdict.DEEP_READ, "en", "Deep read: This PR changes the cache keys."),
    ("本 PR 改变了缓存键。", Verdict.SKIM, "zh-CN", "值得快速阅读：本 PR 改变了缓存键。"),
    ("Skim — routine bump.", Verdict.SKIP, "zh-CN", "可略过：routine bump."),
    ("", Verdict.SKIP, "en", "Skip"),
    ("Skimming the code shows a new API.", Verdict.SKIM, "en", "Skim: Skimming the code shows a new API."),
])
def test_restated_puts_the_final_label_first_and_keeps_the_reasons(text: str, verdict: Verdict, language: str,
                                                                   expected: str) -> None:
    out = restated(text, verdict, language)
    assert out == expected
    assert opens_with_verdict(out, verdict, language)


def test_a_reason_for_the_change_comes_right_after_the_label() -> None:
    out = restated("值得精读：改变了缓存的归属。", Verdict.SKIP, "zh-CN", "本期已被 #28080 回滚")
    assert out == "可略过：本期已被 #28080 回滚；改变了缓存的归属。"
    assert without_label(out).startswith("本期已被")


@pytest.mark.parametrize(("text", "verdict", "language"), [
    ("值得精读：x", Verdict.SKIP, "zh-CN"), ("Deep read: x", Verdict.DEEP_READ, "zh-CN"),
    ("Deep readings: x", Verdict.DEEP_READ, "en"), ("x", Verdict.SKIM, "en"),
])
def test_opens_with_verdict_rejects_another_label_or_language(text: str, verdict: Verdict, language: str) -> None:
    assert not opens_with_verdict(text, verdict, language)
