"""``digest eval --from-reviews``: decisions made as ``digest approve`` makes them (approve all, reject some)
and as the review form makes them (edit cards that change a verdict or rewrite a headline), applied and
recorded by the review step's own functions, come back as the editors' corrections."""

from __future__ import annotations

import functools
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from typer.testing import CliRunner

from flows.cli import app
from prdigest.classify.subsystems import classifier_for
from prdigest.collect.github.cache import PullCache
from prdigest.draft.offline import OfflineDrafter
from prdigest.evaluation.evaluate import evaluate_reviews
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Edition, Entry, PullRequest, Verdict
from prdigest.review import EntryEdit, ReviewDecision, apply_decision, record_review
from prdigest.state.store import open_store

WEEK47 = datetime(2026, 11, 16, tzinfo=timezone.utc)


@functools.lru_cache(maxsize=1)
def vllm_classifier():
    return classifier_for("vllm-project/vllm")  # loading the rules file is the slow part: once per module


def draft_edition(records: list[dict], since: datetime) -> Edition:
    classifier = vllm_classifier()
    drafter = OfflineDrafter(classifier.vocabulary)  # as an edition drafts
    entries = []
    for record in records:
        pr = PullRequest.model_validate(record)
        subsystems = classifier.classify(pr)
        entries.append(Entry.from_draft(pr, subsystems, drafter.draft(pr, subsystems, "en")))
    return Edition(repo="vllm-project/vllm", since=since, until=since + timedelta(days=7), language="en",
                   drafter="offline", generated_at=since + timedelta(days=7), entries=entries)


def record(state: Path, draft: Edition, decision: ReviewDecision, when: datetime, run_id: str) -> Edition:
    reviewed = apply_decision(draft, decision, now=when)
    store = open_store(state)
    try:
        record_review(store, draft, reviewed, run_id)
    finally:
        store.close()
    return reviewed


def two_reviewed_editions(state: Path, sample_records: list[dict]) -> tuple[Edition, Edition]:
    first = draft_edition(sample_records[:10], WEEK47)
    n = [e.number for e in first.entries]
    # As `digest approve RUN --all --reject N --reject M` builds it (flows/approve.py).
    cli_decision = ReviewDecision(decision="send", approver="lin", approve_all=True, reject=f"{n[0]} {n[1]}",
                                  edits=[])
    record(state, first, cli_decision, WEEK47 + timedelta(days=8), "run-47")

    second = draft_edition(sample_records[10:20], WEEK47 + timedelta(days=7))
    m = [e.number for e in second.entries]
    flipped = Verdict.SKIP if second.entries[0].verdict is not Verdict.SKIP else Verdict.DEEP_READ
    # As the review form submits it: edit cards, a rejection, the approver's name.
    form_decision = ReviewDecision(decision="send", approver="mei", approve_all=True, reject=f"#{m[2]}", edits=[
        EntryEdit(number=m[0], verdict=flipped.value),
        EntryEdit(number=m[1], headline="A headline the editor rewrote"),
    ])
    record(state, second, form_decision, WEEK47 + timedelta(days=15), "run-48")
    return first, second


def test_recorded_reviews_come_back_as_the_editors_corrections(tmp_path: Path, sample_records) -> None:
    state = tmp_path / "state.sqlite"
    first, second = two_reviewed_editions(state, sample_records)
    outcome = evaluate_reviews(Settings(state=state), tmp_path / "out")
    report = outcome.figures
    assert (report["editions"], report["entries"], report["rejected"]) == (2, 20, 3)
    # The flipped verdict is a verdict change, not a rewrite; the new headline is a rewrite.
    assert report["verdict_changed"] == 1 and report["rewritten"] == 1
    assert report["verdict_agreement"] == 16 / 17
    assert [e["edition"] for e in report["per_edition"]] == [first.key, second.key]
    assert report["per_edition"][0]["rejected"] == 2 and report["per_edition"][0]["verdict_changed"] == 0
    assert report["per_edition"][1]["verdict_changed"] == 1 and report["per_edition"][1]["rewritten"] == 1
    assert list(report["per_configuration"]) == ["offline · prompt not recorded"]
    # The record keeps each entry's subsystems: corrections per subsystem add up to every entry's subsystems.
    assert "subsystems" not in report["not_recorded"]
    assert sum(c["entries"] for c in report["per_subsystem"].values()) == sum(
        len(e.subsystems) for e in [*first.entries, *second.entries])
    text = (tmp_path / "out" / "reviews.md").read_text(encoding="utf-8")
    assert first.key in text and "Not recorded: the review record has no subsystems" not in text
    assert json.loads((tmp_path / "out" / "reviews.json").read_text(encoding="utf-8"))["entries"] == 20


