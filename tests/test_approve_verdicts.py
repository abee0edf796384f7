"""``digest approve --set N=VERDICT``: an editor changes verdicts from the terminal as the review form's edits do;
the entries ship with them, and the review record keeps each change as a label for ``digest calibrate``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.numbers import verdict_changes
from prdigest.kernel.errors import ReviewError
from prdigest.kernel.models import Edition
from tests.test_review import _draft_of, _edition_waiting_for_review


@pytest.mark.parametrize("values,expected", [
    (["41873=skim"], [(41873, "skim")]),
    (["#41873=deep-read,7=skip"], [(41873, "deep-read"), (7, "skip")]),
    (["1=skip", "2=skim"], [(1, "skip"), (2, "skim")]),
])
def test_verdict_changes_are_read_in_every_spelling(values: list[str], expected: list[tuple[int, str]]) -> None:
    assert verdict_changes(values) == expected


@pytest.mark.parametrize("values,message", [
    (["41873:skim"], "--set '41873:skim' is not a verdict change (write --set 41873=skim"),
    (["41873=must-read"], "--set '41873=must-read' is not a verdict change"),
    (["1=skim", "1=skip"], "--set: PR #1 is given more than one verdict"),
])
def test_a_bad_verdict_change_is_named_with_how_to_write_it(values: list[str], message: str) -> None:
    with pytest.raises(ReviewError, match=message.replace("(", r"\(").replace("*", r"\*")):
        verdict_changes(values)


def test_approve_refuses_a_bad_change_before_looking_for_the_run() -> None:
    result = CliRunner().invoke(app, ["approve", "not-a-run", "--all", "--set", "12=later"])
    assert result.exit_code == 2 and "--set '12=later' is not a verdict change" in result.output


@pytest.mark.prefect
def test_approve_with_verdict_changes_ships_them_and_records_them(prefect_api, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    thread, result, run_id, out, state = _edition_waiting_for_review(tmp_path, monkeypatch)
    draft = Edition.model_validate_json(_draft_of(run_id))
    target = next(e for e in draft.entries if e.verdict.value != "skip" and not e.flagged)
    cli = CliRunner()
    refused = cli.invoke(app, ["approve", run_id, "--all", "--set", "424242=skip"])
    assert refused.exit_code == 2 and "424242" in refused.output, refused.output
    approved = cli.invoke(app, ["approve", run_id, "--all", "--approver", "Cy", "--set", f"{target.number}=skip"])
    assert approved.exit_code == 0, approved.output
    thread.join(60)
    assert "error" not in result, result.get("error")
    shipped = {e["number"]: e for e in json.loads((out / "digest.json").read_text(encoding="utf-8"))["entries"]}
    assert shipped[target.number]["verdict"] == "skip" and shipped[target.number]["status"] == "edited"
    assert shipped[target.number]["rationale"].startswith("Skip")
    # the review record keeps the change: a label for digest calibrate --from-reviews
    labels = cli.invoke(app, ["eval", "--from-reviews", "--state", str(state), "--out", str(tmp_path / "reviews")])
    assert labels.exit_code == 0, labels.output
    report = json.loads((tmp_path / "reviews" / "reviews.json").read_text())
    assert report["verdict_changed"] == 1, report
