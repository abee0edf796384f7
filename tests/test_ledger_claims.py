"""Claims on both backends: concurrent deliverer processes, leases, uncertain sends and their resend, a
state database that stops taking writes mid-delivery, editions identified by exact repo and window, and
the migration of a ledger written before all this."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pydantic import SecretStr
from rich.console import Console
from typer.testing import CliRunner

from flows.cli.status_table import status_table
from prdigest.deliver import Message, Parts
from prdigest.deliver.ledger import LedgerUnavailable, end_owner, new_owner
from prdigest.deliver.ledger_schema import COMPONENT, MIGRATIONS
from prdigest.deliver.run import Outcome, deliver
from prdigest.deliver.slack import SlackChannel
from prdigest.deliver.smtp import SmtpChannel
from prdigest.kernel.models import EditionId
from prdigest.pipeline.edition import write_digest_json
from prdigest.readers.file import Reader
from prdigest.state.history import record_edition
from prdigest.state.store import open_store
from tests.delivery_support import SENDER, planned, race_channels, race_edition, race_readers
from tests.factories import open_ledger
from tests.servers.slack_server import SlackServer
from tests.servers.smtp_server import SmtpServer

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "s3cret-smtp-pa55"
TOKEN = "xoxb-test-t0ken-123"
UTC = timezone.utc


@pytest.fixture
def smtp(tmp_path: Path):
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as server:
        yield server


def smtp_channel(server: SmtpServer, timeout: float = 10) -> SmtpChannel:
    return SmtpChannel(host="127.0.0.1", port=server.port, user=server.user, password=SecretStr(server.password),
                       sender=SENDER, ssl_context=server.client_context(), timeout=timeout)


def readers(n: int) -> list[Reader]:
    return [Reader(id=f"r{i}", name=f"Reader {i}", email=f"r{i}@example.com") for i in range(n)]


# -- several processes racing on one edition --------------------------------------------------------------

@pytest.mark.slow
def test_four_processes_racing_on_one_edition_send_each_message_exactly_once(
        state_location: str, tmp_path: Path) -> None:
    n = 220
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp, \
            SlackServer(token=TOKEN, channels=race_channels(n)) as slack:
        spec = {"readers": n, "state": state_location, "smtp_port": smtp.port, "smtp_user": smtp.user,
                "smtp_password": PASSWORD, "cert": str(smtp.cert), "slack_url": slack.url, "slack_token": TOKEN}
        open_ledger(state_location).close()  # migrated once, so the racers start together
        spec["start_at"] = time.time() + 6  # every process imported and connected by then
        children = [subprocess.Popen([sys.executable, "-m", "tests.ledger_race_child", json.dumps(spec)], cwd=ROOT,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(4)]
        reports = []
        for child in children:
            out, err = child.communicate(timeout=600)
            assert child.returncode == 0, err.decode()[-3000:]
            reports.append(Counter(json.loads(out.decode().strip().splitlines()[-1])))
        deliveries = planned(race_edition(), race_readers(n), sender=SENDER)
        payloads = {d.reader.id: len(d.message().payload) for d in deliveries if d.medium == "slack"}
        # Exactly one copy of each e-mail and of each Slack thread (parent and replies) at the servers.
        assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == [f"r{i:04d}@example.com" for i in range(n)]
        per_channel = Counter(p["channel"] for p in slack.posts())
        parents = Counter(p["channel"] for p in slack.posts() if "thread_ts" not in p)
        assert parents == Counter({f"C{i:07d}": 1 for i in range(n)})
        assert per_channel == Counter({f"C{i:07d}": payloads[f"r{i:04d}"] for i in range(n)})
        # The processes shared the work, and their reports add up to one send per row.
        assert sum(r["sent"] for r in reports) == 2 * n
        assert sum(1 for r in reports if r["sent"]) >= 2
        ledger = open_ledger(state_location)
        rows = ledger.rows(race_edition().key)
        ledger.close()
        assert len(rows) == 2 * n and {(r.status, r.attempts, r.owner) for r in rows.values()} == {("sent", 1, None)}


def test_two_owners_claim_disjoint_rows_and_a_lost_claim_is_never_pushed(state_location: str) -> None:
    ledger = open_ledger(state_location, lease=0.3)
    other = open_ledger(state_location, lease=0.3)
    a, b = new_owner(), new_owner()
    try:
        ledger.register("ed", [(f"r{i}", "email", "v", f"r{i}@example.com", None) for i in range(6)])
        mine = ledger.claim("ed", a, None, 4)
        theirs = other.claim("ed", b, None, 4)
        assert [r.key for r in mine] == [(f"r{i}", "email") for i in range(4)]
        assert [r.key for r in theirs] == [("r4", "email"), ("r5", "email")]
        assert ledger.start("ed", ("r0", "email"), a)
        assert not other.start("ed", ("r1", "email"), b)  # not b's claim
        time.sleep(0.4)  # a's lease runs out: r0 had begun its push, r1..r3 had not
        assert other.recover("ed") == (5, 1)
        rows = other.rows("ed")
        assert rows[("r0", "email")].status == "uncertain" and "may have been delivered" in rows[("r0", "email")].error
        assert {rows[(f"r{i}", "email")].status for i in range(1, 6)} == {"pending"}
        retaken = other.claim("ed", b, None, 2)
        assert [r.key for r in retaken] == [("r1", "email"), ("r2", "email")]
        assert not ledger.start("ed", ("r1", "email"), a)  # a's claim was lost: a must not push it
        assert other.start("ed", ("r1", "email"), b)
    finally:
        end_owner(a)
        end_owner(b)
        ledger.close()
        other.close()


def test_a_claim_for_some_readers_takes_only_their_pending_rows_on_both_backends(state_location: str) -> None:
    """`digest resend --reader` claims with a reader filter: only those readers' pending rows, in (reader,
    medium) order after the cursor, never a row of another reader nor one already claimed by another owner."""
    ledger = open_ledger(state_location)
    other = open_ledger(state_location)
    a, b = new_owner(), new_owner()
    try:
        ledger.register("ed", [(f"r{i}", medium, "v", f"r{i}@example.com", None)
                               for i in range(5) for medium in ("email", "slack")])
        mine = ledger.claim("ed", a, None, 10, readers=["r1", "r3"])
        assert [r.key for r in mine] == [("r1", "email"), ("r1", "slack"), ("r3", "email"), ("r3", "slack")]
        # Rows already claimed are not offered again, to another owner asking for the same readers.
        assert other.claim("ed", b, None, 10, readers=["r1", "r3"]) == []
        # The cursor and the limit work with the filter: after (r0, slack), one row of r0..r4 not yet claimed.
        assert [r.key for r in other.claim("ed", b, ("r0", "slack"), 1, readers=["r0", "r2", "r4"])] == \
            [("r2", "email")]
        # A reader with no rows, or an empty list of readers meaning "no filter", behave as written.
        assert other.claim("ed", b, None, 10, readers=["nobody"]) == []
        rest = other.claim("ed", b, None, 10)
        assert [r.key for r in rest] == [("r0", "email"), ("r0", "slack"), ("r2", "slack"),
                                         ("r4", "email"), ("r4", "slack")]
        rows = other.rows("ed")
        assert {rows[r.key].owner for r in mine} == {a}
        assert {rows[r.key].owner for r in rest} == {b}
    finally:
        end_owner(a)
        end_owner(b)
        ledger.close()
        other.close()


# -- uncertain sends and digest resend -------------------------------------------------------------------

READERS_YAML = """
readers:
  - {id: r0, name: Reader 0, email: r0@example.com}
  - {id: r1, name: Reader 1, email: r1@example.com}
  - {id: r2, name: Reader 2, email: r2@example.com}
