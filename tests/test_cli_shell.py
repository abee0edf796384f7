"""The shell as a user meets it: flags generated from RunOptions, configuration refused in one line before
anything starts, a quiet successful demo without Prefect, review without a Prefect API, status at 80 columns.

The refusals and the demo run the real ``digest`` in a child process with a clean environment (no Prefect
API, an empty PREFECT_HOME), as a person's terminal would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import typer
from pydantic import Field
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.options import options_command
from prdigest.kernel.options import RunOptions
from tests.factories import open_ledger

ROOT = Path(__file__).resolve().parents[1]
READERS = ROOT / "prdigest" / "readers" / "examples" / "readers.yaml"


def _env(tmp_path: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DIGEST_", "COLUMNS"))}
    (tmp_path / "prefect-home").mkdir(exist_ok=True)
    return {**keep, "PREFECT_HOME": str(tmp_path / "prefect-home"), "DIGEST_STATE": str(tmp_path / "s.sqlite")}


def _digest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "flows.cli", *args], cwd=tmp_path, env=_env(tmp_path), text=True,
                          capture_output=True, timeout=300)


def _one_spaced(text: str) -> str:
    return " ".join(text.replace("│", " ").split())


# --- flags generated from RunOptions ----------------------------------------------------------------------
def test_every_run_option_is_a_flag_of_digest_run_with_its_description() -> None:
    shown = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"})
    assert shown.exit_code == 0, shown.output
    text = _one_spaced(shown.output)
    for name, info in RunOptions.model_fields.items():
        flag = "--" + name.replace("_", "-")
        assert re.search(rf"{flag}\b", text), flag
        assert _one_spaced(info.description or "MISSING DESCRIPTION") in text, name


class _Extended(RunOptions):
    """RunOptions with one more field, as a change to the core would add it."""

    dry_note: str | None = Field(default=None, description="A note for the record, shown in --help.")


def test_a_new_run_option_becomes_a_flag_with_its_description_and_reaches_the_options() -> None:
    seen: list[_Extended] = []
    cli = typer.Typer()
    cli.command()(options_command(lambda options, verbose: seen.append(options), doc="Try.", model=_Extended))
    shown = CliRunner().invoke(cli, ["--help"], env={"COLUMNS": "400"})
    assert "--dry-note" in shown.output and "A note for the record, shown in --help." in _one_spaced(shown.output)
    ran = CliRunner().invoke(cli, ["--dry-note", "hello", "--drafter", "offline", "--resend-edition"])
    assert ran.exit_code == 0, ran.output
    assert seen[0].dry_note == "hello" and seen[0].resend_edition and seen[0].source == "sample"


def test_a_bad_flag_value_is_one_line_naming_the_flag() -> None:
    result = CliRunner().invoke(app, ["run", "--source", "sample", "--drafter", "gpt"])
    assert result.exit_code == 2
    assert result.output.strip() == "error: --drafter 'gpt': unknown drafter; use one of offline, openai"


# --- configuration refused before anything starts -----------------------------------------------------------
def test_a_bad_readers_file_is_refused_in_one_line_naming_file_and_line_without_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "readers.yaml"
    bad.write_text(READERS.read_text(encoding="utf-8").replace("subsystems: [rocm]", "subsytems: [rocm]", 1),
                   encoding="utf-8")
    line = 1 + bad.read_text(encoding="utf-8").splitlines().index("    subsytems: [rocm]")
    result = _digest(tmp_path, "run", "--source", "sample", "--readers", str(bad), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: {bad}:{line}: readers field 'readers.3.subsytems' (reader 'platform-amd'): Extra inputs are not "
        "permitted"]
    assert not (tmp_path / "out").exists()


def test_approve_ui_without_a_prefect_api_is_refused_before_collecting(tmp_path: Path) -> None:
    result = _digest(tmp_path, "run", "--source", "sample", "--approve", "ui", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [
        "error: --approve ui needs a Prefect server editors can reach: run `prefect server start` and set "
        "PREFECT_API_URL=http://127.0.0.1:4200/api (see README, Deploying)"]


@pytest.mark.parametrize("command", [["review"], ["approve", "--all"]])
def test_review_and_approve_without_a_prefect_api_say_so_at_once(tmp_path: Path, command: list[str]) -> None:
    result = _digest(tmp_path, command[0], str(uuid.uuid4()), *command[1:])
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: no Prefect API configured: set PREFECT_API_URL")


@pytest.mark.parametrize("command", [["review"], ["approve", "--all"]])
def test_review_and_approve_with_the_prefect_api_down_say_so_in_one_line(tmp_path: Path, command: list[str]) -> None:
    """They printed a 99-line traceback (Prefect's client, after its retries)."""
    env = {**_env(tmp_path), "PREFECT_API_URL": "http://127.0.0.1:9/api"}  # port 9 (discard): nothing listens
    result = subprocess.run([sys.executable, "-m", "flows.cli", command[0], str(uuid.uuid4()), *command[1:]],
                            cwd=tmp_path, env=env, text=True, capture_output=True, timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "PREFECT_API_URL=http://127.0.0.1:9/api is not reachable" in lines[0]
    assert "the server the run waits on" in lines[0] and "run without Prefect" not in lines[0]


def test_a_prefect_api_set_in_the_active_profile_counts_as_configured(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "prefect-home" / "profiles.toml").write_text(
        'active = "team"\n[profiles.team]\nPREFECT_API_URL = "http://127.0.0.1:4200/api"\n', encoding="utf-8")
    probe = "from flows.cli.prefect_env import api_url; import sys; print(api_url(), 'prefect' in sys.modules)"
    shown = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, text=True, capture_output=True,
                           check=True)
    assert shown.stdout.split() == ["http://127.0.0.1:4200/api", "False"]
    (tmp_path / "prefect-home" / "profiles.toml").write_text('active = "ephemeral"\n', encoding="utf-8")
    shown = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, text=True, capture_output=True,
                           check=True)
    assert shown.stdout.split() == ["None", "False"]


