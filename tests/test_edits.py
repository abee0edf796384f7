"""Edits that stick (prdigest/review/edits.py): an editor's edit survives the week run again with --resend-edition
and a new prompt version, and is marked for the editor when the PR itself changed since; ``digest eval
--from-reviews`` reports the editors' edit rate and edit distance per entry."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from prdigest.draft.llm import OpenAIDrafter
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.registry import DRAFTERS, DrafterKind, DraftingContext
from prdigest.evaluation.evaluate import evaluate_reviews
from prdigest.kernel.config import Settings
from prdigest.kernel.models import EditionId
from prdigest.kernel.prompts import Prompt, PromptFile, load_prompt
from prdigest.review import EntryEdit, ReviewDecision, apply_decision, record_review
from prdigest.review.edits import EditStore
from prdigest.state import record as records
from prdigest.state.store import open_store
from tests.servers.openai_server import OpenAIServer
from tests.test_packing import MODEL, REPO, _record, run_week

WEEK = EditionId(REPO, datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))
EDITED = "BlockPool frees cached blocks lazily: the prefix cache keeps its hot blocks"


@pytest.fixture
def server():
    with OpenAIServer(models=(MODEL,)) as srv:
        yield srv


@pytest.fixture
def bumped() -> Iterator[str]:
    """A drafter like openai whose entry prompt has another version (what a prompt change does to the cache)."""
    shipped = load_prompt("entry")
    spec = PromptFile(version=shipped.version + "-bumped", system=shipped._sources["system"],
                      user=shipped._sources["user"])

    def build(context: DraftingContext) -> Any:
        drafter = OpenAIDrafter.from_settings(context.settings, conn=context.store(),
                                              fallback=OfflineDrafter(context.vocabulary))
        drafter.entry_prompt = Prompt("entry", shipped.path, spec)
        drafter.prompt_version = f"{spec.version}+{drafter.repair_prompt.version}"
        return drafter

    openai = DRAFTERS["openai"]
    DRAFTERS.register(DrafterKind("openai-bumped", "openai with a bumped entry prompt", build=build,
                                  label=openai.label, coverage=openai.coverage))
    try:
        yield "openai-bumped"
    finally:
        DRAFTERS._items.pop("openai-bumped")  # the registry has no unregister: tests only


def _week(body: str = "Follow-up to #101. Fixes #31913.") -> list[dict[str, Any]]:
    return [
        _record(101, "2026-11-17T10:00:00Z", title="[Core] Add BlockPool",
                files=[{"path": "vllm/v1/core/block_pool.py", "additions": 90, "deletions": 0, "status": "added"}]),
        _record(102, "2026-11-18T10:00:00Z", title="[Core] BlockPool frees cached blocks lazily", body=body,
                files=[{"path": "vllm/v1/core/block_pool.py", "additions": 30, "deletions": 4}],
                additions=30, deletions=4,
                reviews=[{"author": "njhill", "state": "APPROVED", "body": "Keep it eager by default."}]),
    ]


def _review(tmp_path: Path) -> None:
    """The editor's review, as the flow applies and records it: PR 102 rewritten and put first in read-first."""
    store = open_store(tmp_path / "state.sqlite")
    try:
        record = records.load(store, WEEK)
        assert record is not None
        decision = ReviewDecision(decision="send", approver="lin", first="102", edits=[
            EntryEdit(number=102, verdict="deep-read", headline=EDITED, text="The prefix cache keeps hot blocks.")])
        reviewed = apply_decision(record.edition, decision)
        record_review(store, record.edition, reviewed, first=[102])
    finally:
        store.close()


def _entry_prompts(server: OpenAIServer) -> int:
    return sum(1 for body in server.requests for m in body["messages"]
               if m["role"] == "user" and "<pr-data>" in m["content"] and "PR #" in m["content"])


def _entry(digest: dict[str, Any], number: int) -> dict[str, Any]:
    return next(e for e in digest["entries"] if e["number"] == number)


