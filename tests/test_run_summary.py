"""The end-of-run summary counts each variant's messages once, from the run's results (issue 38: the table scanned
every sent message once per variant, O(variants × messages) at 10,000 readers)."""

from __future__ import annotations

from pathlib import Path

from flows.cli.summary import print_summary
from tests.test_render_scale import Counted, _run


def test_the_summary_counts_messages_per_variant_and_the_table_shows_them(tmp_path: Path, capsys) -> None:
    summary = _run(tmp_path, Counted())
    # docs: two Slack readers; kernels: one by mail, one by mail and Slack; all: one by mail.
    assert summary.messages == {"docs": 2, "kernels": 3, "all": 1}
    assert sum(summary.messages.values()) == len(summary.sent)
    print_summary(summary, 1.0)
    rows = {line.split("│")[1].strip(): line.split("│")[3].strip()
            for line in capsys.readouterr().out.splitlines() if line.count("│") == 4}
    assert {k: rows[k] for k in ("docs", "kernels", "all")} == {"docs": "2", "kernels": "3", "all": "1"}


def test_the_paths_to_open_are_printed_whole_on_a_narrow_terminal(tmp_path: Path, capsys, monkeypatch) -> None:
    """A path longer than the terminal is not folded (a folded path cannot be copied: `digest.jso` / `n`), and a
    folder whose name looks like markup is printed as it is."""
    monkeypatch.setenv("COLUMNS", "60")
    deep = tmp_path / "a-folder-whose-name-is-long-enough-to-pass-the-width" / "[bold]week[/bold]"
    deep.mkdir(parents=True)
    summary = _run(deep, Counted())
    print_summary(summary, 1.0)
    lines = [line.strip() for line in capsys.readouterr().out.splitlines()]
    out = deep / "out"
    assert str(out / "digest.json") in lines
    assert {str(out / "email" / f"{key}.html") for key in summary.variants} <= set(lines)
