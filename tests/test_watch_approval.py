"""``digest watch --approve ui``: the watch flow pauses for an editor's approval of its alerts in the Prefect UI
(a real Prefect API, the test harness), with every reader's alert shown as it would be sent; nothing is recorded
or sent before the decision; ``send`` sends each alert once, ``hold`` sends none and closes the window."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from prdigest.deliver.alert_log import AlertLog
from prdigest.state.store import open_store
from tests.impact_support import build_world, readers_yaml
from tests.test_review import _paused_run

REPO = "vllm-project/vllm"


@pytest.fixture()
def world(tmp_path: Path):
    return build_world(tmp_path / "world")


def _params(world, tmp_path: Path, *, editors: bool = False) -> dict[str, str]:
    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    if editors:
        with readers.open("a", encoding="utf-8") as f:
            f.write("editors:\n  - name: Lin\n    email: lin@example.com\n")
    return dict(source=f"jsonl:{world.jsonl}", readers=str(readers), git=str(world.upstream),
                out=str(tmp_path / "out"), language="en", state=str(tmp_path / "state.sqlite"),
                since="2026-05-04", until="2026-05-05")


def _paused_watch(params: dict[str, str], monkeypatch: pytest.MonkeyPatch):
    """The watch flow with ``approve="ui"`` in a thread, paused for approval: (thread, result holder, paused run)."""
    from flows.watch import digest_watch

    monkeypatch.setenv("DIGEST_REVIEW_TIMEOUT", "120")
    result: dict[str, Any] = {}

    def watch() -> None:
        try:
            result["summary"] = digest_watch(**params, approve="ui")
        except BaseException as exc:
            result["error"] = exc

    thread = threading.Thread(target=watch, daemon=True)
    started = time.time()
    thread.start()
    return thread, result, _paused_run(started, "watch-approval-1")


def _sent(tmp_path: Path) -> list[Path]:
    """The alerts written to the outbox (an editor's notice left out)."""
    out = tmp_path / "out"
    return sorted(p for p in out.rglob("*") if p.is_file() and not p.name.startswith("editor-")) \
        if out.exists() else []


@pytest.mark.prefect
def test_watch_approve_ui_pauses_shows_each_alert_and_sends_only_after_send(prefect_api, world, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.client.orchestration import get_client
    from prefect.flow_runs import resume_flow_run

    params = _params(world, tmp_path, editors=True)
    thread, result, run = _paused_watch(params, monkeypatch)
    notice = tmp_path / "out" / "outbox" / "editor-lin.eml"  # the editors are told that alerts wait
    assert notice.is_file() and str(run.id) in notice.read_text(encoding="utf-8")
    with get_client(sync_client=True) as client:
        shown = json.loads(client.read_flow_run_input(run.id, run.state.state_details.run_input_keyset["description"]))
    assert "plugin-team" in shown and all(f"#{n}" in shown for n in (101, 102, 104, 105)), shown
    assert "fused\\_moe.py:7" in shown  # the reader's own file:line, as the alert says it (markdown-escaped)
    assert _sent(tmp_path) == []  # paused: nothing sent
    with open_store(tmp_path / "state.sqlite") as store:
        assert AlertLog(store).alerted(REPO) == []  # nor recorded
    resume_flow_run(run.id, run_input={"decision": "send", "approver": "Ann"})
    thread.join(120)
    assert "error" not in result, result.get("error")
    summary = result["summary"]
    assert summary.alerted == {"plugin-team": [101, 102, 104, 105]} and len(summary.report.sent) == 3
    assert summary.approver == "Ann" and not summary.held
    assert _sent(tmp_path)


@pytest.mark.prefect
def test_watch_approve_ui_hold_sends_nothing_and_a_later_explicit_window_proposes_them_again(
        prefect_api, world, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prefect.flow_runs import resume_flow_run

    from flows.watch import digest_watch

    params = _params(world, tmp_path)
    thread, result, run = _paused_watch(params, monkeypatch)
    resume_flow_run(run.id, run_input={"decision": "hold", "approver": "Ann"})
    thread.join(120)
    assert "error" not in result, result.get("error")
    summary = result["summary"]
    assert summary.alerted == {} and summary.report.sent == [] and _sent(tmp_path) == []
    assert "Ann held the alerts" in summary.held and "#101" in summary.held
    with open_store(tmp_path / "state.sqlite") as store:
        log = AlertLog(store)
        assert log.alerted(REPO) == [] and log.unfinished(REPO) == []  # held: nothing left for the next watch
    # The same window asked for again (here without a review) alerts them: a hold is not a loss.
    again = digest_watch(**params)
    assert again.alerted == {"plugin-team": [101, 102, 104, 105]} and len(again.report.sent) == 3


def test_digest_watch_approve_ui_without_a_prefect_server_says_what_to_start_and_sends_nothing(
        world, tmp_path: Path) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings
    from typer.testing import CliRunner

    from flows.cli import app

    params = _params(world, tmp_path)
    args = ["watch", "--source", params["source"], "--readers", params["readers"], "--git", params["git"],
            "--out", params["out"], "--state", params["state"], "--since", params["since"], "--until",
            params["until"], "--approve", "ui"]
    with temporary_settings(restore_defaults={PREFECT_API_URL}):
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "--approve ui needs a Prefect server" in result.output, result.output
    assert _sent(tmp_path) == []


@pytest.mark.prefect
def test_digest_watch_approve_ui_runs_the_flow_and_prints_who_approved(prefect_api, world, tmp_path: Path) -> None:
    from prefect.flow_runs import resume_flow_run
    from typer.testing import CliRunner

    from flows.cli import app

    params = _params(world, tmp_path)
    args = ["watch", "--source", params["source"], "--readers", params["readers"], "--git", params["git"],
            "--out", params["out"], "--state", params["state"], "--since", params["since"], "--until",
            params["until"], "--language", "en", "--approve", "ui"]
    result: dict[str, Any] = {}
    thread = threading.Thread(target=lambda: result.update(cli=CliRunner().invoke(app, args, env={
        "DIGEST_REVIEW_TIMEOUT": "120"})), daemon=True)
    started = time.time()
    thread.start()
    run = _paused_run(started, "watch-approval-1")
    assert _sent(tmp_path) == []
    resume_flow_run(run.id, run_input={"decision": "send", "approver": "Ann"})
    thread.join(120)
    output = result["cli"].output
    assert result["cli"].exit_code == 0, output
    assert "alert for plugin-team: #101, #102, #104, #105" in output and "alerts approved by Ann" in output
    assert _sent(tmp_path)
