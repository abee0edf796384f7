"""The review step: decisions checked and applied without Prefect, then a real edition that waits for an
editor under the session's Prefect API, is refused bad input, is resumed, and delivers only what was approved."""

from __future__ import annotations

import json
import re
import sqlite3
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from prdigest.kernel.models import Edition, Entry, EntryStatus, Verdict
from prdigest.pipeline.compose import RunOptions
from prdigest.review import (
    EntryEdit,
    ReviewDecision,
    ReviewRejected,
    apply_decision,
    changes_text,
    check_decision,
    edit_distance,
    flagged_left_out,
    md,
    parse_changes,
    record_review,
    review_markdown,
)
from prdigest.state.store import open_store
from tests.conftest import SAMPLE

SECRETS = {
    "GITHUB_TOKEN": "ghp_SECRETgithub0123456789",
    "OPENAI_API_KEY": "sk-SECRETopenai0123456789",
    "SLACK_BOT_TOKEN": "xoxb-SECRETslack0123456789",
    "DIGEST_SMTP_PASSWORD": "SECRETsmtp0123456789",
}
READERS = """\
readers:
  - id: all
    name: All
    email: all@example.com
    slack: '#all'
editors:
  - name: Ann Editor
    email: ann@example.com
    slack: '#digest-editors'
"""


# ------------------------------------------------------------------------------------------ core, no Prefect

def _entry(number: int, verdict: Verdict = Verdict.SKIM, **extra: Any) -> Entry:
    fields: dict[str, Any] = {
        "url": f"https://github.com/o/r/pull/{number}", "title": f"PR {number}", "author": "a",
        "merged_at": datetime(2026, 11, 16, tzinfo=timezone.utc), "subsystems": ["kernels"],
        "headline": f"Headline {number}", "rationale": f"Why {number} matters.", **extra}
    return Entry(number=number, verdict=verdict, **fields)


def _edition(n: int = 5) -> Edition:
    return Edition(repo="o/r", since=datetime(2026, 11, 16, tzinfo=timezone.utc),
                   until=datetime(2026, 11, 23, tzinfo=timezone.utc), generated_at=datetime.now(timezone.utc),
                   entries=[_entry(i) for i in range(1, n + 1)])


def test_send_with_defaults_approves_every_entry_as_drafted() -> None:
    reviewed = apply_decision(_edition(), ReviewDecision(decision="send", approver="Ann"))
    assert {e.status for e in reviewed.entries} == {EntryStatus.APPROVED}
    assert {e.edit_distance for e in reviewed.entries} == {0}
    assert reviewed.approver == "Ann" and reviewed.approved_at is not None


def test_reject_edit_and_hold_are_applied_with_edit_distance() -> None:
    decision = ReviewDecision(decision="send", approver=" Ann ", reject="2, #3", note="short week",
                              edits=[EntryEdit(number=4, verdict="deep-read", headline="Better headline")])
    reviewed = apply_decision(_edition(), decision)
    status = {e.number: e.status for e in reviewed.entries}
    assert status == {1: EntryStatus.APPROVED, 2: EntryStatus.REJECTED, 3: EntryStatus.REJECTED,
                      4: EntryStatus.EDITED, 5: EntryStatus.APPROVED}
    four = reviewed.entries[3]
    assert four.headline == "Better headline" and four.verdict is Verdict.DEEP_READ
    assert four.rationale == "值得精读：Why 4 matters."  # the text opens with the final verdict (a zh-CN edition)
    assert four.edit_distance == edit_distance("Headline 4\nWhy 4 matters.", "Better headline\nWhy 4 matters.") > 0
    assert reviewed.entries[1].edit_distance is None
    assert [e.number for e in reviewed.published] == [1, 4, 5] and reviewed.review_note == "short week"
    held = apply_decision(_edition(), ReviewDecision(decision="hold", approver="Ann", reject="2", note="no"))
    assert held.published == [] and held.review_note == "held: nothing sent. no" and held.approver == "Ann"