# --- a successful run is quiet --------------------------------------------------------------------------
def test_demo_without_a_prefect_api_runs_the_loop_directly_quietly_and_never_imports_prefect(tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = ("import sys\nfrom flows.cli import app\n"
              f"try:\n    app(['demo', '--out', {str(out)!r}], standalone_mode=False)\n"
              "finally:\n    print('prefect imported:', 'prefect' in sys.modules, file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=_env(tmp_path), text=True,
                            capture_output=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    both = result.stdout + result.stderr
    assert "ERROR" not in both and "Traceback" not in both
    assert not re.search(r"\|\s*(INFO|WARNING)\s*\|", both)  # no Prefect log line (its format: "| INFO |")
    assert "prefect imported: False" in result.stderr
    assert "58/58 entries" in _one_spaced(result.stdout) and (out / "digest.json").is_file()
    assert sorted(p.name for p in (out / "outbox").iterdir())  # delivered to the outbox


# --- digest status at 80 columns ------------------------------------------------------------------------
def test_status_at_80_columns_keeps_every_reader_status_and_header_whole(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    edition = "acme-w-2026-W47"
    readers = [("kernels-team", "email", "kernels-and-attention@example.com"),
               ("serving-oncall", "slack", "#vllm-serving-oncall"), ("platform-amd", "email", "amd@example.com")]
    (tmp_path / ".digest").mkdir()
    ledger = open_ledger(tmp_path / ".digest" / "state.sqlite")
    try:
        ledger.register(edition, [(r, m, "attention+kernels+moe", to, None) for r, m, to in readers])
        ledger.sent(edition, ("kernels-team", "email"), "<" + "a1b2c3d4" * 8 + "@mail.example.com>")
        ledger.failed(edition, ("serving-oncall", "slack"), "channel_not_found: the bot is not in #vllm-serving-"
                      "oncall; invite it with /invite @pr-digest and run again")
    finally:
        ledger.close()
    result = CliRunner().invoke(app, ["status", edition, "--state", str(tmp_path / ".digest" / "state.sqlite")],
                                env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any(all(h in line for h in ("reader", "medium", "status", "updated (UTC)", "detail")) for line in lines)
    for (reader, medium, _), status in zip(readers, ("sent", "failed", "pending")):
        assert any(reader in line and medium in line and status in line for line in lines), (reader, result.output)
    assert "channel_not_found" in result.output and "a1b2c3d4" in result.output


# --- with a Prefect API: the same command runs the flow, and Prefect speaks only with --verbose ------------------
@pytest.mark.prefect
def test_with_a_prefect_api_the_demo_is_a_flow_run_and_prefect_logs_only_with_verbose(tmp_path: Path) -> None:
    import httpx

    from tests.review_support import prefect_server

    (tmp_path / "home").mkdir()
    with prefect_server(tmp_path / "home") as server:
        env = {**server["env"], "DIGEST_STATE": str(tmp_path / "s.sqlite")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def demo(*extra: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "flows.cli", "demo", *extra], cwd=tmp_path, env=env,
                                  text=True, capture_output=True, timeout=900)

        quiet = demo("--out", str(tmp_path / "quiet"))
        assert quiet.returncode == 0, quiet.stderr[-3000:]
        both = quiet.stdout + quiet.stderr
        assert "ERROR" not in both and "Traceback" not in both
        assert not re.search(r"\|\s*(INFO|WARNING)\s*\|", both)
        assert "58/58 entries" in _one_spaced(quiet.stdout)
        loud = demo("--out", str(tmp_path / "loud"), "--verbose")
        assert loud.returncode == 0, loud.stderr[-3000:]
        assert re.search(r"\|\s*INFO\s*\|.*Finished in state Completed", loud.stderr)
        assert "ERROR" not in loud.stderr and "Traceback" not in loud.stderr  # no task hashes what cannot be hashed
        runs = httpx.post(f"{server['api']}/flow_runs/filter", json={}, timeout=30).json()
    assert sorted(r["state"]["type"] for r in runs) == ["COMPLETED", "COMPLETED"]  # both ran as flow runs


@pytest.mark.parametrize(("flag", "setting"), [("--site-url", "site_url"), ("--llm-base-url", "llm_base_url"),
                                               ("--github-url", "github_url"), ("--slack-base-url", "slack_base_url")])
def test_a_url_that_is_not_http_is_refused_before_anything_runs(tmp_path: Path, flag: str, setting: str) -> None:
    result = CliRunner().invoke(app, ["run", "--source", "sample", flag, "digest.example.com/archive",
                                      "--out", str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2
    assert result.output.strip().startswith(f"error: setting '{setting}' (flag {flag} ")
    assert "is not an http(s) URL" in result.output and not (tmp_path / "out").exists()


# --- what an audit of the shell found (issue 30) ---------------------------------------------------------
def test_version_and_short_help() -> None:
    from importlib.metadata import version

    shown = CliRunner().invoke(app, ["--version"])
    assert shown.exit_code == 0 and shown.output.strip() == f"digest (pr-digest) {version('pr-digest')}"
    for args in (["-h"], ["run", "-h"], ["rules", "-h"], ["rules", "init", "-h"], ["approve", "-h"]):
        helped = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
        assert helped.exit_code == 0 and "Usage:" in helped.output, (args, helped.output)


def test_an_unreachable_prefect_api_is_one_line_naming_it(tmp_path: Path) -> None:
    env = {**_env(tmp_path), "PREFECT_API_URL": "http://127.0.0.1:9/api"}  # port 9 (discard): nothing listens
    done = subprocess.run([sys.executable, "-m", "flows.cli", "demo", "--out", str(tmp_path / "out")], cwd=tmp_path,
                          env=env, text=True, capture_output=True, timeout=300)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr  # was a 141-line traceback
    assert "PREFECT_API_URL=http://127.0.0.1:9/api is not reachable" in lines[0] and "prefect server start" in lines[0]


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_an_empty_jsonl_source_is_one_error_naming_the_file(tmp_path: Path, content: str) -> None:
    """It used to "succeed" as unknown/unknown, store a proposal from 0 PRs and publish an empty page."""
    (tmp_path / "week.jsonl").write_text(content, encoding="utf-8")
    done = _digest(tmp_path, "run", "--source", "jsonl:week.jsonl", "--out", "out")
    assert done.returncode == 2
    assert done.stderr.strip() == ("error: week.jsonl: no pull requests in the file (it is empty or only blank "
                                   "lines): a JSONL source holds one merged PR per line (docs/contracts.md)")
    assert not (tmp_path / "out").exists() and not (tmp_path / "s.sqlite").exists()


def test_a_new_state_file_is_pointed_out_with_the_state_files_beside_it(tmp_path: Path) -> None:
    """A mistyped --state used to start a new ledger silently (every reader sent the week again)."""
    sample = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
    (tmp_path / "week.jsonl").write_text(sample.read_text(encoding="utf-8"), encoding="utf-8")
    first = _digest(tmp_path, "run", "--source", "jsonl:week.jsonl", "--out", "out", "--state", "state.sqlite")
    assert first.returncode == 0, first.stderr
    assert "note: no state database at state.sqlite yet: this run starts a new one" in first.stderr
    assert "beside it" not in first.stderr
    again = _digest(tmp_path, "run", "--source", "jsonl:week.jsonl", "--out", "out", "--state", "state.sqlite")
    assert again.returncode == 0 and "no state database" not in again.stderr  # the same file: nothing to say
    typo = _digest(tmp_path, "run", "--source", "jsonl:week.jsonl", "--out", "out2", "--state", "stat.sqlite")
    assert typo.returncode == 0, typo.stderr
    note = next(line for line in typo.stderr.splitlines() if line.startswith("note: no state database"))
    assert "at stat.sqlite yet" in note and "beside it: state.sqlite (pass --state with one of them" in note


# --- what a new user hit (issue 37) ---------------------------------------------------------------------
def _sample_lines() -> list[str]:
    sample = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
    return [line for line in sample.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_window_with_nothing_merged_is_an_error_and_no_edition(tmp_path: Path) -> None:
    """It exited 0, stored an empty edition and published its page in the archive."""
    (tmp_path / "week.jsonl").write_text("\n".join(_sample_lines()) + "\n", encoding="utf-8")
    done = _digest(tmp_path, "run", "--source", "jsonl:week.jsonl", "--since", "2020-01-06", "--until", "2020-01-13",
                   "--out", "out")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    error = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert error == ["error: nothing merged into vllm-project/vllm 2020-W02 ([2020-01-06T00:00:00+00:00, "
                     "2020-01-13T00:00:00+00:00) UTC): no edition is made and nothing is sent; check --repo and "
                     "--since/--until"]
    assert not (tmp_path / "out" / "digest.json").exists() and not (tmp_path / "out" / "site").exists()


def test_a_jsonl_of_many_weeks_without_a_window_is_refused_naming_the_span(tmp_path: Path) -> None:
    """A 19-month file went out as one week ("2025-W04", "this week"): the window must be chosen."""
    import json

    lines = _sample_lines()
    old = json.loads(lines[0])
    old.update(number=1, url="https://github.com/vllm-project/vllm/pull/1", merged_at="2025-04-22T10:00:00Z",
               created_at="2025-04-20T10:00:00Z")
    (tmp_path / "long.jsonl").write_text("\n".join([json.dumps(old), *lines]) + "\n", encoding="utf-8")
    done = _digest(tmp_path, "run", "--source", "jsonl:long.jsonl", "--out", "out")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(
        f"error: long.jsonl: its {len(lines) + 1} PRs were merged over 19 months (2025-04-22 to 2026-11-")
    assert "pass --since and --until" in done.stderr and "--since 2026-11-16 --until 2026-11-23" in done.stderr
    assert not (tmp_path / "out").exists()
    chosen = _digest(tmp_path, "run", "--source", "jsonl:long.jsonl", "--since", "2026-11-16", "--until", "2026-11-23",
                     "--out", "out")
    assert chosen.returncode == 0, chosen.stderr


def test_a_missing_state_folder_is_refused_unless_it_is_the_default_on_a_first_run(tmp_path: Path) -> None:
    """A mistyped (or unmounted) state folder was created, with a new ledger: every reader was sent the week again."""
    (tmp_path / "week.jsonl").write_text("\n".join(_sample_lines()) + "\n", encoding="utf-8")
    run = ("run", "--source", "jsonl:week.jsonl", "--deliver", "outbox", "--out", "out")
    typo = _digest(tmp_path, *run, "--state", "stat/state.sqlite")
    assert typo.returncode == 2 and "Traceback" not in typo.stderr, typo.stderr
    assert typo.stderr.strip().splitlines() == [
        "error: the state folder stat does not exist (only the default .digest/ is created by a first run): pass "
        "--state (or DIGEST_STATE) with the state database of the earlier runs, or create the folder (mkdir -p "
        "stat) to start a new one; nothing was collected or sent"]
    assert not (tmp_path / "stat").exists() and not (tmp_path / "out").exists()
    env = {k: v for k, v in _env(tmp_path).items() if k != "DIGEST_STATE"}  # the default: .digest/state.sqlite
    first = subprocess.run([sys.executable, "-m", "flows.cli", *run], cwd=tmp_path, env=env, text=True,
                           capture_output=True, timeout=300)
    assert first.returncode == 0 and (tmp_path / ".digest" / "state.sqlite").is_file(), first.stderr
    sent = sorted(p.name for p in (tmp_path / "out" / "outbox").iterdir())
    moved = tmp_path / "elsewhere"
    (tmp_path / ".digest").rename(moved)  # the state folder is gone; out/ holds the earlier run's edition
    again = subprocess.run([sys.executable, "-m", "flows.cli", *run], cwd=tmp_path, env=env, text=True,
                           capture_output=True, timeout=300)
    assert again.returncode == 2 and not (tmp_path / ".digest").exists(), again.stderr
    assert "the state folder .digest does not exist (out/digest.json is from an earlier run" in again.stderr
    assert sorted(p.name for p in (tmp_path / "out" / "outbox").iterdir()) == sent and sent


def _files_under(out: Path) -> set[str]:
    return {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file() and p.parts[len(out.parts)] != "site"}


def test_the_output_folder_holds_exactly_the_last_edition(tmp_path: Path) -> None:
    """Last week's variants and readers that this week has not (a reader left the readers file) stayed in out/
    (email/, slack/, feishu/, outbox/) beside this week's, and were opened as this week's."""
    import json
    from datetime import datetime, timedelta

    import yaml

    lines = _sample_lines()
    (tmp_path / "w1.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    later = [json.loads(line) for line in lines]
    for pr in later:  # the same PRs two weeks later
        pr["merged_at"] = (datetime.fromisoformat(pr["merged_at"].replace("Z", "+00:00")) + timedelta(days=14)
                           ).isoformat()
    (tmp_path / "w2.jsonl").write_text("\n".join(json.dumps(pr) for pr in later) + "\n", encoding="utf-8")
    readers = yaml.safe_load(READERS.read_text(encoding="utf-8"))
    readers["readers"] = [r for r in readers["readers"] if r["id"] == "lin"]
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(readers), encoding="utf-8")
    for week, out, who in (("w1", "out", str(READERS)), ("w2", "out", "one.yaml"), ("w2", "alone", "one.yaml")):
        done = _digest(tmp_path, "run", "--source", f"jsonl:{week}.jsonl", "--deliver", "outbox", "--out", out,
                       "--state", f"{out}.sqlite", "--readers", who)
        assert done.returncode == 0, done.stderr
    alone = json.loads((tmp_path / "alone" / "digest.json").read_text(encoding="utf-8"))
    assert json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))["key"] == alone["key"]
    assert _files_under(tmp_path / "out") == _files_under(tmp_path / "alone")
    assert {p.split("/")[1].split(".")[0] for p in _files_under(tmp_path / "out") if p.startswith("outbox/")} == {"lin"}