def test_an_edit_survives_resend_and_a_prompt_bump_and_is_marked_when_the_pr_changed(server, tmp_path: Path,
                                                                                     bumped: str) -> None:
    first = run_week(_week(), tmp_path, server)
    assert _entry(first, 102)["headline"] != EDITED
    _review(tmp_path)

    server.reset_counts()
    again = run_week(_week(), tmp_path, server, resend_edition=True)
    entry = _entry(again, 102)
    assert (entry["headline"], entry["verdict"]) == (EDITED, "deep-read")
    assert entry["rationale"].startswith("Deep read") and "prefix cache keeps hot blocks" in entry["rationale"]
    assert not any("changed since" in w for w in entry["warnings"])
    assert again["ranking"][0] == 102  # the editor's read-first order too
    assert _entry(again, 101)["headline"] == _entry(first, 101)["headline"]  # only what the editor changed
    # The drafts come from the cache: no entry prompt is sent (the lede is asked again: it names the new headline).
    assert not _entry_prompts(server)

    server.reset_counts()
    bumped_run = run_week(_week(), tmp_path, server, resend_edition=True, drafter=bumped)
    assert _entry_prompts(server) == 2  # the new prompt drafted both PRs again ...
    assert _entry(bumped_run, 102)["headline"] == EDITED  # ... and the edit was applied to the new draft

    changed = run_week(_week(body="Follow-up to #101. Fixes #31913. Now also frees on preemption."), tmp_path,
                       server, resend_edition=True)
    entry = _entry(changed, 102)
    assert entry["headline"] == EDITED
    assert any("the PR changed since" in w and "lin" in w for w in entry["warnings"]), entry["warnings"]

    store = open_store(tmp_path / "state.sqlite")
    try:
        assert EditStore(store).count(REPO) == 1
    finally:
        store.close()
    settings = Settings(state=tmp_path / "state.sqlite")
    outcome = evaluate_reviews(settings, tmp_path / "eval")
    report = json.loads((tmp_path / "eval" / "reviews.json").read_text(encoding="utf-8"))
    assert report["edit_rate"] == pytest.approx(0.5) and report["edit_distance_per_entry"] > 0
    assert report["kept_edits"] == 1 and "**Edit rate: 50.0%**" in outcome.markdown


def test_an_edit_of_a_draft_without_changes_is_not_kept(tmp_path: Path, server) -> None:
    run_week(_week(), tmp_path, server)
    store = open_store(tmp_path / "state.sqlite")
    try:
        record = records.load(store, WEEK)
        assert record is not None
        reviewed = apply_decision(record.edition, ReviewDecision(decision="send", approver="lin"))
        record_review(store, record.edition, reviewed)
        assert EditStore(store).count() == 0
    finally:
        store.close()


def test_an_editor_rewrites_points_and_follow_ups_and_they_stick(server, tmp_path: Path) -> None:
    from prdigest.review import parse_changes

    run_week(_week(), tmp_path, server)
    fields, errors = parse_changes("#102 points=`block_pool.py`: the lazy path | @njhill's eager default "
                                   "followups=none")
    assert not errors
    store = open_store(tmp_path / "state.sqlite")
    try:
        record = records.load(store, WEEK)
        assert record is not None
        decision = ReviewDecision(decision="send", approver="lin", **fields)  # type: ignore[arg-type]
        reviewed = apply_decision(record.edition, decision)
        entry = next(e for e in reviewed.entries if e.number == 102)
        assert entry.focus == ["`block_pool.py`: the lazy path", "@njhill's eager default"]
        assert entry.followups == [] and entry.status.value == "edited"
        record_review(store, record.edition, reviewed)
    finally:
        store.close()
    again = _entry(run_week(_week(), tmp_path, server, resend_edition=True), 102)
    assert again["focus"] == ["`block_pool.py`: the lazy path", "@njhill's eager default"]
    assert again["followups"] == []


def test_too_many_points_are_refused_naming_the_card(tmp_path: Path, server) -> None:
    from prdigest.review import check_decision

    run_week(_week(), tmp_path, server)
    store = open_store(tmp_path / "state.sqlite")
    try:
        record = records.load(store, WEEK)
        assert record is not None
        decision = ReviewDecision(decision="send", approver="lin",
                                  edits=[EntryEdit(number=102, points=" | ".join("abcdef"))])
        assert check_decision(record.edition, decision) == [
            "edits[0] (PR #102): 6 points (at most 5; separate them with ' | ')"]
    finally:
        store.close()