def test_hold_holds_the_edition_and_leaves_every_entry_as_drafted() -> None:
    """Hold used to reject every entry: the record said the editor rejected the week's PRs, entry by entry."""
    drafted = _edition()
    held = apply_decision(drafted, ReviewDecision(decision="hold", reject="2",
                                                  edits=[EntryEdit(number=4, headline="Better")]))
    assert [e.status for e in held.entries] == [e.status for e in drafted.entries] == [EntryStatus.DRAFT] * 5
    assert held.entries == drafted.entries


def _flagged_edition() -> Edition:
    edition = _edition()
    edition.entries[1] = _entry(2, warnings=["fallback draft"])
    edition.entries[3] = _entry(4, grounding=["vllm/fake.py"])
    return edition


def test_approve_all_leaves_flagged_entries_out_unless_named_edited_or_included() -> None:
    edition = _flagged_edition()
    plain = ReviewDecision(decision="send", approver="Ann")
    assert [e.number for e in apply_decision(edition, plain).published] == [1, 3, 5]
    assert flagged_left_out(edition, plain) == [2, 4]
    named = ReviewDecision(decision="send", approver="Ann", approve="#4")
    assert [e.number for e in apply_decision(edition, named).published] == [1, 3, 4, 5]
    edited = ReviewDecision(decision="send", approver="Ann", edits=[EntryEdit(number=2, text="Checked by hand.")])
    reviewed = apply_decision(edition, edited)
    assert [e.number for e in reviewed.published] == [1, 2, 3, 5] and reviewed.entries[1].status is EntryStatus.EDITED
    included = ReviewDecision(decision="send", approver="Ann", include_flagged=True, reject="4")
    assert [e.number for e in apply_decision(edition, included).published] == [1, 2, 3, 5]


def test_a_week_of_only_flagged_entries_cannot_be_sent_by_approve_all() -> None:
    edition = _edition(2)
    edition.entries = [_entry(1, warnings=["w"]), _entry(2, needs_editing=True)]
    reasons = check_decision(edition, ReviewDecision(decision="send", approver="Ann"))
    assert any("no entry would be approved (2 flagged" in r for r in reasons), reasons


@pytest.mark.parametrize(("text", "fields", "error"), [
    ("#41873 verdict=skim headline=New head text=Why, with = signs", {"edits": [
        EntryEdit(number=41873, verdict="skim", headline="New head", text="Why, with = signs")]}, None),
    ("  \n12 text=only the why\n", {"edits": [EntryEdit(number=12, text="only the why")]}, None),
    ("reject 1, #2\nApprove: 3 4\nnote short week", {"reject": "1 2", "approve": "3 4", "note": "short week"}, None),
    ("#5", {}, "give verdict=, headline=, text=, points= or followups="),
    ("fix #5 please", {}, "is neither reject, approve, note nor a PR number"),
    ("reject 5 six", {"reject": "5"}, "'six' is not a PR number"),
    ("#6 verdict=must-read", {}, "not one of deep-read"),
    ("#7 headline=a headline=b", {}, "headline= is given twice"),
])
def test_changes_are_one_line_each(text: str, fields: dict, error: str | None) -> None:
    parsed, errors = parse_changes(text)
    assert parsed == {"reject": "", "approve": "", "edits": [], "note": "", **fields}
    assert (error is None and errors == []) or any(error in e for e in errors), errors
    if error is None:
        decision = ReviewDecision(decision="send", **parsed)
        assert parse_changes(changes_text(decision)) == (parsed, [])


def test_approve_all_off_sends_only_listed_and_edited_entries() -> None:
    reviewed = apply_decision(_edition(), ReviewDecision(decision="send", approver="Ann", approve_all=False,
                                                         approve="1 5", edits=[EntryEdit(number=2, text="New")]))
    assert [e.number for e in reviewed.published] == [1, 2, 5]


