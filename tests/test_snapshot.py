"""The reviewed snapshot in the state store (SQLite and PostgreSQL): stored once per run with a content hash,
read back identically, refused when altered or when the decision names other content."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.config import Settings
from flows.media import default_media
from prdigest.models import Edition, Verdict
from prdigest.pipeline import EditionPipeline
from prdigest.services import RunOptions, build_services
from prdigest.snapshot import (
    SnapshotError, canonical_json, content_hash, content_hash_of_json, load_snapshot, missing_snapshot, save_snapshot,
)
from prdigest.store import open_store
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


def test_a_snapshot_reads_back_exactly_as_stored(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        assert load_snapshot(store, "run-1") is None
        saved = save_snapshot(store, "run-1", draft)
        loaded = load_snapshot(store, "run-1")
    assert loaded is not None
    assert loaded.hash == saved.hash == content_hash(draft)
    assert loaded.edition == draft and loaded.run_id == "run-1"


def test_a_snapshot_is_write_once_per_run(state_location: str, draft: Edition) -> None:
    retitled = draft.model_copy(update={"entries": [draft.entries[0].model_copy(update={"title": "Changed later"}),
                                                    *draft.entries[1:]]})
    with open_store(state_location) as store:
        first = save_snapshot(store, "run-1", draft)
        second = save_snapshot(store, "run-1", retitled)  # a resumed run re-drafting: never replaces the review
        other_run = save_snapshot(store, "run-2", retitled)
    assert second.hash == first.hash and second.edition == draft
    assert other_run.hash == content_hash(retitled) != first.hash


def test_a_snapshot_altered_in_the_database_is_refused(state_location: str, draft: Edition) -> None:
    with open_store(state_location) as store:
        save_snapshot(store, "run-1", draft)
        store.execute("UPDATE review_snapshots SET body = REPLACE(body, ?, ?) WHERE run_id = ?",
                      ("PR 41910", "Injected title", "run-1"))
        with pytest.raises(SnapshotError, match="altered in the state store.*nothing was sent"):
            load_snapshot(store, "run-1")


def test_a_snapshot_this_version_cannot_read_is_refused(state_location: str) -> None:
    import hashlib

    body = '{"repo":"a/b","unknown_field":1}'
    with open_store(state_location) as store:
        load_snapshot(store, "x")  # migrates
        store.execute("INSERT INTO review_snapshots (run_id, edition, hash, body, created_at) VALUES (?, ?, ?, ?, ?)",
                      ("run-9", "a-b", "sha256:" + hashlib.sha256(body.encode()).hexdigest(), body,
                       "2026-11-30T00:00:00+00:00"))
        with pytest.raises(SnapshotError, match="cannot be read by this pr-digest"):
            load_snapshot(store, "run-9")


def test_a_decision_on_other_content_is_refused(tmp_path: Path, draft: Edition) -> None:
    with open_store(tmp_path / "s.sqlite") as store:
        snapshot = save_snapshot(store, "run-1", draft)
    snapshot.check_decision(content_hash(draft))  # the hash the form and digest approve carry
    with pytest.raises(SnapshotError, match="another version of the draft. Nothing was sent"):
        snapshot.check_decision("sha256:" + "0" * 64)
    with pytest.raises(SnapshotError, match=r"names content \(none\)"):
        snapshot.check_decision("")


def test_the_missing_snapshot_message_says_what_to_check() -> None:
    message = str(missing_snapshot("abc", "vllm-project/vllm", "postgresql://digest:***@db/digest"))
    assert "Nothing was sent" in message and "same DIGEST_STATE" in message and "***" in message
