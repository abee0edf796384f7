"""Settings, windows, readers files and the YAML loader's errors."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Verdict
from prdigest.kernel.window import Window
from prdigest.readers.file import example_readers_path, load_readers


def test_settings_read_environment_and_flags_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIGEST_LANGUAGE", "en")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    settings = load_settings(state="x.sqlite")
    assert settings.language == "en"
    assert str(settings.state) == "x.sqlite"
    assert settings.llm_base_url == "http://127.0.0.1:9/v1"
    assert settings.github_token is not None and "ghp_secret" not in repr(settings)


@pytest.mark.parametrize(("env", "value", "message"), [
    ("DIGEST_LANGUAGE", "fr", "setting 'language'"),
    ("DIGEST_GITHUB_URL", "ftp://x", r"not an http\(s\) URL"),
    ("DIGEST_SMTP_SECURITY", "tls13", "setting 'smtp_security'"),
])
def test_bad_setting_is_one_clear_line(monkeypatch: pytest.MonkeyPatch, env: str, value: str, message: str) -> None:
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=message):
        load_settings()


def test_a_setting_without_a_flag_is_named_by_its_variable_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """The error used to name a `--smtp-port` flag that does not exist (issue 30)."""
    monkeypatch.setenv("DIGEST_SMTP_PORT", "twenty-five")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert str(caught.value).startswith("setting 'smtp_port' ($DIGEST_SMTP_PORT): ")
    assert "--smtp-port" not in str(caught.value)


def test_every_flag_a_settings_error_names_is_a_flag_of_digest_run() -> None:
    from typer.testing import CliRunner

    from flows.cli import app
    from prdigest.kernel.config import FLAGS, Settings, env_name

    shown = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "400"}).output
    for field, flag in FLAGS.items():
        assert field in Settings.model_fields and f"{flag} " in shown, flag
    assert env_name("from_address") == "DIGEST_FROM" and env_name("slack_bot_token") == "SLACK_BOT_TOKEN"
    from prdigest.kernel.options import RunOptions

    assert set(RunOptions().settings_overrides()) == set(FLAGS)  # a new flag-set setting is named by its flag


def test_every_bad_setting_is_named_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIGEST_SMTP_PORT", "x")
    monkeypatch.setenv("DIGEST_LLM_TIMEOUT", "soon")
    with pytest.raises(ConfigError) as caught:
        load_settings(site_url="archive.example.com")
    message = str(caught.value)
    assert "$DIGEST_SMTP_PORT" in message and "$DIGEST_LLM_TIMEOUT" in message
    assert "setting 'site_url' (flag --site-url or $DIGEST_SITE_URL)" in message and "\n" not in message


def test_missing_smtp_settings_are_reported_all_at_once() -> None:
    """They used to come one per run: fix the host, run, learn about DIGEST_FROM, run again (issue 30)."""
    from prdigest.deliver.smtp import SmtpChannel
    from prdigest.kernel.config import Settings

    with pytest.raises(ConfigError) as caught:
        SmtpChannel.from_settings(Settings(smtp_host=None, from_address=None, smtp_user="digest-bot"))
    message = str(caught.value)
    assert "DIGEST_SMTP_HOST is not set" in message and "DIGEST_FROM is not set" in message
    assert "DIGEST_SMTP_USER is 'digest-bot' but DIGEST_SMTP_PASSWORD is not set" in message
    assert "--smtp" not in message


def test_last_full_week_is_monday_to_monday_utc() -> None:
    window = Window.last_full_week(datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc))  # a Monday
    assert (window.since, window.until) == (datetime(2026, 11, 23, tzinfo=timezone.utc),
                                            datetime(2026, 11, 30, tzinfo=timezone.utc))
    window = Window.last_full_week(datetime(2026, 11, 29, 23, 59, tzinfo=timezone.utc))  # a Sunday
    assert window.since == datetime(2026, 11, 16, tzinfo=timezone.utc)


@pytest.mark.parametrize(("since", "until", "message"), [
    ("2026-11-23", "2026-11-16", "must be before"),
    ("last week", None, "--since 'last week'"),
    (None, "2026-13-01", "--until '2026-13-01'"),
])
def test_bad_window_flags(since: str | None, until: str | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Window.from_flags(since, until)


def test_window_flags_accept_dates_and_iso_times() -> None:
    window = Window.from_flags("2026-11-16T08:00:00+08:00", None)
    assert window.since == datetime(2026, 11, 16, 0, 0, tzinfo=timezone.utc)
    assert window.until == datetime(2026, 11, 23, 0, 0, tzinfo=timezone.utc)


def test_shipped_readers_example_is_valid() -> None:
    readers = load_readers(example_readers_path())
    assert {r.id for r in readers.readers} >= {"kernels-team", "lin"}
    assert readers.readers[0].min_verdict is Verdict.SKIM


BAD_READERS = [
    ("readers:\n  - id: Bad_ID\n    name: x\n    email: a@b.co\n", ":2:", "readers.0.id"),
    ("readers:\n  - id: a\n    name: x\n    email: not-an-address\n", ":4:", "not a single plain e-mail"),
    ("readers:\n  - id: a\n    name: x\n    email: a@b.co\n    min_verdict: must-read\n", ":5:", "min_verdict"),
    ("readers:\n  - id: a\n    name: x\n    email: a@b.co\n    colour: red\n", ":5:", "colour"),
    ("readers:\n  - id: a\n    name: x\n", ":2:", "none of email, slack or feishu"),
    ("readers:\n  - id: a\n    name: x\n    slack: general\n", ":4:", "not a Slack channel"),
    ("readers:\n  - id: a\n    name: x\n    feishu: https://open.feishu.cn/x\n", ":4:", "not a Feishu group name"),
    ("readers:\n  - id: a\n    name: x\n    email: a@b.co\n  - id: a\n    name: y\n    email: c@d.co\n", "", "appears twice"),
    ("readers: [\n", ":2:", "invalid YAML"),
    ("readers: []\n", ":1:", "at least 1 item"),
    ("readers:\n  - id: a\n    name: \"x\\r\\nBcc: evil@x.com\"\n    email: a@b.co\n", ":3:", "single line"),
    ("readers:\n  - id: a\n    name: x\n    email: \"a@b.co\\r\\nBcc: evil@x.com\"\n", ":4:", "e-mail"),
]


@pytest.mark.parametrize(("text", "line", "message"), BAD_READERS)
def test_bad_readers_file_names_file_line_and_field(tmp_path: Path, text: str, line: str, message: str) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_readers(path)
    assert str(err.value).startswith(f"{path}{line}")
    assert message in str(err.value)


def test_unknown_subsystem_in_readers_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "readers.yaml"
    path.write_text("readers:\n  - id: a\n    name: x\n    email: a@b.co\n    subsystems: [kernal]\n")
    with pytest.raises(ConfigError, match="unknown subsystem.*kernal"):
        load_readers(path, {"kernels", "docs"})


def test_missing_readers_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="readers file not found"):
        load_readers(tmp_path / "nope.yaml")


def test_review_timeout_is_a_setting_with_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings().review_timeout == 3 * 24 * 3600
    monkeypatch.setenv("DIGEST_REVIEW_TIMEOUT", "120")
    assert load_settings().review_timeout == 120
    for bad in ("soon", "0"):
        monkeypatch.setenv("DIGEST_REVIEW_TIMEOUT", bad)
        with pytest.raises(ConfigError, match=r"review_timeout.*\$DIGEST_REVIEW_TIMEOUT"):
            load_settings()
