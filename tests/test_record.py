"""The edition record in the state store (SQLite and PostgreSQL): stored once with its content hash, read back
identically, a status that only moves forward, compare-and-set between runs, refused when altered or when the
editor was shown other content; and the loop's next step decided from it."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Edition, Verdict
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.pipeline.loop import Step, next_step
from prdigest.state import record as records
from prdigest.state.record import (
    Conflict,
    RecordError,
    Status,
    canonical_json,
    content_hash,
    content_hash_of_json,
    load,
    load_by_run,
    save,
)
from prdigest.state.store import open_store
from tests import factories
from tests.factories import entry


@pytest.fixture(scope="module")
def draft() -> Edition:
    """An edition awaiting review with what JSON round trips can get wrong: CJK, emoji, quotes, floats, times."""
    entries = [entry(41873, ["kernels"], "deep-read", status="draft", title="修复 MoE 内核 \"fused\" 🚀"),
               entry(41902, ["docs"], "skip", status="draft", title="Docs: <b>tags</b> & 'quotes'"),
               entry(41910, ["moe", "kernels"], status="draft")]
    return factories.edition(entries).model_copy(update={"cost_usd": 0.1 + 0.2, "tokens_in": 12345,
                                                          "generated_at": datetime(2026, 11, 30, 9, 1, 2, 345678,
                                                                                   tzinfo=timezone.utc)})


@pytest.mark.slow
def test_the_sample_week_drafted_offline_hashes_the_same_after_a_round_trip(tmp_path: Path) -> None:
    services = build_services(RunOptions(source="sample", out=str(tmp_path)), Settings(state=str(tmp_path / "s.db")),
                              default_media())
    try:
        pipeline = EditionPipeline(services)
        collected = pipeline.collect()
        drafted = pipeline.new_edition(collected, pipeline.draft(collected.prs))
    finally:
        services.close()
    assert content_hash(Edition.model_validate_json(drafted.model_dump_json())) == content_hash(drafted)


def test_the_content_hash_survives_a_json_round_trip(draft: Edition) -> None:
    # digest approve hashes the draft it reads back from a flow-run input: it must name the same content.
    again = Edition.model_validate_json(draft.model_dump_json())
    assert content_hash(again) == content_hash(draft)
    assert content_hash(draft).startswith("sha256:") and len(content_hash(draft)) == 7 + 64
    assert canonical_json(again) == canonical_json(draft)
    assert content_hash_of_json(draft.model_dump_json()) == content_hash(draft)
    assert content_hash_of_json(draft.model_dump_json(indent=2)) == content_hash(draft)  # as received, any layout


@pytest.mark.parametrize("change", ["title", "headline", "verdict", "drop-entry", "approver"])
def test_the_content_hash_changes_with_anything_the_editor_sees(draft: Edition, change: str) -> None:
    first = draft.entries[0]
    if change == "title":
        other = draft.model_copy(update={"entries": [first.model_copy(update={"title": first.title + " (v2)"}),
                                                     *draft.entries[1:]]})
    elif change == "headline":
        other = draft.model_copy(update={"entries": [first.model_copy(update={"headline": "Another headline"}),
                                                     *draft.entries[1:]]})
    elif change == "verdict":
        flipped = Verdict.SKIP if first.verdict != Verdict.SKIP else Verdict.DEEP_READ
        other = draft.model_copy(update={"entries": [first.model_copy(update={"verdict": flipped}),
                                                     *draft.entries[1:]]})
    elif change == "drop-entry":
        other = draft.model_copy(update={"entries": draft.entries[1:]})
    else:
        other = draft.model_copy(update={"approver": "someone"})
    assert content_hash(other) != content_hash(draft)


def test_a_record_reads_back_exactly_as_stored(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        assert load(store, draft.id) is None
        saved = save(store, draft, Status.DRAFTED)
        loaded = load(store, draft.key)
    assert loaded is not None
    assert loaded.hash == saved.hash == content_hash(draft)
    assert loaded.edition == draft and (loaded.status, loaded.revision) == (Status.DRAFTED, 1)


def test_a_record_moves_forward_only_and_under_compare_and_set(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        drafted = save(store, draft, Status.DRAFTED)
        in_review = save(store, draft, Status.IN_REVIEW, expect=drafted, run_id="run-1")
        assert load_by_run(store, "run-1") == in_review
        with pytest.raises(Conflict, match="another run moved the edition record to 'in_review'"):
            save(store, draft, Status.APPROVED, expect=drafted)  # read before the review started: stale
        approved = save(store, draft, Status.APPROVED, expect=in_review)
        with pytest.raises(RecordError, match="cannot move to 'drafted'"):
            save(store, draft, Status.DRAFTED, expect=approved)
        with pytest.raises(Conflict):
            save(store, draft, Status.COLLECTED)  # a fresh run may not replace an approved edition
        again = save(store, draft, Status.COLLECTED, new_revision=True)  # --resend-edition: a new revision
    assert (again.revision, again.status, again.run_id) == (2, Status.COLLECTED, None)


def test_two_drafts_of_one_week_before_review_replace_each_other(state_location: str, draft: Edition) -> None:
    retitled = draft.model_copy(update={"entries": [draft.entries[0].model_copy(update={"title": "Later"}),
                                                    *draft.entries[1:]]})
    with open_store(state_location) as store:
        first = save(store, draft, Status.COLLECTED)
        save(store, retitled, Status.COLLECTED)  # a second run of the same week, racing the first
        mine = save(store, draft, Status.DRAFTED, expect=first)
        assert load(store, draft.key) == mine


def test_delivery_statuses_never_go_back(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        record = save(store, draft, Status.PUBLISHED)
        records.mark(store, record, Status.DELIVERED)
        records.mark(store, record, Status.PARTIAL)  # a concurrent deliverer finishing later
        assert load(store, record.key).status == Status.DELIVERED


def test_a_record_altered_in_the_database_is_refused(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        save(store, draft, Status.DRAFTED)
        store.execute("UPDATE edition_records SET body = REPLACE(body, ?, ?)", ("PR 41910", "Injected title"))
        with pytest.raises(RecordError, match="altered in the state store.*nothing is sent"):
            load(store, draft.key)


def test_a_record_rewritten_consistently_is_refused_against_what_the_editor_saw(state_location: str,
                                                                               draft: Edition) -> None:
    shown = content_hash(draft)  # the draft the run published for its editor
    tampered = draft.model_copy(update={"entries": [draft.entries[0].model_copy(update={"headline": "Phish"}),
                                                    *draft.entries[1:]]})
    with open_store(state_location) as store:
        save(store, draft, Status.IN_REVIEW, run_id="run-1")
        body = canonical_json(tampered)  # body and hash rewritten together: the record checks out by itself
        store.execute("UPDATE edition_records SET body = ?, hash = ?", (body, content_hash(tampered)))
        record = load(store, draft.key)
    assert record is not None and record.hash == content_hash(tampered)
    record.check_shown(content_hash(tampered))  # would pass if the form carried the record's own hash
    with pytest.raises(RecordError, match="not the draft .* its editor was shown"):
        record.check_shown(shown)
    with pytest.raises(RecordError, match="names content"):
        record.check_shown(shown, "sha256:" + "0" * 64)
    with pytest.raises(RecordError, match="draft shown for review is missing"):
        record.check_shown("")


def test_a_record_this_version_cannot_read_is_refused(state_location: str) -> None:
    import hashlib

    body = '{"repo":"a/b","unknown_field":1}'
    with open_store(state_location) as store:
        load(store, "x")  # migrates
        store.execute("INSERT INTO edition_records (key, repo, since, until, name, revision, status, hash, body, "
                      "run_id, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                      ("a-b", "a/b", "2026-11-16", "2026-11-23", "a/b 2026-W47", 1, "drafted",
                       "sha256:" + hashlib.sha256(body.encode()).hexdigest(), body, None, "2026-11-30T00:00:00+00:00"))
        with pytest.raises(RecordError, match="cannot be read by this pr-digest"):
            load(store, "a-b")


@pytest.mark.parametrize(("status", "run_id", "again", "step"), [
    (None, None, False, Step.COLLECT),
    (Status.COLLECTED, None, False, Step.COLLECT),
    (Status.DRAFTED, None, False, Step.COLLECT),
    (Status.IN_REVIEW, "run-1", False, Step.REVIEW),      # resumed: the run that started the review
    (Status.IN_REVIEW, "run-2", False, Step.NOTHING),     # another run's review
    (Status.IN_REVIEW, None, True, Step.COLLECT),
    (Status.APPROVED, None, False, Step.DELIVER),
    (Status.PUBLISHED, None, False, Step.DELIVER),
    (Status.DELIVERING, None, False, Step.DELIVER),       # a run that stopped mid-delivery
    (Status.PARTIAL, None, False, Step.DELIVER),
    (Status.HELD, None, False, Step.NOTHING),
    (Status.DELIVERED, None, False, Step.NOTHING),
    (Status.DELIVERED, None, True, Step.COLLECT),         # --resend-edition
])
def test_the_next_step_comes_from_the_record(draft: Edition, status, run_id, again, step) -> None:
    record = None if status is None else records.EditionRecord(draft, status, content_hash(draft), 1, "run-1",
                                                               datetime.now(timezone.utc))
    decision = next_step(record, run_id=run_id, run_again=again)
    assert decision.step == step
    assert bool(decision.reason) == (step == Step.NOTHING)


def test_an_edition_left_at_drafted_blocks_no_later_run(tmp_path: Path) -> None:
    """A run that stopped after drafting (killed before its review) used to leave the week blocked: every later
    run of it failed with "the edition record is 'drafted' and cannot move to 'collected'" (issue 30). A run of
    another week is not blocked by it, and the same week is drafted again and delivered."""
    settings = Settings(state=tmp_path / "state.sqlite")

    def services(since: str, until: str, out: str):
        options = RunOptions(source="sample", out=str(tmp_path / out), since=since, until=until)
        return build_services(options, settings, default_media(), site=None)

    first = services("2026-11-16", "2026-11-19", "one")
    try:
        pipeline = EditionPipeline(first)
        collected = pipeline.collect()
        edition = pipeline.connect(pipeline.new_edition(collected, pipeline.draft(collected.prs)), collected.prs)
        started = pipeline.save(pipeline.new_edition(collected, []), Status.COLLECTED, expect=None)
        stuck = pipeline.save(edition, Status.DRAFTED, expect=started)
    finally:
        first.close()
    later = services("2026-11-19", "2026-11-23", "two")
    try:
        assert EditionPipeline(later).run().sent  # another week: not blocked
    finally:
        later.close()
    again = services("2026-11-16", "2026-11-19", "one-again")
    try:
        summary = EditionPipeline(again).run()
    finally:
        again.close()
    assert summary.sent and not summary.skipped
    with open_store(tmp_path / "state.sqlite") as store:
        record = load(store, stuck.key)
    assert record.status == Status.DELIVERED and record.revision == stuck.revision


def test_every_status_has_its_listed_moves_and_nothing_else_is_legal() -> None:
    assert set(records.TRANSITIONS) == {None, *Status}
    assert not records.legal(Status.IN_REVIEW, Status.DELIVERED)  # passed the old ranked check
    assert not records.legal(Status.DRAFTED, Status.PUBLISHED)  # publishing needs an approval first
    assert not records.legal(Status.HELD, Status.APPROVED)  # held ends the revision
    assert records.legal(Status.PARTIAL, Status.DELIVERING)  # a pending row retried


@pytest.mark.parametrize("start, target", [(Status.IN_REVIEW, Status.DELIVERED), (Status.DRAFTED, Status.PUBLISHED),
                                           (Status.IN_REVIEW, Status.PUBLISHED)])
def test_a_save_that_skips_the_review_is_refused(state_location: str, draft: Edition, start: Status,
                                                 target: Status) -> None:
    with open_store(state_location) as store:
        record = save(store, draft, Status.DRAFTED)
        if start is not Status.DRAFTED:
            record = save(store, draft, start, expect=record)
        with pytest.raises(RecordError, match=f"cannot move to '{target}'"):
            save(store, draft, target, expect=record)
        assert load(store, draft.key).status == start


def test_marking_a_delivery_status_on_an_unpublished_record_is_refused(state_location: str,
                                                                       draft: Edition) -> None:
    with open_store(state_location) as store:
        save(store, draft, Status.IN_REVIEW)
        with pytest.raises(RecordError, match="not published"):
            records.mark(store, load(store, draft.key), Status.DELIVERED)
        assert load(store, draft.key).status == Status.IN_REVIEW


def test_mark_is_compare_and_set_on_the_status_it_read(state_location: str, draft: Edition) -> None:
    """Between mark's read and its write another deliverer finished: the write must not undo delivered."""
    with open_store(state_location) as store:
        record = save(store, draft, Status.PUBLISHED)
        records.mark(store, record, Status.DELIVERING)
        records.mark(store, record, Status.PARTIAL)
        records.mark(store, record, Status.DELIVERING)  # the pending row retried
        records.mark(store, record, Status.DELIVERED)
        records.mark(store, record, Status.DELIVERING)  # a late deliverer: delivered stays
        assert load(store, record.key).status == Status.DELIVERED
        # the write itself is conditional on the status read: a stale read changes nothing
        stale = store.execute("UPDATE edition_records SET status = ? WHERE key = ? AND status = ?",
                              (Status.PARTIAL.value, record.key, Status.DELIVERING.value))
        assert stale.rowcount == 0


def test_a_new_revision_starts_over_and_only_publishing_replaces(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        save(store, draft, Status.DRAFTED)
        with pytest.raises(RecordError, match="new revision starts"):
            save(store, draft, Status.DELIVERED, new_revision=True)
        with pytest.raises(RecordError, match="only publishing"):
            save(store, draft, Status.APPROVED, replace=True)
