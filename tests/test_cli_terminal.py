"""The ``digest`` CLI as a terminal shows it: PR-number lists, hostile text, and finding an edition's state."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.numbers import pr_numbers, spread
from flows.cli.terminal import print_error, safe_table
from prdigest.kernel.errors import ReviewError
from tests.factories import open_ledger

#: Everything a hostile title or server reply might carry to a terminal.
HOSTILE = "ok\x1b[2J\x1b]0;pwned\x07\u202eevil\u202c\r[/red][bold]x\x00\x9b31m"
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.mark.parametrize(("args", "expected"), [
    (["RUN", "--reject", "1", "2", "3"], ["RUN", "--reject", "1", "--reject", "2", "--reject", "3"]),
    (["RUN", "--reject", "1,2,3"], ["RUN", "--reject", "1,2,3"]),
    (["--reject", "1", "2", "RUN-with-dashes"], ["--reject", "1", "--reject", "2", "RUN-with-dashes"]),
    (["RUN", "--approve", "4", "#5", "--note", "7", "8"], ["RUN", "--approve", "4", "--approve", "#5", "--note", "7",
                                                          "8"]),                       # --note's value is not a PR
    (["RUN", "--reject=1", "2"], ["RUN", "--reject=1", "--reject", "2"]),
    (["RUN", "--reject", "1", "--", "2"], ["RUN", "--reject", "1", "--", "2"]),
])
def test_number_options_take_several_values(args: list[str], expected: list[str]) -> None:
    assert spread(args, ("--reject", "--approve")) == expected


def test_pr_numbers_accept_commas_and_hashes_and_name_a_bad_token() -> None:
    assert pr_numbers(["1,2", "#3", "4, 5"], "--reject") == [1, 2, 3, 4, 5]
    with pytest.raises(ReviewError, match=r"--reject 'x1' is not a PR number"):
        pr_numbers(["1", "x1"], "--reject")


@pytest.mark.parametrize("numbers", [["--reject", "47327", "33451"], ["--reject", "47327,33451"],
                                     ["--approve", "1", "2", "--reject", "3"]])
def test_approve_parses_every_spelling_before_looking_for_the_run(numbers: list[str]) -> None:
    result = CliRunner().invoke(app, ["approve", "not-a-run", *numbers])
    assert result.exit_code == 2
    assert "unexpected extra argument" not in result.output
    assert "'not-a-run' is not a flow run id" in result.output  # the numbers were accepted


def test_approve_names_a_bad_number() -> None:
    result = CliRunner().invoke(app, ["approve", "not-a-run", "--reject", "12", "1o"])
    assert result.exit_code == 2 and "--reject '1o' is not a PR number" in result.output


def test_errors_are_printed_literally_without_control_characters() -> None:
    console = Console(record=True, force_terminal=True, width=200)
    print_error(f"PR {HOSTILE} is broken", console)
    shown = console.export_text(styles=False)
    assert "[/red][bold]x" in shown and "error: PR ok" in shown
    assert not _FORBIDDEN.search(shown)


def test_tables_lose_control_characters_and_keep_styles() -> None:
    table = Table(title=HOSTILE)
    table.add_column("a")
    table.add_row(Text(HOSTILE, style="red"))
    table.add_row(HOSTILE)
    console = Console(record=True, force_terminal=True, width=200)
    console.print(safe_table(table))
    raw = console.export_text(styles=True)
    assert "[/red][bold]x" in raw and "\x1b[2J" not in raw and "\u202e" not in raw
    assert "\x1b[31m" in raw  # the cell's own style still reaches the terminal


def _ledger(path: Path, edition: str, provider_id: str = "", error: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    ledger = open_ledger(path)
    try:
        ledger.register(edition, [("lin", "email", "all", "lin@example.com", None),
                                  ("ops", "slack", "all", "#ops", None)])
        if error:
            ledger.failed(edition, ("ops", "slack"), error)
        if provider_id:
            ledger.sent(edition, ("lin", "email"), provider_id)
    finally:
        ledger.close()


def test_status_finds_the_edition_in_the_deployments_state_file(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIGEST_STATE", raising=False)  # the conftest gives each test its own
    monkeypatch.chdir(tmp_path)
    _ledger(tmp_path / ".digest" / "state.sqlite", "other-2026-W46")
    long_id = "<" + "a1b2c3d4" * 12 + "@mail.example.com>"
    _ledger(tmp_path / ".digest" / "vllm.sqlite", "acme-w-2026-W47", provider_id=long_id, error=HOSTILE)
    result = CliRunner().invoke(app, ["status", "acme-w-2026-W47"], env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "found in state database .digest/vllm.sqlite" in result.output
    assert "lin@example.com" in result.output and "[/red][bold]x" in result.output
    assert not _FORBIDDEN.search(result.output)
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 160
    # The long Message-ID is cut on one line instead of folding every row into several.
    assert sum("a1b2c3d4" in line for line in lines) == 1 and "…" in next(line for line in lines if "a1b2c3d4" in line)


def test_status_says_plainly_when_no_database_holds_the_edition(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DIGEST_STATE", raising=False)  # the conftest gives each test its own
    monkeypatch.chdir(tmp_path)
    _ledger(tmp_path / ".digest" / "vllm.sqlite", "acme-w-2026-W47")
    result = CliRunner().invoke(app, ["status", "acme-w-2026-W48"])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "no edition acme-w-2026-W48 in state database .digest/state.sqlite or .digest/vllm.sqlite" in text
    assert ".digest/vllm.sqlite holds acme-w-2026-W47" in text
    explicit = CliRunner().invoke(app, ["status", "acme-w-2026-W47", "--state", str(tmp_path / "nope.sqlite")])
    assert explicit.exit_code == 2 and "nope.sqlite" in explicit.output


@pytest.mark.prefect
def test_run_error_with_markup_in_the_source_is_one_literal_line(prefect_api, tmp_path: Path) -> None:
    source = tmp_path / "prs.jsonl"
    source.write_text(json.dumps({"number": "[/red]", "title": "x"}) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{source}", "--repo", "acme/w",
                                      "--out", str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2, result.output
    # (Prefect's own log lines reach CliRunner's output inside pytest; the CLI silences them in a terminal.)
    assert "MarkupError" not in result.output
    assert any(line.startswith(f"error: {source}:1: PR #[/red]: field 'number'")
               for line in result.output.splitlines())
