"""An editor reviews an edition in a real browser: ``prefect server start`` on 127.0.0.1, the edition paused
for review, the flow run opened in headless Chromium (the V2 UI: Resume under the ⋮ menu), one entry
rejected in the form, and the run completes with exactly that entry left out."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, SAMPLE
from tests.review_support import (
    CHROMIUM, CHROMIUM_ARGS, browser_missing, prefect_server, start_edition, wait_final, wait_paused,
)

pytestmark = [pytest.mark.browser, pytest.mark.skipif(browser_missing() is not None,
                                                      reason=browser_missing() or "")]

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


def open_resume_dialog(page, ui: str, run_id: str):
    """The flow run's page in the V2 UI, ⋮ → Resume: the dialog with the draft and the form."""
    page.goto(f"{ui}/v2/runs/flow-run/{run_id}")
    page.get_by_role("button", name="Open menu").first.click()
    page.get_by_role("menuitem", name="Resume").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Select Decision").wait_for()
    return dialog


def test_editor_rejects_one_entry_in_the_prefect_ui(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    (tmp_path / "home").mkdir()
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    out = tmp_path / "out"
    with prefect_server(tmp_path / "home") as server:
        edition = start_edition(server, {
            "source": f"jsonl:{SAMPLE}", "since": "2026-11-16", "until": "2026-11-17", "approve": "ui",
            "readers": str(tmp_path / "readers.yaml"), "out": str(out), "state": str(tmp_path / "state.sqlite"),
            "language": "en"}, tmp_path / "edition.log", {"DIGEST_REVIEW_TIMEOUT": "120"})
        try:
            run = wait_paused(server["api"], proc=edition)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                dialog = open_resume_dialog(page, server["ui"], run["id"])
                # The draft digest, rendered from markdown above the form.
                assert dialog.get_by_role("heading", name=re.compile("8 draft entries")).count() == 1
                assert dialog.locator("table").first.inner_text().count("deep-read") == 1
                first = dialog.locator("p > strong", has_text=re.compile(r"^#\d+ ")).first.inner_text()
                rejected = int(re.match(r"#(\d+)", first).group(1))
                assert dialog.locator(f"a[href='https://github.com/vllm-project/vllm/pull/{rejected}']").count() == 1
                # The form: one required choice, the approver pre-filled, the PR number to leave out.
                assert dialog.locator("textarea").count() == 4 and dialog.get_by_role("switch").count() == 1
                dialog.get_by_role("button", name="Select Decision").click()
                page.get_by_role("option", name="send").click()
                assert dialog.get_by_label("Approver").input_value() == "Ann Editor"
                dialog.get_by_label("Reject", exact=False).first.fill(str(rejected))
                dialog.get_by_label("Decision").scroll_into_view_if_needed()
                ARTIFACTS.mkdir(exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "review-form.png"))
                dialog.get_by_role("button", name="Resume").click()
                dialog.wait_for(state="hidden", timeout=15000)
                browser.close()
            final = wait_final(server["api"], run["id"], timeout=60)
            assert final["state"]["type"] == "COMPLETED", final["state"]
        finally:
            edition.kill()
            edition.wait(10)
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert [e["number"] for e in digest["entries"] if e["status"] == "rejected"] == [rejected]
    assert {e["status"] for e in digest["entries"] if e["number"] != rejected} == {"approved"}
    assert digest["approver"] == "Ann Editor"
    assert f"/pull/{rejected}" not in (out / "email" / "all.txt").read_text(encoding="utf-8")
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS"):  # refresh the README's picture on purpose, never as a side effect
        shutil.copyfile(ARTIFACTS / "review-form.png", ROOT / "docs" / "review-form.png")
