"""The delivery ledger's API on SQLite and PostgreSQL: registering, outcomes, re-runs, status, concurrency."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rich.console import Console

from flows.cli.status_table import status_table
from prdigest.deliver.ledger import Ledger
from prdigest.kernel.errors import ConfigError
from prdigest.state.store import StateLocation
from tests.factories import open_ledger
from tests.race_support import race

ED = "acme-widgets-2026-W47"


@pytest.fixture
def ledger(state_location: str):
    opened = open_ledger(state_location)
    yield opened
    opened.close()


def plan(*readers: str, recipient: str = "{r}@example.com") -> list[tuple[str, str, str, str, str | None]]:
    return [(r, "email", "all", recipient.format(r=r), f"<{r}@digest>") for r in readers]


def test_outcomes_are_recorded_once_and_seen_by_another_connection(ledger: Ledger, state_location: str) -> None:
    ledger.register(ED, plan("a", "b", "c", "d"))
    ledger.sent(ED, ("a", "email"), "250 ok")
    ledger.failed(ED, ("b", "email"), "550 no such user " + "x" * 600)
    ledger.retry_later(ED, ("c", "email"), "timeout")
    ledger.retry_later(ED, ("d", "email"), "not tried", attempted=False)
    ledger.sent(ED, ("b", "email"), "late")  # only a pending row changes
    ledger.checkpoint(ED, ("a", "email"), {"parts": 3}, provider_id="ts-1")
    other = open_ledger(state_location)  # another process
    try:
        rows = other.rows(ED)
        assert other.counts(ED) == {"pending": 2, "sending": 0, "sent": 1, "failed": 1, "uncertain": 0}
        assert rows[("a", "email")].provider_id == "ts-1" and rows[("a", "email")].checkpoint == '{"parts": 3}'
        assert rows[("b", "email")].status == "failed" and len(rows[("b", "email")].error or "") == 500
        assert rows[("c", "email")].attempts == 1 and rows[("c", "email")].attempted_at is not None
        assert rows[("d", "email")].attempts == 0 and rows[("d", "email")].attempted_at is None
        assert rows[("d", "email")].error == "not tried"
        assert other.editions() == [ED]
    finally:
        other.close()


def test_register_again_keeps_sent_rows_and_retries_a_fixed_recipient(ledger: Ledger) -> None:
    ledger.register(ED, plan("a", "b"))
    ledger.sent(ED, ("a", "email"), "250 ok")
    ledger.failed(ED, ("b", "email"), "550 unknown")
    ledger.register(ED, plan("a", "b", recipient="{r}@new.example.com") + plan("c"))
    rows = ledger.rows(ED)
    assert rows[("a", "email")].recipient == "a@example.com" and rows[("a", "email")].status == "sent"
    assert rows[("b", "email")].status == "pending" and rows[("b", "email")].error is None
    assert rows[("b", "email")].recipient == "b@new.example.com"
    assert rows[("b", "email")].message_id == "<b@digest>"  # the first Message-ID is kept
    assert sorted(rows) == [("a", "email"), ("b", "email"), ("c", "email")]


def test_each_key_pages_through_the_rows_at_the_statuses_asked_in_order(ledger: Ledger) -> None:
    # pages of 2 end between two media of one reader: the next page starts after (reader, medium), not reader
    ledger.register(ED, [(r, m, "all", f"{r}@example.com", None) for r in ("c", "a", "b") for m in ("slack", "email")])
    ledger.register("other-edition", plan("a"))
    ledger.sent(ED, ("b", "email"), "250 ok")
    ledger.failed(ED, ("c", "slack"), "550 no such user")
    pending = [("a", "email"), ("a", "slack"), ("b", "slack"), ("c", "email")]
    assert [list(ledger.each_key(ED, ("pending",), page=n)) for n in (1, 2, 3, 1000)] == [pending] * 4
    assert list(ledger.each_key(ED, ("pending", "failed", "sent"), page=2)) == sorted(
        (r, m) for r in "abc" for m in ("email", "slack"))
    assert list(ledger.each_key("no-such-edition", ("pending",))) == []


def test_concurrent_registrations_of_one_edition_make_each_row_once(state_location: str) -> None:
    readers = [f"r{i:03d}" for i in range(200)]

    def register(ready: Callable[[], None]) -> None:
        mine = open_ledger(state_location)
        try:
            ready()
            mine.register(ED, plan(*readers))
        finally:
            mine.close()

    race(register)
    check = open_ledger(state_location)
    try:
        assert check.counts(ED)["pending"] == 200 and len(check.rows(ED)) == 200
    finally:
        check.close()


def test_status_table_on_both_backends_never_prints_the_password(ledger: Ledger, state_location: str) -> None:
    ledger.register(ED, plan("a", "b"))
    ledger.sent(ED, ("a", "email"), "250 ok")
    console = Console(record=True, width=200)
    console.print(status_table(StateLocation.parse(state_location), ED))
    console.print(status_table(state_location, "other-2026-W01"))
    out = console.export_text()
    assert f"{ED}: 1 sent, 0 failed, 1 pending" in out and f"editions in the ledger: {ED}" in out
    location = StateLocation.parse(state_location)
    if location.is_postgres:
        password = location.dsn.split(":")[2].split("@")[0]
        assert password not in out and password not in repr(location) and password not in str(location)


def test_status_of_a_missing_sqlite_file_says_so(tmp_path) -> None:
    with pytest.raises(ConfigError, match="no state database here"):
        status_table(tmp_path / "missing.sqlite", ED)


def test_digest_status_on_postgres_prints_the_ledger_and_never_the_password(pg_url: str) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    ledger = open_ledger(pg_url)
    ledger.register(ED, plan("a"))
    ledger.close()
    password = StateLocation.parse(pg_url).dsn.split(":")[2].split("@")[0]
    shown = CliRunner().invoke(app, ["status", ED, "--state", pg_url], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"{ED}: 0 sent, 0 failed, 1 pending" in shown.output and password not in shown.output
    wrong = pg_url.replace(password, "wrong-Pa55")
    refused = CliRunner().invoke(app, ["status", ED, "--state", wrong])
    assert refused.exit_code == 2 and "password authentication failed" in refused.output
    assert "wrong-Pa55" not in refused.output and "DIGEST_STATE" in refused.output
    other = CliRunner().invoke(app, ["status", ED], env={"DIGEST_STATE": "mysql://u:Pa55@db/x"})
    assert other.exit_code == 2 and "'mysql://' is not supported" in other.output and "Pa55" not in other.output
