"""The lede: offline from the deep-read headlines and the busiest subsystems; a model's lede passes the same
grounding as a draft (only this edition's PR numbers and @names, two to four sentences) or falls back."""

from __future__ import annotations

import logging

import pytest

from prdigest.lede import check_lede, offline_lede, sentences, write_lede
from tests.connect_factories import entry_of, pr, week_edition


def edition(language: str = "en"):
    return week_edition(0, [
        entry_of(pr(10, "[Kernel] Fused MoE align", author="alice"), "deep-read", subsystems=["kernels", "moe"]),
        entry_of(pr(11, "[Core] Scheduler fairness", author="bob"), "deep-read", subsystems=["scheduler-core"]),
        entry_of(pr(12, "[Kernel] Tune tiles", author="carol"), "skim", subsystems=["kernels"]),
        entry_of(pr(13, "[Docs] Typo", author="dan"), "skip", subsystems=["docs"]),
        entry_of(pr(14, "[Misc] Rejected", author="mallory"), "deep-read", subsystems=["other"], status="rejected"),
    ], language=language)


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_the_offline_lede_is_grounded_and_names_deep_reads_and_busy_subsystems(language: str) -> None:
    ed = edition(language)
    lede = offline_lede(ed)
    assert check_lede(lede, ed) == []
    assert 2 <= len(sentences(lede)) <= 4
    assert "#10" in lede and "#11" in lede and "kernels" in lede and "#14" not in lede
    if language == "zh-CN":
        assert lede.startswith("本期合并 4 个 PR，其中 2 篇值得精读。")


def test_a_lede_citing_a_pr_outside_the_edition_is_rejected_by_grounding(caplog) -> None:
    ed = edition()
    outside = "This week #10 lands a fused kernel. It builds on #41234 from last month."
    assert check_lede(outside, ed) == [f"cites #41234, which is not in {ed.name}"]
    with caplog.at_level(logging.WARNING, logger="prdigest.lede"):
        assert write_lede(ed, lambda messages: outside) == offline_lede(ed)
    assert "lede rejected by grounding" in caplog.text and "#41234" in caplog.text


@pytest.mark.parametrize(("text", "problem"), [
    ("A week for @mallory and #10. Read it.", "names @mallory"),  # wrote only a rejected PR
    ("Read #14 first. Then #10.", "cites #14"),                   # rejected by the editor
    ("One sentence about #10.", "has 1 sentences"),
    ("One. Two. Three. Four. Five.", "has 5 sentences"),
    ("Read #10. <b>Now</b>.", "not plain prose"),
])
def test_check_lede_names_what_is_wrong(text: str, problem: str) -> None:
    assert any(problem in p for p in check_lede(text, edition()))


def test_a_grounded_model_lede_is_kept_and_a_failing_model_falls_back() -> None:
    ed = edition()
    good = "Two deep reads this week: #10 from @alice fuses MoE align. #11 makes the scheduler fair."
    assert write_lede(ed, lambda messages: good) == good

    def broken(messages):
        raise TimeoutError("no answer")

    assert write_lede(ed, broken) == offline_lede(ed)


def test_the_prompt_carries_only_live_entries_as_data() -> None:
    from prdigest.lede import lede_messages

    messages = lede_messages(edition())
    user = messages[-1]["content"]
    assert "#10 @alice [deep-read]" in user and "#14" not in user


def test_a_drafted_lede_citing_an_entry_the_editor_rejects_is_redrafted_offline() -> None:
    from prdigest.review import apply_decision
    from prdigest.review.decision import ReviewDecision

    ed = edition()
    ed = ed.model_copy(update={"lede": "Read #10 and #11 first. Both are deep reads."})
    out = apply_decision(ed, ReviewDecision(decision="send", approver="Lin", reject="11"))
    assert "#11" not in out.lede and check_lede(out.lede, out) == []
    kept = apply_decision(ed, ReviewDecision(decision="send", approver="Lin", reject="12"))
    assert kept.lede == ed.lede


def test_the_model_is_asked_through_the_openai_client_and_an_answer_that_is_no_lede_falls_back(tmp_path,
                                                                                              caplog) -> None:
    from prdigest.config import Settings
    from prdigest.lede import openai_complete
    from tests.servers.openai_server import OpenAIServer

    ed = edition()
    with OpenAIServer(models=("local-model",)) as server:
        settings = Settings(llm_base_url=server.base_url, OPENAI_API_KEY=server.api_key, model="local-model",
                            state=str(tmp_path / "state.sqlite"))
        # The local server answers every chat call with an entry's JSON: not two to four sentences of prose.
        with caplog.at_level(logging.WARNING, logger="prdigest.lede"):
            assert write_lede(ed, openai_complete(settings)) == offline_lede(ed)
        assert server.chat_calls == 1 and "lede rejected by grounding" in caplog.text
        [request] = server.requests
    assert request["model"] == "local-model" and "<pr-data>" in request["messages"][-1]["content"]
