"""Read first: the offline ranking on hand-labelled weeks, its features, the budget, and the model's ranking."""

from __future__ import annotations

import logging

import pytest

from benchmarks.read_first import HAND_TOP, figures, weeks
from prdigest.connect.readfirst import (
    READ_FIRST_AT,
    edition_ranking,
    offline_ranking,
    parse_model_ranking,
    rank_messages,
    score,
)
from prdigest.connect.variants import pick_read_first
from prdigest.kernel.models import FileChange, PullRequest
from prdigest.kernel.prtext.signals import extract
from tests.connect_factories import REPO, entry_of, week_edition
from tests.factories import WEEK


@pytest.fixture(scope="module")
def ranked_weeks():
    return {w.role: w for w in weeks()}


@pytest.mark.parametrize("role", ["held out", "tuning"])
def test_a_reader_of_everything_reads_first_what_a_person_ranked_high_and_labelled_deep(ranked_weeks, role) -> None:
    """Targets: at least 3 of the first 5 in the hand ranking's top 12, at least 4 of 5 labelled deep reads.
    The held-out week was never used to choose a weight."""
    week = ranked_weeks[role]
    first, in_hand, deep = figures(week)
    assert len(first) == 5 and len(week.hand) == HAND_TOP
    assert in_hand >= 3, f"{week.name}: only {in_hand} of {first} in the hand top 12 {week.hand}"
    assert deep >= 4, f"{week.name}: only {deep} of {first} labelled deep reads"


def test_the_held_out_ranking_table(ranked_weeks) -> None:
    """The held-out week's first five, pinned: a change here is a change in what readers start with."""
    week = ranked_weeks["held out"]
    assert week.first() == [61002, 61004, 61001, 61003, 61015]
    # Typo fixes, CI shards, flaky-test skips and docs never deserve read-first, whatever the budget.
    assert not {61009, 61011, 61016, 61020} & {r.number for r in week.ranking}
    # A narrow reader (LoRA and sampling) gets their own entries, ranked, within the budget.
    narrow = week.first(frozenset({"lora", "sampling"}))
    assert narrow and set(narrow) <= {e.number for e in week.entries if {"lora", "sampling"} & set(e.subsystems)}
    assert narrow[0] in week.deep


def _pr(number: int, title: str, body: str, files: list[tuple[str, int, int]]) -> PullRequest:
    return PullRequest(number=number, url=f"https://github.com/{REPO}/pull/{number}", title=title, body=body,
                       merged_at=WEEK, files=[FileChange(path=p, additions=a, deletions=d) for p, a, d in files],
                       additions=sum(a for _, a, _ in files), deletions=sum(d for _, _, d in files))


def test_semantics_that_change_behaviour_rank_above_size_alone() -> None:
    big = _pr(1, "[Core] Move the scheduler helpers", "Pure refactor. No functional change intended.",
              [("vllm/v1/core/sched/helpers.py", 900, 850)])
    flip = _pr(2, "[Core] Enable chunked prefill by default",
               "Chunked prefill is now enabled by default: p99 latency 12.0 s -> 7.1 s on ShareGPT.",
               [("vllm/config/scheduler.py", 20, 4)])
    entries = [entry_of(big, "deep-read", subsystems=["scheduler-core"]),
               entry_of(flip, "deep-read", subsystems=["scheduler-core"])]
    ranking = offline_ranking(entries, [big, flip])
    assert [r.number for r in ranking][0] == 2
    flipped = next(r for r in ranking if r.number == 2)
    keys = {f.key for f in flipped.features}
    assert {"verdict", "semantics", "perf"} <= keys
    assert "2 " in flipped.explain() and "measured" in flipped.explain()
    refactor = score(entries[0], extract(big, ["scheduler-core"]))
    assert any(f.key == "unchanged" and f.weight < 0 for f in refactor.features)


def test_fewer_than_the_budget_when_fewer_deserve_it() -> None:
    prs = [_pr(10, "[Kernel] Fix wrong outputs in the fused MoE kernel",
               "The kernel silently produced wrong results for odd expert counts; root cause was an overflow.",
               [("csrc/moe/align.cu", 60, 10)]),
           _pr(11, "[Docs] Fix a typo", "typo", [("docs/index.md", 1, 1)]),
           _pr(12, "[Misc] Rename a helper", "Rename.", [("vllm/utils.py", 8, 8)])]
    entries = [entry_of(prs[0], "deep-read"), entry_of(prs[1], "skip"), entry_of(prs[2], "skim")]
    ranking = offline_ranking(entries, prs)
    assert [r.number for r in ranking] == [10] and ranking[0].score >= READ_FIRST_AT
    assert [e.number for e in pick_read_first([r.number for r in ranking], entries, budget=5)] == [10]


def test_the_budget_caps_read_first_in_ranking_order() -> None:
    entries = [entry_of(_pr(n, f"PR {n}", "", []), "deep-read") for n in (1, 2, 3, 4)]
    assert [e.number for e in pick_read_first([4, 2, 3, 1], entries, budget=2)] == [4, 2]
    assert [e.number for e in pick_read_first([4, 2, 3, 1], entries[:2], budget=5)] == [2, 1]


def test_a_models_ranking_must_order_only_the_deep_reads_it_drafted() -> None:
    assert parse_model_ranking('{"order": [3, 1]}', {1, 2, 3}) == ([3, 1], [])
    assert parse_model_ranking('```json\n{"order": [2]}\n```', {1, 2}) == ([2], [])
    assert parse_model_ranking("Read #3 first", {3})[1] == ["the answer is not JSON"]
    assert parse_model_ranking('{"order": [9]}', {1})[1] == ["#9 is not a deep read of this edition"]
    assert parse_model_ranking('{"order": [1, 1]}', {1})[1] == ["a PR is ranked twice"]
    assert parse_model_ranking('{"order": []}', {1})[1]


def test_the_model_ranks_through_the_openai_client_and_a_bad_answer_falls_back(tmp_path, caplog) -> None:
    from prdigest.draft.endpoint import openai_complete
    from prdigest.kernel.config import Settings
    from tests.servers.openai_server import OpenAIServer

    prs = [_pr(n, f"[Core] Change {n}", "The scheduler now preempts by recompute by default.",
               [("vllm/v1/core/sched/scheduler.py", 100 + n, 10)]) for n in (21, 22, 23)]
    edition = week_edition(0, [entry_of(prs[0], "deep-read", subsystems=["scheduler-core"]),
                               entry_of(prs[1], "deep-read", subsystems=["scheduler-core"]),
                               entry_of(prs[2], "skim", subsystems=["scheduler-core"])])
    offline = edition_ranking(edition, prs)
    with OpenAIServer(models=("local-model",)) as server:
        settings = Settings(llm_base_url=server.base_url, OPENAI_API_KEY=server.api_key, model="local-model",
                            state=str(tmp_path / "state.sqlite"))
        # The local model orders the deep reads by number, highest first; the offline rest follows.
        ranked = edition_ranking(edition, prs, complete=openai_complete(settings))
        assert ranked[:2] == [22, 21] and set(ranked) == set(offline)
        user = server.requests[0]["messages"][-1]["content"]
        assert "#21" in user and "#22" in user and "#23" not in user  # only the deep reads are asked about
        server.plan(None, "invalid")
        with caplog.at_level(logging.WARNING, logger="prdigest.connect.readfirst"):
            assert edition_ranking(edition, prs, complete=openai_complete(settings)) == offline
        assert "the answer is not JSON" in caplog.text and server.chat_calls == 2
    assert rank_messages(edition, edition.entries[:1])[0]["content"].startswith("You rank the deep-read")
