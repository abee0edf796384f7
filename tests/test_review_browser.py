"""An editor reviews editions in a real browser, in both Prefect UIs: ``prefect server start`` on 127.0.0.1,
editions paused for review, each run's Resume dialog opened in headless Chromium, in the classic UI (what Prefect
opens by default and what the editors' notification links to) and in the new one (/v2, ⋮ → Resume).

What is checked is what is painted, not only what is in the DOM: an entry of the draft is scrolled into view
inside the dialog and ``document.elementFromPoint`` must hit it, and the reading area (the rendered markdown,
clipped by every scrolling box) must be at least 250 px tall. On a week drafted by the local LLM server with
flagged entries, the editor rejects one entry and leaves the flagged ones unnamed: none of them is delivered.
On a 150-entry week the last entry of the draft is painted in both UIs.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

import pytest

from tests.conftest import ROOT, SAMPLE
from tests.review_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    UIS,
    browser_missing,
    choose_decision,
    field,
    open_resume_dialog,
    painted,
    prefect_server,
    start_edition,
    submit,
    synthetic_week,
    wait_final,
    wait_paused_out,
)
from tests.servers.openai_server import OpenAIServer

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")]

ARTIFACTS = ROOT / "test-artifacts"
READERS = """\
readers:
  - id: all
    name: All
    email: all@example.com
editors:
  - name: Ann Editor
    email: ann@example.com
"""
#: The sample week's PRs merged on 2026-11-16 (8); the LLM server drafts two of them ungrounded (flagged).
FLAGGED = (46994, 56499)
MIN_READING_PX = 250
VIEWPORT = {"width": 1400, "height": 1000}


@pytest.fixture(scope="module")
def review_server(tmp_path_factory: pytest.TempPathFactory):
    """One Prefect server with three editions waiting: two LLM-drafted weeks (one per UI) and a 150-entry week."""
    tmp = tmp_path_factory.mktemp("browser-review")
    (tmp / "home").mkdir()
    (tmp / "readers.yaml").write_text(READERS, encoding="utf-8")
    big = synthetic_week(tmp / "big.jsonl", 150)
    with OpenAIServer(models=("local-model",)) as llm, prefect_server(tmp / "home") as server:
        for number in FLAGGED:
            llm.plan(number, *["ungrounded"] * 8)
        procs: dict[str, Any] = {}
        for name in UIS:
            procs[name] = start_edition(server, {
                "source": f"jsonl:{SAMPLE}", "since": "2026-11-16", "until": "2026-11-17", "approve": "ui",
                "drafter": "openai", "llm_base_url": llm.base_url, "model": "local-model",
                "readers": str(tmp / "readers.yaml"), "out": str(tmp / name), "state": str(tmp / f"{name}.sqlite"),
                "language": "en"}, tmp / f"{name}.log", {"DIGEST_REVIEW_TIMEOUT": "600",
                                                         "OPENAI_API_KEY": llm.api_key})
        procs["big"] = start_edition(server, {
            "source": f"jsonl:{big}", "approve": "ui", "readers": str(tmp / "readers.yaml"), "out": str(tmp / "big"),
            "state": str(tmp / "big.sqlite"), "language": "en"}, tmp / "big.log", {"DIGEST_REVIEW_TIMEOUT": "600"})
        try:
            runs = {name: wait_paused_out(server["api"], str(tmp / name), proc) for name, proc in procs.items()}
            yield {"server": server, "runs": runs, "tmp": tmp, "procs": procs}
        finally:
            for proc in procs.values():
                if proc.poll() is None:
                    proc.kill()
                proc.wait(10)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _draft(server: dict[str, Any], run_id: str) -> dict[str, Any]:
    import httpx

    raw = httpx.get(f"{server['api']}/flow_runs/{run_id}/input/pr-digest-draft", timeout=10).json()
    return json.loads(raw) if isinstance(raw, str) else raw


@pytest.mark.parametrize("ui", UIS)
def test_editor_reads_the_llm_draft_and_flagged_entries_left_unnamed_are_not_sent(review_server, browser,
                                                                                    ui: str) -> None:
    server, run = review_server["server"], review_server["runs"][ui]
    draft = _draft(server, run["id"])
    flagged = [e["number"] for e in draft["entries"] if e["warnings"] or e["grounding"] or e["needs_editing"]]
    assert sorted(flagged) == sorted(FLAGGED), flagged
    unflagged = [e for e in draft["entries"] if e["number"] not in flagged]
    rejected = unflagged[0]["number"]
    page = browser.new_page(viewport=VIEWPORT)
    dialog = open_resume_dialog(page, server["ui"], run["id"], ui)
    assert dialog.get_by_text("8 draft entries, 2 flagged ⚠ first").count() == 1
    # The draft is painted where an entry is, after scrolling to it, in a reading area tall enough to read.
    for needle in (f"#{flagged[0]} ", f"#{unflagged[-1]['number']} "):
        seen = painted(page, needle)
        assert seen["found"] and seen["painted"], (needle, seen)
        assert seen["reading_height"] >= MIN_READING_PX, (needle, seen)
    link = dialog.locator("a[href*='/artifacts/key/draft-']")
    assert link.count() == 1
    choose_decision(page, dialog, ui, "send")
    # The approver starts empty, though the readers file names one editor: whoever submits types their name.
    assert field(dialog, ui, "Approver").input_value() == ""
    field(dialog, ui, "Approver").fill("Ann Editor")
    field(dialog, ui, "Changes").fill(f"reject {rejected}")
    painted(page, "Needs your eye")  # the picture shows the flagged entries, not just the form
    ARTIFACTS.mkdir(exist_ok=True)
    picture = ARTIFACTS / f"review-{ui}.png"
    page.screenshot(path=str(picture))
    submit(dialog, ui)
    page.close()
    final = wait_final(server["api"], run["id"], timeout=120)
    assert final["state"]["type"] == "COMPLETED", final["state"]
    out = review_server["tmp"] / ui
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    status = {e["number"]: e["status"] for e in digest["entries"]}
    assert sorted(n for n, s in status.items() if s == "rejected") == sorted([rejected, *flagged])
    assert {s for n, s in status.items() if n not in (rejected, *flagged)} == {"approved"}
    assert digest["approver"] == "Ann Editor"
    email = (out / "email" / "all.txt").read_text(encoding="utf-8")
    outbox = (out / "outbox" / "all.eml").read_bytes().decode("utf-8", "replace")
    for number in (rejected, *flagged):
        assert f"/pull/{number}" not in email and f"/pull/{number}" not in outbox
    assert f"/pull/{unflagged[-1]['number']}" in email
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS"):  # refresh the README's pictures on purpose, never as a side effect
        shutil.copyfile(picture, ROOT / "docs" / f"review-{ui}.png")


@pytest.mark.parametrize("ui", UIS)
def test_a_150_entry_draft_is_painted_down_to_its_last_entry(review_server, browser, ui: str) -> None:
    server, run = review_server["server"], review_server["runs"]["big"]
    draft = _draft(server, run["id"])
    assert len(draft["entries"]) == 150
    page = browser.new_page(viewport=VIEWPORT)
    open_resume_dialog(page, server["ui"], run["id"], ui)
    for number in (draft["entries"][0]["number"], draft["entries"][-1]["number"]):
        seen = painted(page, f"#{number}")
        assert seen["found"] and seen["painted"], (number, seen)
        assert seen["reading_height"] >= MIN_READING_PX, (number, seen)
    page.close()