@pytest.mark.parametrize(("decision", "reason"), [
    ({"reject": "2 abc"}, "'abc' is not a PR number"),
    ({"reject": "999"}, "#999 is not in"),
    ({"approver": "  "}, "approver: type your name"),
    ({"edits": [{"number": 2, "headline": "   "}]}, "headline is blank"),
    ({"edits": [{"number": 2, "verdict": "must-read"}]}, "not one of deep-read"),
    ({"edits": [{"number": 2}, {"number": 2}]}, "edited twice"),
    ({"edits": [{"number": 2, "text": "x"}], "reject": "2"}, "also rejected"),
    ({"edits": [{"number": 2, "headline": "x" * 201}]}, "at most 200"),
    ({"reject": "1 2 3 4 5"}, "choose 'hold'"),
    ({"edits": [{"number": 2, "verdict": "keep"}]}, "changes nothing"),
])
def test_bad_decisions_are_refused_with_the_reason(decision: dict, reason: str) -> None:
    data = {"decision": "send", "approver": "Ann", **decision}
    edits = data.pop("edits", [])
    parsed = ReviewDecision(**data, edits=[EntryEdit.model_construct(**{"verdict": "keep", "headline": "",
                                                                         "text": "", **e}) for e in edits])
    reasons = check_decision(_edition(), parsed)
    assert any(reason in r for r in reasons), reasons
    with pytest.raises(ReviewRejected):
        apply_decision(_edition(), parsed)


def test_edit_distance_is_levenshtein() -> None:
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("same", "same") == 0
    assert edit_distance("前缀 A 后缀", "前缀 BC 后缀") == 2