"""


def test_no_answer_to_data_is_uncertain_never_resent_until_digest_resend_sends_it_once(
        smtp: SmtpServer, tmp_path: Path) -> None:
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    ed = race_edition()
    with open_store(state) as store:
        # The record is what digest resend rebuilds from, sealed as a run seals it (with the state's key file).
        from prdigest.state.record import SealKey
        from prdigest.state.store import StateLocation

        record_edition(store, ed, seal=SealKey.for_state(StateLocation.parse(state)))
    out.mkdir()
    # digest.json edited on disk (a headline rewritten): resend must send the recorded text, never this file's.
    write_digest_json(out, ed.model_copy(update={"entries": [
        e.model_copy(update={"headline": "EDITED ON DISK " + e.headline}) for e in ed.entries]}))
    smtp.answer_late("r1@example.com", 2.5)  # accepted at once, 250 after the client's 1 s timeout
    ledger = open_ledger(state)
    report = deliver(ed.id, planned(ed, readers(3), ("email",), sender=SENDER),
                     {"email": smtp_channel(smtp, timeout=1)}, ledger)
    assert [(r.reader, r.outcome) for r in report.results] == [
        ("r0", Outcome.SENT), ("r1", Outcome.UNCERTAIN), ("r2", Outcome.SENT)]
    assert "may have been delivered" in report.uncertain[0].detail
    time.sleep(2)  # the late 250 has gone out
    assert len(smtp.to("r1@example.com")) == 1  # one copy: the channel did not reconnect and resend
    row = ledger.rows(ed.key)[("r1", "email")]
    assert row.status == "uncertain" and "did not answer" in row.error
    # A re-run leaves it alone.
    again = deliver(ed.id, planned(ed, readers(3), ("email",), sender=SENDER), {"email": smtp_channel(smtp)}, ledger)
    assert [r.outcome for r in again.results] == [Outcome.ALREADY, Outcome.UNCERTAIN, Outcome.ALREADY]
    ledger.close()
    assert len(smtp.messages) == 3

    console = Console(record=True, width=250)
    console.print(status_table(state, ed.name))  # the name as digest run prints it
    shown = console.export_text()
    assert f"{ed.key}: 2 sent, 0 failed, 0 pending, 1 uncertain" in shown
    assert re.search(r"r1\s+│\s+email.*uncertain.*did not answer", shown)
    assert f"digest resend '{ed.name}' --uncertain" in shown

    (tmp_path / "readers.yaml").write_text(READERS_YAML, encoding="utf-8")
    env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
           "DIGEST_SMTP_PASSWORD": PASSWORD, "DIGEST_FROM": SENDER, "SSL_CERT_FILE": str(smtp.cert)}
    from flows.cli import app

    args = ["resend", ed.name, "--uncertain", "--readers", str(tmp_path / "readers.yaml"), "--state", str(state)]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert "r1 (email) to r1@example.com: resent" in result.output and PASSWORD not in result.output
    copies = smtp.to("r1@example.com")
    assert len(copies) == 2 and copies[0].message["Message-ID"] == copies[1].message["Message-ID"] == row.message_id
    resent = copies[1].message.get_body(("plain",)).get_content()
    assert "EDITED ON DISK" not in resent and ed.entries[0].headline in resent
    assert len(smtp.messages) == 4
    ledger = open_ledger(state)
    assert ledger.rows(ed.key)[("r1", "email")].status == "sent"
    ledger.close()
    twice = CliRunner().invoke(app, args, env=env)
    assert twice.exit_code == 0 and "nothing uncertain to resend" in twice.output and len(smtp.messages) == 4
    unasked = CliRunner().invoke(app, args[:2] + args[3:], env=env)
    assert unasked.exit_code == 2 and "--uncertain" in unasked.output


def test_a_slack_post_without_an_answer_is_uncertain_and_never_posted_twice(tmp_path: Path) -> None:
    with SlackServer(token=TOKEN) as slack:
        slack.answer_late("chat.postMessage", 2.5)
        ledger = open_ledger(tmp_path / "state.sqlite")
        ed = race_edition()
        deliveries = planned(ed, [Reader(id="c", name="C", slack="#vllm-kernels")], ("slack",), sender=SENDER)
        channel = SlackChannel(token=SecretStr(TOKEN), base_url=slack.url, timeout=1)
        report = deliver(ed.id, deliveries, {"slack": channel}, ledger)
        time.sleep(2)
        assert [r.outcome for r in report.results] == [Outcome.UNCERTAIN]
        assert "may have been posted" in report.results[0].detail
        # Only the parent went out, once: no retry handler re-POSTed it, and no reply followed.
        assert len([c for c in slack.calls if c.method == "chat.postMessage"]) == 1 and len(slack.posts()) == 1
        again = deliver(ed.id, deliveries, {"slack": SlackChannel(token=SecretStr(TOKEN), base_url=slack.url)}, ledger)
        assert [r.outcome for r in again.results] == [Outcome.UNCERTAIN] and len(slack.posts()) == 1
        ledger.close()


# -- the state database failing mid-delivery ----------------------------------------------------------------

class _LockAfterPush:
    """A real SMTP channel; after its ``n``-th accepted message another connection locks the state file
    (as a long write by another process would)."""

    name = "smtp"

    def __init__(self, inner: SmtpChannel, state: Path, n: int) -> None:
        self.inner, self.state, self.n, self.pushed = inner, state, n, 0
        self.blocker: sqlite3.Connection | None = None

    def check(self) -> None:
        self.inner.check()

    def push(self, message: Message, parts: Parts | None = None) -> str:
        provider_id = self.inner.push(message, parts)
        self.pushed += 1
        if self.pushed == self.n:
            self.blocker = sqlite3.connect(self.state, isolation_level=None)
            self.blocker.execute("BEGIN EXCLUSIVE")
        return provider_id

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


def test_a_state_database_locked_past_the_busy_timeout_stops_the_loop_with_one_line(
        smtp: SmtpServer, tmp_path: Path) -> None:
    state = tmp_path / "state.sqlite"
    ed = race_edition()
    plan = planned(ed, readers(6), ("email",), sender=SENDER)
    ledger = open_ledger(state, busy_timeout=0.2, retries=1, patience=1.0)
    channel = _LockAfterPush(smtp_channel(smtp), state, 3)
    started = time.monotonic()
    with pytest.raises(LedgerUnavailable) as caught:
        deliver(ed.id, plan, {"email": channel}, ledger)
    message = str(caught.value)
    assert "\n" not in message and "state database cannot record deliveries" in message and str(state) in message
    assert time.monotonic() - started < 30
    # The third message was accepted but could not be recorded; nothing was pushed after it.
    assert [m.rcpt_tos for m in smtp.messages] == [["r0@example.com"], ["r1@example.com"], ["r2@example.com"]]
    assert channel.blocker is not None
    channel.blocker.execute("ROLLBACK")
    channel.blocker.close()
    ledger.close()

    ledger = open_ledger(state)  # the next run: the stopped deliverer's claims are settled
    report = deliver(ed.id, plan, {"email": smtp_channel(smtp)}, ledger)
    outcomes = {r.reader: r.outcome for r in report.results}
    assert outcomes == {"r0": Outcome.ALREADY, "r1": Outcome.ALREADY, "r2": Outcome.UNCERTAIN,
                        "r3": Outcome.SENT, "r4": Outcome.SENT, "r5": Outcome.SENT}
    assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == [f"r{i}@example.com" for i in range(6)]
    ledger.close()


def test_a_message_that_cannot_be_composed_fails_that_reader_and_the_rest_are_sent(
        smtp: SmtpServer, tmp_path: Path) -> None:
    ed = race_edition()
    plan = planned(ed, readers(4), ("email",), sender=SENDER)

    def broken(message_id: str | None) -> object:
        raise ValueError("Header values may not contain linefeed or carriage return characters")

    plan[1] = replace(plan[1], compose=broken)
    ledger = open_ledger(tmp_path / "state.sqlite")
    report = deliver(ed.id, plan, {"email": smtp_channel(smtp)}, ledger)
    assert [(r.reader, r.outcome) for r in report.results] == [
        ("r0", Outcome.SENT), ("r1", Outcome.FAILED), ("r2", Outcome.SENT), ("r3", Outcome.SENT)]
    row = ledger.rows(ed.key)[("r1", "email")]
    assert row.status == "failed" and "cannot compose" in row.error and "linefeed" in row.error
    assert len(smtp.messages) == 3
    ledger.close()


# -- edition identity ----------------------------------------------------------------------------------

def test_two_editions_in_one_week_and_lookalike_repos_are_distinct_editions(
        smtp: SmtpServer, state_location: str) -> None:
    monday, wednesday, next_monday = (datetime(2026, 11, d, tzinfo=UTC) for d in (16, 18, 23))
    first = race_edition().model_copy(update={"until": wednesday})
    second = race_edition().model_copy(update={"since": wednesday, "until": next_monday})
    ids = [first.id, second.id, EditionId("org/my_repo", monday, next_monday),
           EditionId("org/my.repo", monday, next_monday), EditionId("org-my/repo", monday, next_monday)]
    assert len({i.key for i in ids}) == len({i.name for i in ids}) == 5
    assert first.name == "vllm-project/vllm 2026-11-16..2026-11-18"
    assert race_edition().name == "vllm-project/vllm 2026-W47"
    ledger = open_ledger(state_location)
    for ed in (first, second):
        report = deliver(ed.id, planned(ed, readers(2), ("email",), sender=SENDER), {"email": smtp_channel(smtp)},
                         ledger)
        assert [r.outcome for r in report.results] == [Outcome.SENT, Outcome.SENT]
    assert len(smtp.to("r0@example.com")) == 2  # the second window is not taken as "already sent"
    for ed in (first, second):
        for asked in (ed.name, ed.key, ed.id.exact):
            assert ledger.resolve(asked) == ed.key
    assert ledger.identity(second.key) == (second.name, "vllm-project/vllm@2026-11-18..2026-11-23")
    ledger.close()


def test_a_ledger_written_before_claims_is_migrated_and_its_rows_adopted(state_location: str, smtp) -> None:
    store = open_store(state_location)
    store.migrate(COMPONENT, MIGRATIONS[:1])
    ed = race_edition()
    legacy = ed.id.legacy_key
    assert legacy == "vllm-project-vllm-2026-W47"
    store.executemany(
        "INSERT INTO delivery_ledger (edition, reader, medium, variant, recipient, status, attempts, provider_id, "
        "created_at, updated_at) VALUES (?, ?, 'email', 'all', ?, ?, 1, ?, '2026-11-23T08:00:00+00:00', "
        "'2026-11-23T08:00:00+00:00')",
        [(legacy, "r0", "r0@example.com", "sent", "<r0@old>"), (legacy, "r1", "r1@example.com", "failed", None)])
    store.close()
    ledger = open_ledger(state_location)  # migrates to the current schema
    report = deliver(ed.id, planned(ed, readers(3), ("email",), sender=SENDER), {"email": smtp_channel(smtp)}, ledger)
    assert [(r.reader, r.outcome) for r in report.results] == [
        ("r0", Outcome.ALREADY), ("r1", Outcome.FAILED), ("r2", Outcome.SENT)]
    assert ledger.rows(legacy) == {} and ledger.rows(ed.key)[("r0", "email")].provider_id == "<r0@old>"
    assert ledger.resolve(legacy) is None or ledger.resolve(legacy) == ed.key
    ledger.close()
    assert [a for m in smtp.messages for a in m.rcpt_tos] == ["r2@example.com"]
    version = open_store(state_location)
    try:
        assert version.fetchone("SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,)) == (2,)
    finally:
        version.close()


def test_a_dead_deliverer_of_this_host_is_recognised_at_once(state_location: str) -> None:
    ledger = open_ledger(state_location, lease=3600)
    try:
        ledger.register("ed", [("a", "email", "v", "a@example.com", None), ("b", "email", "v", "b@example.com", None)])
        child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
        here = new_owner()  # this host, boot and PID namespace: host#scope
        end_owner(here)
        dead = f"{here.rsplit(':', 2)[0]}:{child.stdout.strip()}:deadbeef"
        for key in ("a", "b"):
            assert ledger.claim("ed", dead, None if key == "a" else ("a", "email"), 1)
        ledger.conn.execute("UPDATE delivery_ledger SET push_started_at = 'x' WHERE reader = 'b'")
        assert ledger.recover("ed") == (1, 1)  # no waiting for the hour-long lease
    finally:
        ledger.close()


def test_a_deliverer_of_another_pid_namespace_with_this_host_name_is_never_taken_for_dead(state_location: str) -> None:
    # Two containers of one pod share a host name; PIDs are their own. The other's deliverer is alive even
    # when no process of ours has its PID.
    from prdigest.deliver.owners import owner_gone

    code = "from prdigest.deliver.owners import new_owner; print(new_owner())"
    try:
        other = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
                               capture_output=True, text=True, timeout=60, cwd=Path(__file__).parent.parent)
    except FileNotFoundError:
        pytest.skip("unshare is not installed")
    if other.returncode:
        pytest.skip(f"cannot make a PID namespace here: {other.stderr.strip()[:200]}")
    dead_here = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                               text=True).stdout.strip()
    where, _pid, tail = other.stdout.strip().rsplit(":", 2)
    assert where.split("#")[0] == socket.gethostname()
    alien = f"{where}:{dead_here}:{tail}"  # its PID is one that no longer runs in our namespace
    assert not owner_gone(alien)
    ledger = open_ledger(state_location, lease=3600)
    try:
        ledger.register("ed", [("a", "email", "v", "a@example.com", None)])
        assert ledger.claim("ed", alien, None, 1)
        assert ledger.recover("ed") == (0, 0)  # its claim stands until its lease runs out
    finally:
        ledger.close()


def test_an_owners_own_sent_after_its_lease_ran_out_settles_the_row_it_left_uncertain(state_location: str) -> None:
    ledger = open_ledger(state_location, lease=0.5)
    other = open_ledger(state_location, lease=0.5)
    try:
        ledger.register("ed", [("a", "email", "v", "a@example.com", None)])
        owner = new_owner()
        (row,) = ledger.claim("ed", owner, None, 1)
        assert ledger.start("ed", row.key, owner)
        time.sleep(1.2)  # a slow push: the lease runs out, and another run settles the row as uncertain
        assert other.recover("ed") == (0, 1) and other.counts("ed")["uncertain"] == 1
        ledger.sent("ed", row.key, "<id@example.com>", owner=owner)  # the provider did accept it
        assert ledger.counts("ed")["sent"] == 1
        assert other.reopen_uncertain("ed") == []  # so `digest resend --uncertain` sends no second copy
    finally:
        end_owner(owner)
        ledger.close()
        other.close()