def test_since_keeps_only_editions_approved_from_that_day(tmp_path: Path, sample_records) -> None:
    state = tmp_path / "state.sqlite"
    _, second = two_reviewed_editions(state, sample_records)
    result = CliRunner().invoke(app, ["eval", "--from-reviews", "--state", str(state), "--since", "2026-11-28",
                                        "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "10 reviewed entries in 1 edition(s)" in result.output
    report = json.loads((tmp_path / "out" / "reviews.json").read_text(encoding="utf-8"))
    assert [e["edition"] for e in report["per_edition"]] == [second.key]


def test_a_store_without_reviews_says_so(tmp_path: Path) -> None:
    outcome = evaluate_reviews(Settings(state=tmp_path / "empty.sqlite"), tmp_path / "out")
    assert outcome.figures["entries"] == 0 and "No reviewed edition" in outcome.markdown


def test_columns_the_record_may_gain_light_up_models_prompts_headlines_and_subsystems(tmp_path: Path,
                                                                                       sample_records) -> None:
    # The second edition as drafted by a model with a known prompt version (the first by the offline drafter).
    state = tmp_path / "state.sqlite"
    _, second = two_reviewed_editions(state, sample_records)
    store = open_store(state)
    try:
        store.execute("UPDATE review_entries SET model = ?, prompt_version = ? WHERE edition = ?",
                      ("model-x", "entry-3+repair-1", second.key))
    finally:
        store.close()
    report = evaluate_reviews(Settings(state=state), tmp_path / "out").figures
    assert set(report["per_configuration"]) == {"offline · prompt not recorded", "model-x · prompt entry-3+repair-1"}
    newer = report["per_configuration"]["model-x · prompt entry-3+repair-1"]
    assert newer["entries"] == 10 and newer["headline_rewritten"] == 1 and newer["verdict_changed"] == 1
    assert report["not_recorded"] == []
    top = next(iter(report["per_subsystem"].values()))
    assert top["rejected"] + top["verdict_changed"] + top["rewritten"] >= 1
    assert sum(c["entries"] for c in report["per_subsystem"].values()) >= 10


def test_editors_verdicts_on_cached_prs_become_a_labelled_file_digest_eval_scores(tmp_path: Path,
                                                                                   sample_records) -> None:
    state = tmp_path / "state.sqlite"
    first, second = two_reviewed_editions(state, sample_records)
    store = open_store(state)
    try:  # the GitHub collector cached the second week's PRs (the first week came from elsewhere)
        cache = PullCache(store, "vllm-project/vllm")
        for record in sample_records[10:20]:
            pr = PullRequest.model_validate(record)
            cache.put(pr.merged_at, pr, {}, {})
    finally:
        store.close()
    outcome = evaluate_reviews(Settings(state=state), tmp_path / "out")
    labels = tmp_path / "out" / "labels.jsonl"
    assert labels in outcome.paths and outcome.figures["labels"] == 9  # 10 reviewed, 1 rejected
    records = [json.loads(line) for line in labels.read_text(encoding="utf-8").splitlines()]
    rejected = second.entries[2].number
    assert rejected not in {r["number"] for r in records}
    flipped = next(r for r in records if r["number"] == second.entries[0].number)
    assert flipped["gold"]["verdict"] != second.entries[0].verdict.value
    assert flipped["gold"]["subsystems"] == list(second.entries[0].subsystems)
    assert "labels.jsonl" in outcome.markdown

    result = CliRunner().invoke(app, ["eval", "--gold", str(labels), "--out", str(tmp_path / "scored")])
    assert result.exit_code == 0, result.output
    scored = json.loads((tmp_path / "scored" / "eval.json").read_text(encoding="utf-8"))
    # The same offline drafter: it agrees with the editors except where they changed its verdict.
    assert scored["n"] == 9 and scored["verdict_agreement"] == 8 / 9
    # The editors kept the classifier's subsystems: the same classifier scores them perfectly.
    assert scored["subsystems_labelled"] == 9 and scored["subsystem_f1"] == 1.0