def test_draft_markdown_shows_counts_warnings_and_escapes_untrusted_text() -> None:
    edition = _edition(3)
    edition.entries[0] = _entry(1, Verdict.DEEP_READ, warnings=["fallback draft: LLM timed out"],
                                grounding=["vllm/fake.py"], needs_editing=True, focus=["look at `x`"],
                                followups=["port to ROCm"])
    edition.entries[1] = _entry(2, title="<img src=x onerror=alert(1)> ![t](http://evil/x.png) [a](javascript:x)")
    text = review_markdown(edition)
    assert "| deep-read | 1 |" in text and "| skim | 2 |" in text and "kernels 3" in text
    assert "fallback draft" in text and "vllm/fake.py" in text and "3 draft entries, 1 flagged ⚠" in text
    assert text.index("Needs your eye (1)") < text.index("**#1 ") < text.index("**#2 ")
    assert "1\\. look at" not in text and "1. look at `x`" in text and "follow-up: port to ROCm" in text
    assert "<https://github.com/o/r/pull/2>" in text
    assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(", text)  # no live tag, image or link from a PR's text
    assert md("a\nb  c") == "a b c"


def test_review_is_recorded_in_the_state_store(tmp_path: Path) -> None:
    draft = _edition()
    reviewed = apply_decision(draft, ReviewDecision(decision="send", approver="Ann", reject="1",
                                                    edits=[EntryEdit(number=2, text="Rewritten.")]))
    conn = open_store(tmp_path / "state.sqlite")
    record_review(conn, draft, reviewed, "run-1")
    record_review(conn, draft, reviewed, "run-1")  # idempotent: a replayed run records once
    rows = conn.execute("SELECT number, status, edit_distance FROM review_entries ORDER BY number").fetchall()
    assert rows[:2] == [(1, "rejected", None), (2, "edited", edit_distance("Why 2 matters.", "Rewritten."))]
    assert conn.execute("SELECT approver, approved, edited, rejected FROM review_editions").fetchall() == [
        ("Ann", 3, 1, 1)]


# ------------------------------------------------------------------------------- under a real Prefect API

def _paused_run(after: float, keyset_name: str, deadline: float = 90.0):
    """The newest digest-edition run that is paused with the given keyset, once its form is saved."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    end = time.monotonic() + deadline
    with get_client(sync_client=True) as client:
        while time.monotonic() < end:
            runs = client.read_flow_runs(
                flow_run_filter=FlowRunFilter(state=FlowRunFilterState(type=FlowRunFilterStateType(
                    any_=[StateType.PAUSED]))), sort=FlowRunSort.START_TIME_DESC, limit=5)
            for run in runs:
                keyset = run.state.state_details.run_input_keyset or {}
                if keyset.get("schema", "").endswith(f"{keyset_name}-schema"):
                    try:
                        client.read_flow_run_input(run.id, keyset["description"])
                    except Exception:  # the form is saved just after the state changes
                        break
                    return run
            time.sleep(0.3)
    raise AssertionError(f"no run paused with {keyset_name} within {deadline} s")


def _editor(log: dict[str, Any]) -> None:
    """What an editor does: a refused input, a schema-invalid one, then reject two entries and edit one."""
    from prefect.client.orchestration import get_client
    from prefect.flow_runs import resume_flow_run

    try:
        run = _paused_run(time.time(), "review-1")
        with get_client(sync_client=True) as client:
            ks = run.state.state_details.run_input_keyset
            log["description"] = json.loads(client.read_flow_run_input(run.id, ks["description"]))
            log["draft"] = Edition.model_validate_json(client.read_flow_run_input(run.id, "pr-digest-draft"))
        numbers = [e.number for e in log["draft"].entries]
        log["run_id"] = run.id
        resume_flow_run(run.id, run_input={"decision": "send", "approver": "Ann", "changes": "reject 12345678"})
        run = _paused_run(time.time(), "review-2")
        with get_client(sync_client=True) as client:
            log["description2"] = json.loads(client.read_flow_run_input(
                run.id, run.state.state_details.run_input_keyset["description"]))
        with pytest.raises(RuntimeError, match="Validation failed"):
            resume_flow_run(run.id, run_input={"decision": "send", "approver": "Ann",
                                               "changes": [{"number": numbers[0], "verdict": "must-read"}]})
        log["rejected"], log["edited"] = numbers[1:3], numbers[3]
        resume_flow_run(run.id, run_input={
            "decision": "send", "approver": "Ann Editor", "changes": f"reject {numbers[1]}, #{numbers[2]}\nnote two out\n"
            f"#{numbers[3]} verdict=deep-read headline=EDITED HEADLINE by Ann"})
    except BaseException as exc:  # the flow thread reports it
        log["error"] = exc


@pytest.fixture(scope="module")
def reviewed_run(prefect_api, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One edition with --approve ui, reviewed by a background 'editor', secrets set in the environment."""
    import os

    from flows.edition import digest_edition

    tmp = tmp_path_factory.mktemp("review")
    (tmp / "readers.yaml").write_text(READERS, encoding="utf-8")
    env = {**SECRETS, "DIGEST_REVIEW_TIMEOUT": "120"}  # 2 minutes: the paused process polls every 2 s
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    log: dict[str, Any] = {"out": tmp / "out", "state": tmp / "state.sqlite"}
    editor = threading.Thread(target=_editor, args=(log,), daemon=True)
    editor.start()
    try:
        log["summary"] = digest_edition(
            source=f"jsonl:{SAMPLE}", readers=str(tmp / "readers.yaml"), out=str(log["out"]), approve="ui",
            since="2026-11-16", until="2026-11-17", language="en", state=str(log["state"]))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    editor.join(10)
    if "error" in log:
        raise log["error"]
    return log



@pytest.mark.prefect
def test_run_waits_for_review_and_shows_the_draft(reviewed_run: dict[str, Any]) -> None:
    description = reviewed_run["description"]
    assert "8 draft entries" in description and "| verdict | entries |" in description
    assert "Choose *send*" in description and "After that the run fails" in description
    assert all(f"#{e.number} " in description for e in reviewed_run["draft"].entries)


@pytest.mark.prefect
def test_invalid_input_is_refused_and_the_run_waits_again(reviewed_run: dict[str, Any]) -> None:
    assert "Your last input was refused" in reviewed_run["description2"]
    assert "#12345678 is not in" in reviewed_run["description2"]
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    with get_client(sync_client=True) as client:
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[reviewed_run["run_id"]])))
    assert any("review input refused" in log.message and "12345678" in log.message for log in logs)


