"""The model's pace and deadlines against the local OpenAI-compatible server (the real openai client over
real HTTP): no wait of our own when the endpoint states no limit, the endpoint's stated limit and its 429s
followed, and a slow-drip answer given up at the entry's and the run's deadline for the marked offline draft."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from prdigest.draft.concurrent import draft_entries
from prdigest.draft.pacing import EndpointPacer, duration
from prdigest.kernel.config import Settings
from prdigest.kernel.models import FileChange, PullRequest
from tests.factories import openai_drafter
from tests.servers.openai_server import OpenAIServer

MODEL = "local-model"


def _week(n: int) -> list[PullRequest]:
    return [PullRequest(number=500 + i, url=f"https://github.com/o/r/pull/{500 + i}", title=f"[Core] Change {i}",
                        author="alice", merged_at="2026-11-17T10:00:00Z", body="Reuses freed blocks.",
                        files=[FileChange(path="vllm/v1/core/block_pool.py", additions=40, deletions=10)],
                        additions=40, deletions=10) for i in range(n)]


def _settings(server: OpenAIServer, tmp_path: Path, **extra: object) -> Settings:
    values: dict[str, object] = {"llm_base_url": server.base_url, "OPENAI_API_KEY": server.api_key,
                                 "model": MODEL, "state": tmp_path / "state.sqlite", "llm_timeout": 5.0}
    values.update(extra)
    return Settings(**values)


@pytest.mark.parametrize(("text", "seconds"), [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("", None), ("soon", None),
    ("5 s", None),
])
def test_reset_durations_are_read_as_openai_writes_them(text: str, seconds: float | None) -> None:
    assert duration(text) == (pytest.approx(seconds) if seconds is not None else None)


def test_without_a_stated_limit_nothing_waits() -> None:
    pacer = EndpointPacer()
    pacer.observe(200, {"content-type": "application/json"})
    assert not pacer.announced and all(pacer.delay(5_000) == 0 for _ in range(1_000))


def test_a_stated_limit_spaces_requests_once_its_remaining_is_spent() -> None:
    pacer = EndpointPacer()
    pacer.observe(200, {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "2",
                        "x-ratelimit-reset-requests": "58s"})  # 58 used, refilled over 58 s: one a second
    assert pacer.acquire().waited == 0 and pacer.acquire().waited == 0
    assert pacer.delay() == pytest.approx(1.0, abs=0.05)


def test_a_stated_token_budget_holds_a_request_bigger_than_what_remains() -> None:
    pacer = EndpointPacer()
    pacer.observe(200, {"X-RateLimit-Limit-Tokens": "10000", "X-RateLimit-Remaining-Tokens": "1000",
                        "X-RateLimit-Reset-Tokens": "9s"})  # 1,000 tokens a second
    assert pacer.delay(500) == 0
    assert pacer.delay(3_000) == pytest.approx(2.0, abs=0.05)


def test_an_answer_counts_what_was_sent_after_its_request_and_an_older_answer_teaches_nothing() -> None:
    pacer = EndpointPacer()
    first, second, third = pacer.acquire(), pacer.acquire(), pacer.acquire()
    stated = {"x-ratelimit-limit-requests": "60", "x-ratelimit-remaining-requests": "3",
              "x-ratelimit-reset-requests": "57s"}  # one a second
    pacer.observe(200, stated, first)  # 3 remained when the first was admitted; two more went since
    assert pacer.acquire().waited == 0
    assert pacer.delay() == pytest.approx(1.0, abs=0.05)
    pacer.observe(200, {**stated, "x-ratelimit-remaining-requests": "50"}, second)  # newer, but stale: taken
    pacer.observe(200, {**stated, "x-ratelimit-remaining-requests": "59"}, first)  # older than one read: ignored
    assert pacer.delay() == 0 and third.requests_before == 2


def test_a_429_pauses_every_request_for_its_retry_after() -> None:
    pacer = EndpointPacer()
    pacer.observe(429, {"retry-after-ms": "400"})
    assert pacer.throttled == 1 and pacer.delay() == pytest.approx(0.4, abs=0.05)
    with pytest.raises(TimeoutError):
        pacer.acquire(until=time.monotonic() + 0.1)  # a wait past the deadline is refused, not slept


def test_an_endpoint_that_states_no_limit_is_not_paced(tmp_path: Path) -> None:
    # A team's own vLLM server: 64 drafts at 32 in flight and 0.1 s each take 0.2 s ideally; the former
    # default ceiling of 600 requests a minute waited 5.4 s whatever the machine's load (a burst of 10, then
    # one every 0.1 s). The bound sits far from both: a loaded machine's CPU time does not fail it.
    with OpenAIServer(models=(MODEL,), latency=0.1) as server:
        drafter = openai_drafter(_settings(server, tmp_path, llm_concurrency=32))
        try:
            started = time.monotonic()
            entries = draft_entries(_week(64), lambda pr: [], drafter.draft, "en", concurrency=32)
            elapsed = time.monotonic() - started
        finally:
            drafter.close()
    assert all(e.drafter == f"openai:{MODEL}" for e in entries) and server.chat_calls == 64
    assert elapsed < 4.0, f"{elapsed:.2f} s"
    assert drafter.pacer is not None and drafter.pacer.waits == 0 and drafter.pacer.waited == 0


def test_the_endpoints_stated_limit_is_followed_with_few_429s(tmp_path: Path) -> None:
    # 5 requests a second, stated on every answer: 20 drafts at 8 in flight need ~3 s whatever we do; what
    # pacing changes is how many calls the endpoint turns away (the first burst, before any answer said so).
    with OpenAIServer(models=(MODEL,), rate_limit=(5, 1.0)) as server:
        drafter = openai_drafter(_settings(server, tmp_path))
        try:
            started = time.monotonic()
            entries = draft_entries(_week(20), lambda pr: [], drafter.draft, "en", concurrency=8)
            elapsed = time.monotonic() - started
        finally:
            drafter.close()
    assert all(e.drafter == f"openai:{MODEL}" for e in entries)
    assert elapsed >= 2.5
    assert server.throttled <= 8, server.throttled  # at most the first burst: 8 in flight before any answer
    assert drafter.pacer is not None and drafter.pacer.announced


def test_a_slow_drip_answer_is_given_up_at_the_entrys_deadline_for_the_marked_offline_draft(tmp_path: Path) -> None:
    # Every read is quick (a byte each 50 ms), the answer is not (~1,500 bytes: over a minute): the SDK's
    # per-read timeout never fires; the entry's deadline does.
    with OpenAIServer(models=(MODEL,), default="drip", drip_seconds=0.05) as server:
        drafter = openai_drafter(_settings(server, tmp_path, llm_entry_deadline=1.0))
        try:
            started = time.monotonic()
            draft = drafter.draft(_week(1)[0], [], "en")
            elapsed = time.monotonic() - started
        finally:
            drafter.close()
    assert elapsed < 30.0, f"{elapsed:.2f} s"  # the whole answer takes over a minute; loose for a loaded machine
    assert draft.drafter == "offline-fallback" and draft.needs_editing
    assert any("entry's 1 s deadline" in w for w in draft.warnings)
    assert server.chat_calls == 1  # given up, not retried


def test_past_the_runs_deadline_every_entry_left_is_the_marked_offline_draft(tmp_path: Path) -> None:
    with OpenAIServer(models=(MODEL,), default="drip", drip_seconds=0.05) as server:
        drafter = openai_drafter(_settings(server, tmp_path, llm_entry_deadline=60, llm_run_deadline=1.0))
        try:
            started = time.monotonic()
            entries = draft_entries(_week(6), lambda pr: [], drafter.draft, "en", concurrency=2)
            elapsed = time.monotonic() - started
        finally:
            drafter.close()
    assert elapsed < 30.0, f"{elapsed:.2f} s"  # the whole answer takes over a minute; loose for a loaded machine
    assert [e.drafter for e in entries] == ["offline-fallback"] * 6 and all(e.needs_editing for e in entries)
    assert all(any("run's 1 s deadline" in w for w in e.warnings) for e in entries)
    assert server.chat_calls == 2  # the two in flight at the deadline; the others never called


def test_every_prompt_of_a_run_opens_with_the_same_bytes_for_provider_caching(tmp_path: Path) -> None:
    # A provider caches a prompt's prefix only while it stays byte-identical: the system part and the user
    # part's fixed text come first, the PR's own data (its subsystems first) after them.
    week = _week(2)
    week[1] = week[1].model_copy(update={"title": "[Docs] Fix a typo", "body": "Typo.", "files": [
        FileChange(path="docs/usage.md", additions=1, deletions=1)]})
    with OpenAIServer(models=(MODEL,)) as server:
        drafter = openai_drafter(_settings(server, tmp_path))
        try:
            for pr, subsystems in zip(week, (["scheduler-core"], ["docs"])):
                drafter.draft(pr, subsystems, "zh-CN")
        finally:
            drafter.close()
    first, second = ([(m["role"], m["content"]) for m in body["messages"]] for body in server.requests)
    assert first[0] == second[0]  # the system part, whole
    shared = os.path.commonprefix([first[1][1], second[1][1]])
    assert "The data comes in sections" in shared and shared.endswith("Subsystems (from our path rules): ")
