"""The edition flow end to end under a real (temporary) Prefect API, and the CLI around it."""

from __future__ import annotations

import json
from email import message_from_bytes, policy
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.readers.file import example_readers_path, load_readers
from tests.conftest import SAMPLE

pytestmark = pytest.mark.prefect

HOSTILE_TITLES = [
    "<script>alert(1)</script> [Kernel] faster moe",
    "</mj-text><mj-raw><script>x</script></mj-raw>",
    "<!channel> <!here> @here <@U123> <!subteam^S1> ping everyone",
    "Subject\r\nBcc: evil@example.com",
    "nul\x00 and \x1b[31m control \u202e RTL",
]


def _hostile_file(tmp_path: Path) -> Path:
    base = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[1])
    lines = []
    for i, title in enumerate(HOSTILE_TITLES):
        lines.append(json.dumps({**base, "number": 900 + i, "title": title, "url":
                                 f"https://github.com/vllm-project/vllm/pull/{900 + i}",
                                 "body": base["body"] + "\n<img src=x onerror=alert(1)> javascript:alert(1)",
                                 "author": None if i == 0 else "mallory\r\nTo: x@y.z"}))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_demo_writes_every_output_of_design_md(prefect_api, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert digest["repo"] == "vllm-project/vllm" and digest["week"] == "2026-W47"
    assert len(digest["entries"]) == 58
    assert {e["status"] for e in digest["entries"]} == {"approved"}
    for entry in digest["entries"]:
        assert set(entry) >= {"number", "url", "title", "author", "subsystems", "verdict", "headline", "rationale",
                              "focus", "followups", "audience", "additions", "deletions", "status", "drafter",
                              "grounding"}
    variants = sorted(p.stem for p in (out / "email").glob("*.html"))
    # Each variant on the media its readers use: e-mail for every one here, Slack only where a reader has it.
    assert variants and variants == sorted(v["key"] for v in digest["variants"])
    on_slack = {r.id for r in load_readers(example_readers_path()).readers if r.slack}
    with_slack = sorted(v["key"] for v in digest["variants"] if on_slack & set(v["readers"]))
    assert with_slack and with_slack != variants
    assert sorted(p.stem for p in (out / "slack").glob("*.json")) == with_slack
    assert all((out / "email" / f"{v}.txt").exists() for v in variants)
    outbox = out / "outbox"
    assert (outbox / "kernels-team.eml").exists() and (outbox / "kernels-team.slack.json").exists()
    assert not (outbox / "tpu-watch.eml").exists()       # its filter selects nothing in this week
    msg = message_from_bytes((outbox / "lin.eml").read_bytes(), policy=policy.default)
    assert "vllm-project/vllm" in msg["Subject"] and "2026-W47" in msg["Subject"]
    assert "Readers served" in result.output and "digest.json" in result.output


def test_run_on_hostile_file_escapes_everything_and_still_delivers(prefect_api, tmp_path: Path) -> None:
    out = tmp_path / "out"
    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - id: all\n    name: All\n    email: all@example.com\n    slack: '#all'\n")
    result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{_hostile_file(tmp_path)}", "--out", str(out),
                                      "--readers", str(readers), "--language", "en"])
    assert result.exit_code == 0, result.output
    html = (out / "email" / "all.html").read_text(encoding="utf-8")
    assert "<script" not in html and "onerror=" not in html and "<mj-" not in html
    slack = (out / "slack" / "all.json").read_text(encoding="utf-8")
    for ping in ("<!channel>", "<!here>", "<@U123>", "<!subteam"):
        assert ping not in slack
    msg = message_from_bytes((out / "outbox" / "all.eml").read_bytes(), policy=policy.default)
    assert msg["Bcc"] is None and msg["To"] == "All <all@example.com>"
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert sorted(e["number"] for e in digest["entries"]) == [900, 901, 902, 903, 904]
    for number in range(900, 905):
        assert f"/pull/{number}" in html


def test_edition_with_nothing_for_anyone_sends_nothing(prefect_api, tmp_path: Path) -> None:
    from flows.edition import digest_edition

    readers = tmp_path / "readers.yaml"
    readers.write_text("readers:\n  - id: tpu\n    name: TPU\n    email: t@example.com\n    subsystems: [tpu]\n"
                       "    min_verdict: deep-read\n")
    summary = digest_edition(source=f"jsonl:{SAMPLE}", readers=str(readers), out=str(tmp_path / "o"),
                             since="2026-11-16", until="2026-11-17")
    assert summary.idle_readers == ["tpu"] and summary.sent == [] and summary.variants == {}
    assert not (tmp_path / "o" / "outbox").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["run", "--source", "jsonl:/nonexistent.jsonl"], "cannot open source file"),
    (["run", "--source", "svn:x"], "--source"),
    (["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-23", "--until", "2026-11-16"], "must be before"),
    (["run", "--source", f"jsonl:{SAMPLE}", "--deliver", "carrier-pigeon"], "--deliver"),
    (["run", "--source", f"jsonl:{SAMPLE}", "--readers", "/nonexistent/readers.yaml"], "readers file not found"),
])
def test_bad_flags_and_files_stop_with_one_clear_line(prefect_api, tmp_path: Path, args: list[str],
                                                     message: str) -> None:
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "o" / "outbox").exists()


@pytest.mark.parametrize("command", [[], ["demo"], ["run"]])
def test_every_command_has_help(command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "Usage" in result.output


def test_a_week_with_no_merged_prs_sends_nothing_and_says_so(prefect_api, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-01-05",
                                      "--until", "2026-01-12", "--out", str(out)])
    # Through the flow too: an error naming the window (issue 37: it exited 0 with an empty edition stored,
    # its page published and an empty digest.json), nothing written.
    assert result.exit_code == 2, result.output
    assert "error: nothing merged into vllm-project/vllm 2026-W02" in result.output
    assert not (out / "digest.json").exists() and not (out / "site").exists()
    assert not (out / "outbox").exists() and not list(out.glob("email/*"))