@pytest.mark.prefect
def test_only_approved_entries_with_the_edit_reach_the_outbox(reviewed_run: dict[str, Any]) -> None:
    out: Path = reviewed_run["out"]
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    status = {e["number"]: e["status"] for e in digest["entries"]}
    rejected, edited = reviewed_run["rejected"], reviewed_run["edited"]
    assert [n for n, s in status.items() if s == "rejected"] == rejected
    assert status[edited] == "edited" and list(status.values()).count("approved") == len(status) - 3
    assert digest["approver"] == "Ann Editor" and digest["approved_at"] and digest["review_note"] == "two out"
    entry = next(e for e in digest["entries"] if e["number"] == edited)
    assert entry["headline"] == "EDITED HEADLINE by Ann" and entry["verdict"] == "deep-read"
    assert entry["edit_distance"] > 0
    eml = (out / "outbox" / "all.eml").read_bytes().decode("utf-8", "replace")
    slack = (out / "outbox" / "all.slack.json").read_text(encoding="utf-8")
    text = (out / "email" / "all.txt").read_text(encoding="utf-8")
    for number in rejected:
        assert f"/pull/{number}" not in text and f"/pull/{number}" not in slack
    assert "EDITED HEADLINE by Ann" in text and "EDITED HEADLINE by Ann" in slack and eml
    for number in set(status) - set(rejected):
        assert f"/pull/{number}" in text
    notices = sorted(p.name for p in (out / "outbox").glob("editor-*"))
    assert notices == ["editor-ann-editor.eml", "editor-ann-editor.slack.json"]
    assert str(reviewed_run["run_id"]) in (out / "outbox" / "editor-ann-editor.eml").read_text(encoding="utf-8")
    with sqlite3.connect(reviewed_run["state"]) as conn:
        rows = dict(conn.execute("SELECT number, status FROM review_entries").fetchall())
    assert rows == status


@pytest.mark.prefect
def test_no_secret_reaches_prefect_logs_artifacts_parameters_or_run_inputs(reviewed_run: dict[str, Any]) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId, LogFilter, LogFilterFlowRunId

    run_id = reviewed_run["run_id"]
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
        logs = client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run_id])), limit=200)
        artifacts = client.read_artifacts(artifact_filter=ArtifactFilter(
            flow_run_id=ArtifactFilterFlowRunId(any_=[run_id])))
        inputs = client.filter_flow_run_input(run_id, key_prefix="", limit=100, exclude_keys=set())
        task_runs = client.read_task_runs()
    assert logs and artifacts and inputs
    assert "markdown" in {a.type for a in artifacts}
    haystack = json.dumps([run.model_dump(mode="json"), [log.model_dump(mode="json") for log in logs],
                           [a.model_dump(mode="json") for a in artifacts],
                           [i.model_dump(mode="json") for i in inputs],
                           [t.model_dump(mode="json") for t in task_runs]])
    for name, secret in SECRETS.items():
        assert secret not in haystack, f"{name} leaked into the Prefect API"
    assert "ghp_" not in haystack and "xoxb-" not in haystack


