"""The state database's password never reaches Prefect (its stored parameters) nor any output: redacted by
libpq's rule wherever the location is shown ('#', '?', '/' in a password; ``sslpassword=``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.kernel.errors import ConfigError
from prdigest.state.store import StateLocation, open_store

SECRET = "Zq9#x?y/K+w=="


@pytest.mark.parametrize("url", [
    f"postgresql://digest:{SECRET}@db.example:5432/digest",
    "postgresql://digest:pa#ss@db.example/digest",
    "postgresql://digest:pa?ss@db.example/digest",
    "postgresql://digest:ab/cd+ef==@db.example:5432/digest",
    "postgresql://digest@db.example/digest?sslmode=require&sslpassword=pa-ss&password=pw2",
])
def test_every_way_of_showing_a_location_masks_its_passwords(url: str) -> None:
    secrets = ["pa#ss", "pa?ss", "ab/cd", "pa-ss", "pw2", SECRET, "Zq9#x"]
    try:
        location = StateLocation.parse(url)
    except ValueError as exc:  # a '/' in the password makes libpq read a port from it: refused, masked
        shown = [str(exc)]
    else:
        assert location.has_password and location.dsn == url
        shown = [str(location), repr(location), location.redact(f"FATAL: password {url} refused")]
    for text in shown:
        assert not any(s in text for s in secrets), text
        assert "***" in text and "db.example" in text


def test_the_port_error_masks_a_password_that_holds_a_slash() -> None:
    with pytest.raises(ConfigError) as caught:
        open_store("postgresql://digest:ab/cd@db.example:5432/digest")
    assert "ab/cd" not in str(caught.value) and "port is not a number" in str(caught.value)


def test_a_password_with_hash_and_question_mark_is_a_valid_location_as_libpq_reads_it() -> None:
    location = StateLocation.parse("postgresql://digest:pa#s?s@db.example:5432/digest")
    assert location.is_postgres and str(location) == "postgresql://digest:***@db.example:5432/digest"


def test_a_flow_parameter_with_a_state_password_is_refused_naming_the_remedy() -> None:
    from flows.edition import edition_options, flow_parameters
    from prdigest.pipeline.compose import RunOptions

    with pytest.raises(ConfigError) as caught:
        edition_options(state=f"postgresql://digest:{SECRET}@db.example/digest")
    assert SECRET not in str(caught.value) and "DIGEST_STATE" in str(caught.value)
    assert edition_options(state="postgresql://digest@db.example/digest").state  # no password: allowed
    assert flow_parameters(RunOptions(state="local.sqlite"))["state"] == "local.sqlite"


def test_digest_status_shows_the_location_masked(tmp_path: Path) -> None:
    url = f"postgresql://digest:{SECRET}@127.0.0.1:1/digest"  # nobody listens: the error names the location
    result = CliRunner().invoke(app, ["status", "vllm-project/vllm 2026-W47", "--state", url])
    assert result.exit_code != 0 and SECRET not in result.output and "Zq9" not in result.output
    assert "127.0.0.1" in result.output


@pytest.mark.slow
def test_digest_run_with_a_state_url_stores_no_password_in_prefect(prefect_api, pg_url: str, postgres_server,
                                                                   tmp_path: Path, monkeypatch) -> None:
    from prefect.client.orchestration import get_client

    monkeypatch.setenv("DIGEST_STATE", "unset-below")
    monkeypatch.delenv("DIGEST_STATE")  # the CLI puts the URL there for the flow; restored after the test
    result = CliRunner().invoke(app, ["run", "--source", "sample", "--state", pg_url, "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs()
    assert runs, "the run went through Prefect"
    stored = json.dumps([r.model_dump(mode="json") for r in runs])
    assert postgres_server.password not in stored and postgres_server.password not in result.output
    with open_store(pg_url) as store:  # and the run did use the PostgreSQL state
        assert store.fetchone("SELECT COUNT(*) FROM schema_versions")[0] > 0