@pytest.mark.prefect
def test_review_that_times_out_fails_the_run_and_sends_nothing(prefect_api, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterState, FlowRunFilterStateType
    from prefect.client.schemas.objects import StateType
    from prefect.client.schemas.sorting import FlowRunSort

    from flows.edition import digest_edition
    from prdigest.review import ReviewExpired

    monkeypatch.setenv("DIGEST_REVIEW_TIMEOUT", "3")
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(ReviewExpired, match="not resumed within 3 s"):
        digest_edition(source=f"jsonl:{SAMPLE}", readers=str(tmp_path / "readers.yaml"), out=str(out),
                       approve="ui", since="2026-11-16", until="2026-11-17",
                       state=str(tmp_path / "state.sqlite"))
    assert sorted(p.name for p in (out / "outbox").iterdir()) == ["editor-ann-editor.eml",
                                                                   "editor-ann-editor.slack.json"]
    assert not (out / "digest.json").exists() and not (out / "email").exists()
    with get_client(sync_client=True) as client:
        run = client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1, flow_run_filter=FlowRunFilter(
            state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.FAILED]))))[0]
    assert run.state.is_failed()


@pytest.mark.prefect
def test_cli_review_prints_the_draft_and_approve_resumes_with_checks(prefect_api, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    thread, result, run_id, out, _ = _edition_waiting_for_review(tmp_path, monkeypatch)
    cli = CliRunner()
    shown = cli.invoke(app, ["review", run_id])
    assert shown.exit_code == 0 and "8 draft entries" in shown.output and "| verdict | entries |" in shown.output
    draft = Edition.model_validate_json(_draft_of(run_id))
    keep_out = draft.entries[-1].number
    for args, message in ((["--reject", "424242"], "#424242 is not in"), ([], "say --all"),
                          (["--all", "--approver", " "], "approver: type your name")):
        refused = cli.invoke(app, ["approve", run_id, *args])
        assert refused.exit_code == 2 and message in refused.output, refused.output
    approved = cli.invoke(app, ["approve", run_id, "--reject", str(keep_out), "--approver", "Cy"])
    assert approved.exit_code == 0, approved.output
    thread.join(60)
    assert "error" not in result, result.get("error")
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert [e["number"] for e in digest["entries"] if e["status"] == "rejected"] == [keep_out]
    assert digest["approver"] == "Cy"
    assert cli.invoke(app, ["approve", run_id, "--all"]).exit_code == 2  # no longer waiting


def _edition_waiting_for_review(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                ) -> tuple[threading.Thread, dict[str, Any], str, Path, Path]:
    """The sample week's edition run through the flow with ``approve="ui"`` in a thread, paused for its review:
    (the thread, its result holder, the paused run's id, the output folder, the state file)."""
    from flows.edition import digest_edition

    monkeypatch.setenv("DIGEST_REVIEW_TIMEOUT", "120")
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    out, state = tmp_path / "out", tmp_path / "state.sqlite"
    result: dict[str, Any] = {}

    def edition() -> None:
        try:
            result["summary"] = digest_edition(
                source=f"jsonl:{SAMPLE}", readers=str(tmp_path / "readers.yaml"), out=str(out), approve="ui",
                since="2026-11-16", until="2026-11-17", state=str(state), language="en")
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=edition, daemon=True)
    thread.start()
    return thread, result, str(_paused_run(time.time(), "review-1").id), out, state


def _draft_of(run_id: str) -> str:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        return client.read_flow_run_input(run_id, "pr-digest-draft")


def test_a_big_edition_lists_entries_one_line_each_above_the_form() -> None:
    edition = _edition(150)
    edition.entries[7] = _entry(8, warnings=["grounding failed"], rationale="Full text of the flagged one.")
    short = review_markdown(edition, artifact_hint="See the draft artifact.")
    full = review_markdown(edition, budget=None)
    assert len(short) < len(full) and "See the draft artifact." in short
    assert all(f"[#{n}](https://github.com/o/r/pull/{n})" in short for n in range(1, 151) if n != 8)
    assert short.index("Full text of the flagged one.") < short.index("[#1]")  # flagged first, in full
    assert "Full text of the flagged one." in short and "Why 9 matters" not in short and "Why 9 matters" in full
    assert review_markdown(_edition(3)) == review_markdown(_edition(3), budget=None)  # small: always in full


def test_a_variant_key_shows_as_written_in_its_code_span() -> None:
    """The dialog showed `quantization\\_no-docs`: markdown shows a code span's backslashes (issue 30)."""
    from prdigest.kernel.models import VariantRecord

    edition = _edition(5).model_copy(update={"ranking": [1, 2, 3, 4, 5], "variants": [
        VariantRecord(key="quantization_no-docs", readers=["quant_team"], numbers=[3, 4], read_first=[4, 3]),
        VariantRecord(key="evil`key**<b>", readers=["x"], numbers=[2], read_first=[2])]})
    text = review_markdown(edition)
    assert "- `quantization_no-docs` (quant\\_team): #4 #3" in text
    assert "\\_no-docs" not in text
    assert "`evil\u02cbkey**<b>`" in text  # a backtick cannot close the span early


def test_a_compact_list_of_every_entry_says_all_not_the_other() -> None:
    """With nothing flagged, the one-line list said "The other 58 entries" when all 58 were there (issue 30)."""
    edition = _edition(150)
    assert "### All 150 entries, one line each" in review_markdown(edition)
    assert "The other" not in review_markdown(edition)
    edition.entries[7] = _entry(8, warnings=["grounding failed"])
    assert "### The other 149 entries, one line each" in review_markdown(edition)


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_approve_ui_without_a_reachable_prefect_server_stops_before_anything_runs() -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from flows.review import preflight_review
    from prdigest.kernel.errors import ConfigError

    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        with pytest.raises(ConfigError, match="PREFECT_API_URL"):
            preflight_review(RunOptions(approve="ui"))
        preflight_review(RunOptions(approve="auto"))


def test_an_editor_changing_only_the_verdict_gets_a_text_opening_with_the_new_verdict() -> None:
    edition = _edition()
    edition.entries[0] = _entry(1, Verdict.DEEP_READ, rationale="值得精读：改变了缓存的归属。")
    reviewed = apply_decision(edition, ReviewDecision(decision="send", approver="Ann",
                                                      edits=[EntryEdit(number=1, verdict="skip")]))
    one = reviewed.entries[0]
    assert one.verdict is Verdict.SKIP and one.rationale == "可略过：改变了缓存的归属。"
    assert one.status is EntryStatus.EDITED and one.edit_distance == 0  # the verdict changed, not the text


@pytest.mark.prefect
@pytest.mark.parametrize("via", ["ui", "digest approve"])
def test_a_record_rewritten_during_the_review_is_refused_and_nothing_is_sent(prefect_api, tmp_path: Path, via: str,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Body and hash of the stored record rewritten together while the editor reviews: the record checks out by
    itself, but it is not the draft the editor was shown, so neither the form nor `digest approve` can send it."""
    from prefect.flow_runs import resume_flow_run
    from typer.testing import CliRunner

    from flows.cli import app
    from prdigest.state import variant_rows
    from prdigest.state.record import canonical_json, content_hash
    from prdigest.state.store import open_store

    thread, result, run_id, out, state = _edition_waiting_for_review(tmp_path, monkeypatch)
    with open_store(state) as store:
        key, body, parts = store.fetchone("SELECT key, body, parts FROM edition_records WHERE run_id = ?", (run_id,))
        if parts is None:  # the variants inside the body
            shown = Edition.model_validate_json(body)
            tampered = shown.model_copy(update={"entries": [
                e.model_copy(update={"headline": "Verify your account at evil.example"}) for e in shown.entries]})
            store.execute("UPDATE edition_records SET body = ?, hash = ? WHERE run_id = ?",
                          (canonical_json(tampered), content_hash(tampered), run_id))
        else:  # the variants in rows of their own: the head's digest and the whole hash made to match as well
            forged = re.sub(r'"headline":"(?:[^"\\]|\\.)*"', '"headline":"Verify your account at evil.example"',
                            body)
            bodies = [b for (b,) in store.fetchall(
                "SELECT body FROM edition_variants WHERE key = ? ORDER BY position", (key,))]
            listed = json.loads(parts)
            listed["head"] = variant_rows.digest(forged)
            store.execute("UPDATE edition_records SET body = ?, hash = ?, parts = ? WHERE run_id = ?",
                          (forged, variant_rows.whole_hash(forged, bodies),
                           json.dumps(listed, ensure_ascii=False, sort_keys=True, separators=(",", ":")), run_id))
    if via == "ui":
        resume_flow_run(run_id, run_input={"decision": "send", "approver": "Ann", "changes": ""})
    else:
        approved = CliRunner().invoke(app, ["approve", run_id, "--all", "--approver", "Cy"])
        assert approved.exit_code == 0, approved.output  # the draft it checked is the one shown: the run refuses
    thread.join(60)
    assert "error" in result and "its editor was shown" in str(result["error"])
    assert not list(out.glob("outbox/all.*"))  # the reader got nothing (the editors' notice went out before)
    assert not (out / "digest.json").exists()
def test_auto_approval_for_real_channels_leaves_flagged_entries_out_and_says_so(tmp_path) -> None:
    import logging

    from flows.media import default_media
    from prdigest.kernel.config import Settings
    from prdigest.kernel.models import EntryStatus
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline, auto_approve
    from prdigest.state.record import Status
    from tests.factories import edition, entry

    flagged = entry(2, ["docs"], status="draft").model_copy(update={"needs_editing": True,
                                                                     "warnings": ["links to evil.example"]})
    ed = edition([entry(1, ["docs"], status="draft"), flagged], language="en")
    said: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: said.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("prdigest.pipeline.edition").addHandler(handler)
    try:
        approved = auto_approve(ed, leave_flagged=True)
    finally:
        logging.getLogger("prdigest.pipeline.edition").removeHandler(handler)
    assert [e.status for e in approved.entries] == [EntryStatus.APPROVED, EntryStatus.REJECTED]
    assert "left out 1 entry" in approved.review_note and "#2" in approved.review_note
    assert any("left out 1 entry" in line for line in said)  # the log says so too
    for deliver, published in (("smtp", [1]), ("outbox", [1, 2])):  # the outbox is a dry run: all of it
        options = RunOptions(source="sample", deliver=deliver, out=str(tmp_path / deliver),
                             state=str(tmp_path / f"{deliver}.sqlite"))
        settings = Settings(state=options.state, smtp_host="127.0.0.1", from_address="d@example.com")
        pipeline = EditionPipeline(build_services(options, settings, default_media()))
        try:
            record = pipeline.review(pipeline.save(ed, Status.DRAFTED, expect=None))
            assert [e.number for e in record.edition.published] == published, deliver
        finally:
            pipeline.services.close()


def test_the_review_form_starts_with_an_empty_approver() -> None:
    # Whoever submits types their name (check_decision refuses none): a pre-filled editor would be recorded as
    # the approver whoever clicked. tests/test_review_browser.py checks the field as the UI draws it.
    from flows.review_form import review_form
    from tests.factories import edition, entry

    form = review_form(edition([entry(1, ["docs"], status="draft")]), "draft")
    assert form.model_fields["approver"].is_required()


def test_the_review_form_marks_the_approver_required_as_the_run_does() -> None:
    """The UI drew "Approver (Optional)" (the field had a default) while the run refused a blank one: the editor
    lost a resume and a new pause (25 s) to find out. The schema Prefect stores for the UI now requires it."""
    import pydantic
    from prefect._internal.pydantic.v2_schema import create_v2_schema

    from flows.review_form import review_form
    from tests.factories import edition, entry

    form = review_form(edition([entry(1, ["docs"], status="draft")]), "draft")
    schema = create_v2_schema(form.__name__, model_base=form)  # what RunInput.save_schema stores for the UI
    assert "approver" in schema["required"] and schema["properties"]["approver"]["minLength"] == 1
    for blank in ("", "   "):
        with pytest.raises(pydantic.ValidationError, match="approver"):
            form(decision="send", approver=blank)
    assert form(decision="hold", approver="Ann").approver == "Ann"
