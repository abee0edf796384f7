"""Delivery by e-mail and Slack, exactly once: the real smtplib against aiosmtpd (AUTH + STARTTLS with a
self-signed certificate made here) and the real slack-sdk WebClient against a local Slack Web API."""

from __future__ import annotations

import logging
import re
import sqlite3
import time
from pathlib import Path

import pytest
from pydantic import SecretStr
from rich.console import Console
from typer.testing import CliRunner

from flows.cli import app
from flows.cli.status_table import status_table
from flows.media import default_media
from prdigest.connect.variants import plan_variants
from prdigest.deliver import Channel, Message
from prdigest.deliver.ledger import Ledger
from prdigest.deliver.run import Delivery, deliver
from prdigest.deliver.slack import SlackChannel
from prdigest.deliver.smtp import SmtpChannel
from prdigest.kernel import progress
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline, EditionSummary
from prdigest.readers.file import Reader
from tests.conftest import SAMPLE
from tests.delivery_support import planned, rendered_variants
from tests.factories import edition, entry, open_ledger
from tests.servers.slack_server import SlackServer
from tests.servers.smtp_server import SmtpServer, free_port

SENDER = "pr-digest <digest@example.com>"
UNSUB = "https://digest.example.com/unsubscribe/{reader}"
PASSWORD = "s3cret-smtp-pa55"
TOKEN = "xoxb-test-t0ken-123"


class Crash(BaseException):
    """Stands for the process dying between two messages (not an Exception: nothing may swallow it)."""


# -- fixtures and helpers -------------------------------------------------------------------------------

@pytest.fixture
def smtp(tmp_path: Path):
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as server:
        yield server


@pytest.fixture
def slack():
    with SlackServer(token=TOKEN) as server:
        yield server


@pytest.fixture
def ledger(tmp_path: Path):
    led = open_ledger(tmp_path / "state.sqlite")
    yield led
    led.close()


def smtp_channel(server: SmtpServer, **overrides) -> SmtpChannel:
    kwargs = dict(host="127.0.0.1", port=server.port, security=server.security, user=server.user,
                  password=SecretStr(server.password) if server.user else None, sender=SENDER,
                  ssl_context=server.client_context(), timeout=5)
    kwargs.update(overrides)
    return SmtpChannel(**kwargs)


def slack_channel(server: SlackServer) -> SlackChannel:
    return SlackChannel(token=SecretStr(server.token), base_url=server.url)


def week(n_entries: int = 6) -> Edition:
    subs = [["moe"], ["kernels"], ["docs"], ["kernels", "moe"], ["frontend-api"], ["attention"]]
    verdicts = ["deep-read", "skim", "skip"]
    return edition([entry(100 + i, subs[i % len(subs)], verdicts[i % 3], title=f"PR title {100 + i}")
                    for i in range(n_entries)], language="en")


def plan(ed: Edition, readers: list[Reader], media=("email", "slack")) -> list[Delivery]:
    return planned(ed, readers, media, sender=SENDER, unsubscribe=UNSUB)


def expected_numbers(ed: Edition, reader: Reader) -> set[int]:
    variants, _ = plan_variants(ed, [reader])
    return {e.number for v in variants for e in v.entries}


def pr_links(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"https://github\.com/vllm-project/vllm/pull/(\d+)", text)}


def email_readers(n: int, domain: str = "example.com") -> list[Reader]:
    return [Reader(id=f"r{i}", name=f"Reader {i}", email=f"r{i}@{domain}") for i in range(n)]


# -- e-mail ---------------------------------------------------------------------------------------------

def test_each_reader_gets_their_variant_over_starttls_with_auth_on_one_connection(smtp, ledger) -> None:
    ed = week()
    readers = [
        Reader(id="kern", name="Kernels team", email="kernels@example.com", subsystems=("kernels", "moe"),
               exclude=("docs",)),
        Reader(id="deep", name="林伟", email="lin@example.com", min_verdict="deep-read"),
        Reader(id="all", name="Everyone", email="all@example.com"),
    ]
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)

    assert [r.reader for r in report.sent] == ["kern", "deep", "all"] and not report.failed
    assert len(smtp.messages) == 3 and smtp.sessions == 1
    rows = ledger.rows(ed.key)
    for reader in readers:
        (received,) = smtp.to(reader.email)
        assert received.authenticated and received.tls and received.mail_from == "digest@example.com"
        msg = received.message
        want = expected_numbers(ed, reader)
        assert msg["From"] == SENDER
        assert msg["To"] == f"{reader.name} <{reader.email}>"
        assert "vllm-project/vllm" in msg["Subject"] and ed.week in msg["Subject"]
        deep = sum(1 for e in ed.entries if e.number in want and e.verdict.value == "deep-read")
        assert re.search(rf"\b{deep}\b", msg["Subject"])
        assert msg["Date"] and msg["List-Id"].endswith(">") and "vllm-project-vllm" in msg["List-Id"]
        assert msg["Message-ID"] == rows[(reader.id, "email")].provider_id
        assert msg["List-Unsubscribe"] == f"<https://digest.example.com/unsubscribe/{reader.id}>"
        assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
        assert msg.get_content_type() == "multipart/alternative"
        text, html = (p.get_content() for p in msg.iter_parts())
        assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
        assert pr_links(html) == want and pr_links(text) == want
        assert max(len(line) for line in received.raw.splitlines()) <= 998
    assert len({m.message["Message-ID"] for m in smtp.messages}) == 3


def test_readers_of_one_variant_get_the_same_bytes_as_composing_each_in_full() -> None:
    """The body is encoded once per variant; what each reader receives must not change because of it."""
    from email import policy

    from prdigest.deliver.email_message import build_email, unsubscribe_link

    ed = week()
    readers = email_readers(4)
    ((variant_readers, renderings),) = rendered_variants(ed, readers)
    email = renderings["email"].payload
    deliveries = planned(ed, readers, ("email",), sender=SENDER, unsubscribe=UNSUB)
    assert [d.reader.id for d in deliveries] == [r.id for r in readers] == [r.id for r in variant_readers]
    for delivery in deliveries:
        full = build_email(edition=ed, reader=delivery.reader, subject=email.subject, preheader=email.preheader,
                           html=email.html, text=email.text, sender=SENDER,
                           unsubscribe=unsubscribe_link(UNSUB, delivery.reader))
        ours = delivery.message().payload
        norm = []
        for msg in (ours, full):
            for name in ("Message-ID", "Date"):
                del msg[name]
            raw = msg.as_bytes(policy=policy.SMTP)
            boundary = msg.get_boundary()
            norm.append(raw.replace(boundary.encode(), b"BOUNDARY"))
        assert norm[0] == norm[1]


@pytest.mark.parametrize("security", ["ssl", "none"])
def test_implicit_tls_and_a_plain_local_relay_deliver_too(tmp_path: Path, ledger, security: str) -> None:
    user = "digest-bot" if security == "ssl" else None
    with SmtpServer(tmp_path / "tls", security=security, user=user, password=PASSWORD) as server:
        channel = smtp_channel(server)
        channel.check()
        ed = week()
        report = deliver(ed.id, plan(ed, email_readers(2)), {"email": channel}, ledger)
    assert len(report.sent) == 2 and len(server.messages) == 2
    assert all(m.tls == (security == "ssl") and m.authenticated == bool(user) for m in server.messages)


def test_crash_after_k_of_n_then_rerun_gives_every_recipient_exactly_one_copy(smtp, slack, tmp_path) -> None:
    ed = week()
    readers = email_readers(5) + [Reader(id="chan", name="Kernels", slack="#vllm-kernels"),
                                  Reader(id="dm", name="Lin", slack="U0TESTUSER1", email="lin@example.com")]
    state = tmp_path / "state.sqlite"

    def crash_after(k: int):
        def hook(done: int, total: int) -> None:
            if done == k:
                raise Crash
        return hook

    ledger = open_ledger(state)
    with pytest.raises(Crash):
        deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp), "slack": slack_channel(slack)},
                ledger, progress=crash_after(3))
    ledger.close()
    assert len(smtp.messages) + len({m["ts"] for m in slack.posts() if "thread_ts" not in m}) == 3

    ledger = open_ledger(state)  # a new process: a new connection to the same state file
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp), "slack": slack_channel(slack)},
                     ledger)
    assert len(report.already) == 3 and len(report.sent) == 5 and not report.pending and not report.failed
    for reader in readers:
        if reader.email:
            assert len(smtp.to(reader.email)) == 1, reader.id
    parents = [m for m in slack.posts() if "thread_ts" not in m]
    assert sorted(m["requested_channel"] for m in parents) == ["#vllm-kernels", "D0TESTUSER1"]
    rows = ledger.rows(ed.key)
    assert {r.status for r in rows.values()} == {"sent"} and {r.attempts for r in rows.values()} == {1}
    # A third run has nothing left to do.
    again = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)
    assert not again.sent and len(again.already) == 8 and len(smtp.messages) == 6
    ledger.close()


def test_smtp_down_for_the_first_run_leaves_everything_pending_then_the_next_run_sends_it(tmp_path, ledger) -> None:
    ed = week()
    readers = email_readers(4)
    port = free_port()  # nothing listens here yet
    server = SmtpServer(tmp_path / "tls", password=PASSWORD, port=port)
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(server)}, ledger)
    assert not report.sent and not report.failed and len(report.pending) == 4
    rows = ledger.rows(ed.key)
    assert {r.status for r in rows.values()} == {"pending"}
    assert all("cannot connect" in (r.error or "") for r in rows.values())
    # Once the channel is down, the rest are not even tried (attempted once, not four times).
    assert sum(r.attempts for r in rows.values()) == 1

    with server:
        report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(server)}, ledger)
        assert len(report.sent) == 4 and len(server.messages) == 4 and server.sessions == 1
    assert {r.status for r in ledger.rows(ed.key).values()} == {"sent"}


def test_one_invalid_address_fails_that_reader_and_the_rest_are_sent(smtp, ledger) -> None:
    ed = week()
    readers = email_readers(3) + [Reader(id="bad", name="Gone", email="gone@example.com")] + [
        Reader(id="r9", name="Reader 9", email="r9@example.com")]
    smtp.reject.add("gone@example.com")
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)
    assert [r.reader for r in report.failed] == ["bad"] and len(report.sent) == 4
    row = ledger.rows(ed.key)[("bad", "email")]
    assert row.status == "failed" and "550" in row.error and "gone@example.com" in row.error
    assert smtp.sessions == 1  # the refusal did not cost the session
    # A re-run does not retry a permanent failure...
    again = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)
    assert not again.sent and ledger.rows(ed.key)[("bad", "email")].attempts == 1
    # ...until the readers file gives that reader another address.
    fixed = readers[:3] + [Reader(id="bad", name="Gone", email="new@example.com"), readers[4]]
    third = deliver(ed.id, plan(ed, fixed), {"email": smtp_channel(smtp)}, ledger)
    assert [r.reader for r in third.sent] == ["bad"] and len(smtp.to("new@example.com")) == 1


def test_a_4xx_reply_keeps_the_message_pending_and_the_retry_reuses_its_message_id(smtp, ledger) -> None:
    ed = week()
    readers = email_readers(2)
    smtp.defer.add("r1@example.com")
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)
    assert len(report.sent) == 1 and [r.reader for r in report.pending] == ["r1"]
    row = ledger.rows(ed.key)[("r1", "email")]
    assert row.status == "pending" and "451" in row.error and row.message_id
    smtp.defer.clear()
    deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp)}, ledger)
    (received,) = smtp.to("r1@example.com")
    assert received.message["Message-ID"] == row.message_id == ledger.rows(ed.key)[("r1", "email")].provider_id


def test_a_dropped_connection_is_reopened_and_nothing_is_lost(smtp) -> None:
    ed = week()
    deliveries = plan(ed, email_readers(4), media=("email",))
    channel = smtp_channel(smtp)
    channel.check()
    ids = [channel.push(d.message()) for d in deliveries[:2]]
    smtp.drop_connections()
    time.sleep(0.1)
    ids += [channel.push(d.message()) for d in deliveries[2:]]
    channel.close()
    channel.close()  # safe twice
    assert len(smtp.messages) == 4 and channel.connections == 2 and smtp.sessions == 2
    assert sorted(ids) == sorted(m.message["Message-ID"] for m in smtp.messages)


def test_an_idle_session_the_server_timed_out_is_probed_and_replaced(tmp_path) -> None:
    with SmtpServer(tmp_path / "tls", password=PASSWORD, idle_timeout=0.3) as server:
        channel = smtp_channel(server, idle_probe=0.1)
        deliveries = plan(week(), email_readers(2), media=("email",))
        channel.push(deliveries[0].message())
        time.sleep(0.6)
        channel.push(deliveries[1].message())
        channel.close()
    # Each message once, and the dead session replaced (a loaded machine may let a session idle out mid-way
    # once more, hence at least two connections rather than exactly two).
    assert len(server.messages) == 2 and len({m.rcpt_tos[0] for m in server.messages}) == 2
    assert channel.connections >= 2


def test_an_edition_with_no_approved_entries_sends_nothing(smtp, slack, ledger) -> None:
    ed = edition([entry(1, ["moe"], "deep-read", status="rejected"), entry(2, ["kernels"], status="draft")])
    readers = email_readers(2) + [Reader(id="chan", name="C", slack="#vllm-kernels")]
    deliveries = plan(ed, readers)
    report = deliver(ed.id, deliveries, {"email": smtp_channel(smtp), "slack": slack_channel(slack)}, ledger)
    assert deliveries == [] and not report.sent and not report.pending
    assert smtp.messages == [] and slack.calls == [] and ledger.rows(ed.key) == {}


def test_the_outbox_never_marks_ledger_rows_sent(tmp_path, ledger) -> None:
    from prdigest.deliver.outbox import OutboxChannel

    ed = week()
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    with pytest.raises(ValueError, match="outbox"):
        deliver(ed.id, plan(ed, email_readers(1)), {"email": outbox}, ledger)
    assert ledger.rows(ed.key) == {} and not (tmp_path / "outbox").exists()


class _WatchedOutbox:
    """The real outbox channel, noting each row's ledger status (read back from the database) as each file is
    about to be written; ``crash_at``: the push at which the deliverer stops dead (a KeyboardInterrupt)."""

    def __init__(self, outbox, ledger: Ledger, key: str, crash_at: int | None = None) -> None:
        self.outbox, self.ledger, self.key, self.crash_at = outbox, ledger, key, crash_at
        self.name, self.batches, self.seen = outbox.name, outbox.batches, []

    def push(self, message: Message, parts=None) -> str:  # the Channel protocol
        self.seen.append({r: (row.status, row.push_started_at is not None)
                          for (r, _), row in self.ledger.rows(self.key).items()})
        if len(self.seen) == self.crash_at:
            raise KeyboardInterrupt
        return self.outbox.push(message, parts)

    def check(self) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def _outbox_run(tmp_path: Path, ledger: Ledger, ed: Edition, crash_at: int | None = None,
                readers: list[Reader] | None = None):
    from prdigest.deliver.outbox import OutboxChannel
    from prdigest.deliver.run import outbox_routes

    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    channel = _WatchedOutbox(outbox, ledger, ed.key, crash_at)
    deliveries, channels = outbox_routes(plan(ed, readers or email_readers(5), media=("email",)),
                                         {"email": channel})
    return channel, (lambda: deliver(ed.id, deliveries, channels, ledger))


def test_outbox_rows_begin_together_and_are_recorded_sent_together_once_their_files_are_written(
        tmp_path, ledger) -> None:
    ed = week()
    channel, run = _outbox_run(tmp_path, ledger, ed)
    report = run()
    assert len(report.sent) == 5 and len(list((tmp_path / "outbox").iterdir())) == 5
    # Every claimed row's push was recorded as begun before the first file; none was recorded sent before the
    # last file of the batch was written (one commit for the starts, one for the outcomes).
    assert all(seen == {f"r{i}": ("sending", True) for i in range(5)} for seen in channel.seen)
    assert {row.status for row in ledger.rows(ed.key).values()} == {"sent"}


def test_the_rows_of_small_variants_are_claimed_and_begun_together_in_the_plans_order(tmp_path, ledger) -> None:
    # Five readers, five variants of one reader each: one claim and one batch for all five (not one per variant),
    # and still each variant's messages one after another, in the plan's order.
    ed = week()
    follows = [["moe"], ["kernels"], ["docs"], ["attention"], ["frontend-api"]]
    readers = [Reader(id=f"r{i}", name=f"Reader {i}", email=f"r{i}@example.com", subsystems=s)
               for i, s in enumerate(follows)]
    channel, run = _outbox_run(tmp_path, ledger, ed, readers=readers)
    report = run()
    assert len(report.sent) == 5 and len({r.variant for r in report.sent}) == 5
    assert channel.seen[0] == {f"r{i}": ("sending", True) for i in range(5)}


def test_a_deliverer_stopping_mid_batch_never_shows_an_unwritten_file_sent_nor_loses_a_row(tmp_path, ledger) -> None:
    ed = week()
    channel, run = _outbox_run(tmp_path, ledger, ed, crash_at=3)
    with pytest.raises(KeyboardInterrupt):
        run()
    written = sorted(p.name for p in (tmp_path / "outbox").iterdir())
    assert written == ["r0.eml", "r1.eml"]
    rows = ledger.rows(ed.key)
    # What was written is recorded sent; the rest had begun, so it is not given back as if never tried.
    assert {r: row.status for (r, _), row in rows.items()} == {
        "r0": "sent", "r1": "sent", "r2": "sending", "r3": "sending", "r4": "sending"}
    # The next run finds the stopped deliverer's begun rows uncertain: never resent unasked, never lost.
    channel, run = _outbox_run(tmp_path, ledger, ed)
    report = run()
    assert not report.sent and channel.seen == []
    assert sorted(r.reader for r in report.uncertain) == ["r2", "r3", "r4"]
    assert sorted(r.reader for r in report.already) == ["r0", "r1"]


OUTBOX_READERS = """
readers:
  - {id: kern, name: Kernels team, email: kernels@example.com, min_verdict: skip}
  - {id: all, name: Everyone, email: all@example.com}
"""


@pytest.mark.slow  # two pipeline runs; the rules file alone takes ~1 s to load on a busy machine
def test_outbox_rows_are_the_outboxs_own_so_a_real_run_still_sends_every_message(smtp, tmp_path, monkeypatch) -> None:
    """The outbox goes through the ledger under its own media (``outbox-email``): a real run of the same edition,
    asked for on purpose (``--resend-edition``: the outbox run delivered it), still sends every message."""
    monkeypatch.setenv("SSL_CERT_FILE", str(smtp.cert))
    readers = tmp_path / "readers.yaml"
    readers.write_text(OUTBOX_READERS, encoding="utf-8")
    week_file = tmp_path / "week.jsonl"  # a few PRs of the sample week: drafting all 58 twice takes ~10 s
    week_file.write_text("".join(SAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)[:8]), encoding="utf-8")
    state = tmp_path / "state.sqlite"

    def run(deliver_to: str, out: str, again: bool = False) -> EditionSummary:
        options = RunOptions(source=f"jsonl:{week_file}", deliver=deliver_to, readers=str(readers),
                             out=str(tmp_path / out), resend_edition=again)
        services = build_services(options, _settings(smtp, state=str(state)), default_media())
        try:
            return EditionPipeline(services).run()
        finally:
            services.close()

    dry = run("outbox", "dry")
    assert sorted((r, m) for r, m, _ in dry.sent) == [("all", "outbox-email"), ("kern", "outbox-email")]
    assert smtp.messages == []
    assert sorted(p.name for p in (tmp_path / "dry" / "outbox").iterdir()) == ["all.eml", "kern.eml"]
    assert run("smtp", "real").skipped  # delivered (to the outbox): not run again unless asked
    real = run("smtp", "real", again=True)
    assert sorted(r for r, _, _ in real.sent) == ["all", "kern"] and real.already_sent == 0
    assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == ["all@example.com", "kernels@example.com"]

# -- Slack ----------------------------------------------------------------------------------------------

def test_slack_parent_then_thread_replies_by_name_id_and_dm(slack, ledger) -> None:
    ed = week(60)  # enough entries for several replies of <= 50 blocks
    readers = [Reader(id="name", name="Kernels", slack="#vllm-kernels"),
               Reader(id="cid", name="All", slack="C0DIGESTAL"),
               Reader(id="dm", name="Lin", slack="U0TESTUSER2")]
    deliveries = plan(ed, readers, media=("slack",))
    report = deliver(ed.id, deliveries, {"slack": slack_channel(slack)}, ledger)
    assert len(report.sent) == 3 and not report.failed
    assert [c.body for c in slack.calls if c.method == "conversations.open"] == [{"users": "U0TESTUSER2"}]
    by_reader = {d.reader.id: d for d in deliveries}
    for result in report.sent:
        delivery, ts = by_reader[result.reader], result.detail
        payloads = delivery.message().payload
        channel_id = {"#vllm-kernels": "C0KERNELS1", "C0DIGESTAL": "C0DIGESTAL", "U0TESTUSER2": "D0TESTUSER2"}[
            delivery.reader.slack]
        posts = slack.posts(channel_id)
        assert len(payloads) >= 3 and len(posts) == len(payloads)
        assert posts[0]["ts"] == ts == ledger.rows(ed.key)[delivery.key].provider_id
        assert "thread_ts" not in posts[0] and all(p["thread_ts"] == ts for p in posts[1:])
        for sent, payload in zip(posts, payloads):
            assert sent["text"] == payload["text"] and sent["blocks"] == payload["blocks"]  # verbatim
            assert sent["unfurl_links"] is False and sent["unfurl_media"] is False
            assert not {"thread", "link_names", "parse"} & set(sent)
            assert len(sent["blocks"]) <= 50
    assert all(c.headers["authorization"] == f"Bearer {TOKEN}" for c in slack.calls)


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_slack_rate_limit_is_waited_out_and_the_message_delivered(slack, ledger) -> None:
    ed = week()
    slack.rate_limit("chat.postMessage", times=1, retry_after=1)
    started = time.monotonic()
    deliveries = plan(ed, [Reader(id="c", name="C", slack="#vllm-kernels")])
    report = deliver(ed.id, deliveries, {"slack": slack_channel(slack)}, ledger)
    assert time.monotonic() - started >= 1.0
    assert len(report.sent) == 1 and [c.status for c in slack.calls][:2] == [429, 200]
    assert len(slack.posts()) == len(deliveries[0].message().payload)


def test_channel_not_found_fails_that_reader_and_the_rest_are_sent(slack, ledger) -> None:
    ed = week()
    readers = [Reader(id="gone", name="Gone", slack="#no-such-channel"),
               Reader(id="ok", name="OK", slack="#vllm-kernels")]
    report = deliver(ed.id, plan(ed, readers), {"slack": slack_channel(slack)}, ledger)
    assert [r.reader for r in report.failed] == ["gone"] and [r.reader for r in report.sent] == ["ok"]
    row = ledger.rows(ed.key)[("gone", "slack")]
    assert row.status == "failed" and "channel_not_found" in row.error


def test_a_revoked_token_midway_leaves_the_rest_pending_untried_and_email_goes_on(smtp, slack, ledger) -> None:
    ed = week()
    readers = [Reader(id=f"c{i}", name=f"C{i}", slack="#vllm-kernels", email=f"c{i}@example.com") for i in range(3)]
    slack.fail_next("chat.postMessage", "token_revoked", after=len(plan(ed, readers[:1], ("slack",))[0]
                                                                    .message().payload))
    report = deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp), "slack": slack_channel(slack)},
                     ledger)
    assert sorted((r.reader, r.medium) for r in report.sent) == [
        ("c0", "email"), ("c0", "slack"), ("c1", "email"), ("c2", "email")]
    rows = ledger.rows(ed.key)
    assert rows[("c1", "slack")].status == rows[("c2", "slack")].status == "pending"
    assert "token_revoked" in rows[("c1", "slack")].error and rows[("c2", "slack")].attempts == 0
    assert rows[("c2", "slack")].error.startswith("not attempted:")


def test_progress_is_reported_after_each_delivery_tried(smtp, ledger) -> None:
    """The loop reports (done, total) per message; the flow's deliver task relays it as the "deliver" step
    (pinned by test_run_delivers_each_reader_once_across_reruns)."""
    seen: list[tuple[int, int]] = []
    ed = week()
    deliver(ed.id, plan(ed, email_readers(3)), {"email": smtp_channel(smtp)}, ledger,
            progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)] and len(smtp.messages) == 3
    # A re-run counts only what it still has to try: nothing here.
    deliver(ed.id, plan(ed, email_readers(3)), {"email": smtp_channel(smtp)}, ledger,
            progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_more_than_50_blocks_is_refused_as_invalid_blocks(slack) -> None:
    reader = Reader(id="c", name="C", slack="#vllm-kernels")
    blocks = [{"type": "divider"}] * 51
    from prdigest.deliver.failure import RecipientRejected

    with pytest.raises(RecipientRejected, match="invalid_blocks"):
        slack_channel(slack).push(Message(reader=reader, variant="v", medium="slack", recipient="#vllm-kernels",
                                          payload=[{"text": "x", "blocks": blocks}]))
    assert slack.posts() == []


def test_a_thread_broken_off_midway_resumes_without_posting_the_parent_again(slack, ledger) -> None:
    ed = week(60)
    deliveries = plan(ed, [Reader(id="c", name="C", slack="#vllm-kernels")])
    n = len(deliveries[0].message().payload)
    channel = slack_channel(slack)
    slack.fail_next("chat.postMessage", "request_timeout", after=1)  # the parent passes, the first reply fails
    report = deliver(ed.id, deliveries, {"slack": channel}, ledger)
    assert [r.reader for r in report.pending] == ["c"] and "request_timeout" in report.pending[0].detail
    row = ledger.rows(ed.key)[("c", "slack")]
    assert row.status == "pending" and row.provider_id and '"done": 1' in row.checkpoint
    report = deliver(ed.id, deliveries, {"slack": slack_channel(slack)}, ledger)
    posts = slack.posts()
    assert len(report.sent) == 1 and len(posts) == n
    assert [p for p in posts if "thread_ts" not in p] == posts[:1]
    assert all(p["thread_ts"] == posts[0]["ts"] for p in posts[1:])



@pytest.mark.parametrize("error", ["internal_error", "fatal_error"])
def test_a_slack_error_that_may_have_posted_is_uncertain_and_not_posted_again(slack, ledger, error: str) -> None:
    # Slack: "It's possible some aspect of the operation succeeded before the error was raised."
    ed = week(3)
    deliveries = plan(ed, [Reader(id="c", name="C", slack="#vllm-kernels")], ("slack",))
    slack.fail_next("chat.postMessage", error)
    report = deliver(ed.id, deliveries, {"slack": slack_channel(slack)}, ledger)
    assert not report.pending and ledger.rows(ed.key)[("c", "slack")].status == "uncertain"
    again = deliver(ed.id, deliveries, {"slack": slack_channel(slack)}, ledger)
    assert not again.sent and slack.posts() == []  # never resent without digest resend --uncertain

# -- configuration and secrets ----------------------------------------------------------------------------

def _settings(smtp: SmtpServer | None = None, slack: SlackServer | None = None, **extra) -> Settings:
    values: dict = {}
    if smtp is not None:
        values.update(smtp_host="127.0.0.1", smtp_port=smtp.port, smtp_user=smtp.user,
                      smtp_password=SecretStr(smtp.password), smtp_security="starttls", from_address=SENDER)
    if slack is not None:
        values.update(slack_bot_token=SecretStr(slack.token), slack_base_url=slack.url)
    values.update(extra)
    return Settings(**values)


def preflight(deliver_to: str, settings: Settings, out: Path) -> dict[str, Channel]:
    """The run's channels as the flow gets them: built once from the settings (a missing one stops the
    run here), then checked (connect and authenticate) before anything is drafted."""
    services = build_services(RunOptions(deliver=deliver_to, out=str(out)), settings, default_media())
    services.check_channels()
    return services.channels


@pytest.mark.parametrize("deliver_to, change, expected", [
    ("smtp", {"smtp_host": None}, "DIGEST_SMTP_HOST is not set"),
    ("smtp", {"from_address": None}, "DIGEST_FROM is not set"),
    ("smtp", {"from_address": "digest at example dot com"}, "is not a valid From address"),
    ("smtp", {"from_address": "x@y.com\r\nBcc: evil@example.com"}, "is not a valid From address"),
    ("smtp", {"smtp_password": SecretStr("wrong-pa55word")}, "rejected the login of user 'digest-bot'"),
    ("smtp", {"smtp_password": None}, "DIGEST_SMTP_PASSWORD is not set"),
    ("smtp", {"smtp_user": None}, "DIGEST_SMTP_USER is not"),
    ("smtp", {"smtp_security": "ssl"}, "TLS failed"),
    ("smtp", {"smtp_port": 1}, "cannot connect"),
    ("smtp", {"trust": False}, "certificate is not trusted"),
    ("slack", {"slack_bot_token": None}, "SLACK_BOT_TOKEN is not set"),
    ("slack", {"slack_bot_token": SecretStr("xoxb-wrong-t0ken")}, "rejected SLACK_BOT_TOKEN (invalid_auth)"),
    ("slack", {"slack_base_url": "http://127.0.0.1:1/api/"}, "cannot connect"),
    ("smtp,slack", {"slack_bot_token": SecretStr("xoxb-wrong-t0ken")}, "rejected SLACK_BOT_TOKEN"),
])
@pytest.mark.slow  # among the slowest (pytest --durations)
def test_bad_configuration_stops_before_the_first_message_with_one_line(
        smtp, slack, tmp_path, monkeypatch, deliver_to, change, expected) -> None:
    change = dict(change)
    if change.pop("trust", True):
        monkeypatch.setenv("SSL_CERT_FILE", str(smtp.cert))  # how an operator trusts a private CA
    settings = _settings(smtp, slack, **change)
    with pytest.raises(ConfigError) as caught:
        preflight(deliver_to, settings, tmp_path)
    message = str(caught.value)
    assert expected in message and "\n" not in message
    for secret in (PASSWORD, TOKEN, "wrong-pa55word", "xoxb-wrong-t0ken"):
        assert secret not in message
    assert smtp.messages == [] and not [c for c in slack.calls if c.method == "chat.postMessage"]


def test_preflight_checks_and_returns_both_channels(smtp, slack, tmp_path, monkeypatch, ledger) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(smtp.cert))
    channels = preflight("smtp,slack", _settings(smtp, slack), tmp_path)
    assert set(channels) == {"email", "slack"} and [c.method for c in slack.calls] == ["auth.test"]
    ed = week()
    readers = [Reader(id="both", name="Both", email="both@example.com", slack="#digest-all")]
    report = deliver(ed.id, plan(ed, readers), channels, ledger)
    assert sorted(r.medium for r in report.sent) == ["email", "slack"]


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_secrets_never_reach_logs_errors_or_the_ledger(smtp, slack, tmp_path, caplog, monkeypatch) -> None:
    caplog.set_level(logging.DEBUG)
    logging.getLogger("prdigest.deliver.slack.sdk").setLevel(logging.DEBUG)
    monkeypatch.setenv("SSL_CERT_FILE", str(smtp.cert))
    state = tmp_path / "state.sqlite"
    ledger = open_ledger(state)
    ed = week()
    smtp.reject.add("gone@example.com")
    readers = [Reader(id="ok", name="OK", email="ok@example.com", slack="#vllm-kernels"),
               Reader(id="gone", name="Gone", email="gone@example.com", slack="#nowhere")]
    channels = preflight("smtp,slack", _settings(smtp, slack), tmp_path)
    report = deliver(ed.id, plan(ed, readers), channels, ledger)
    assert len(report.sent) == 2 and len(report.failed) == 2
    errors = [str(e) for e in _config_errors(smtp, slack, tmp_path)]
    ledger.close()
    dump = "\n".join(str(row) for row in sqlite3.connect(state).execute("SELECT * FROM delivery_ledger"))
    console = Console(record=True, width=250)
    console.print(status_table(state, ed.key))
    everything = "\n".join([caplog.text, dump, console.export_text(), *errors,
                            *(r.detail for r in report.failed)])
    assert "chat.postMessage" in caplog.text  # slack-sdk's debug log was captured...
    for secret in (PASSWORD, TOKEN, "wrong-pa55word", "xoxb-wrong-t0ken"):
        assert secret not in everything  # ...and holds no secret


def _config_errors(smtp, slack, tmp_path):
    for change in ({"smtp_password": SecretStr("wrong-pa55word")}, {"slack_bot_token": SecretStr("xoxb-wrong-t0ken")}):
        try:
            preflight("smtp,slack", _settings(smtp, slack, **change), tmp_path)
        except ConfigError as exc:
            yield exc


# -- the ledger as a table ----------------------------------------------------------------------------------

def test_status_table_shows_each_reader_and_medium(smtp, slack, tmp_path) -> None:
    state = tmp_path / "state.sqlite"
    ledger = open_ledger(state)
    ed = week()
    smtp.reject.add("gone@example.com")
    readers = [Reader(id="ok", name="OK", email="ok@example.com", slack="#vllm-kernels"),
               Reader(id="gone", name="Gone", email="gone@example.com")]
    deliver(ed.id, plan(ed, readers), {"email": smtp_channel(smtp), "slack": slack_channel(slack)}, ledger)
    ledger.close()
    console = Console(record=True, width=250)
    console.print(status_table(state, ed.name))  # the name works as well as the key
    out = console.export_text()
    assert f"{ed.key}: 2 sent, 1 failed, 0 pending" in out
    assert re.search(r"ok\s+│\s+email\s+│\s+ok@example.com.*sent", out)
    assert re.search(r"gone\s+│\s+email.*failed.*550", out)
    console = Console(record=True, width=250)
    console.print(status_table(state, "other-2026-W01"))
    assert "no deliveries recorded for other-2026-W01" in console.export_text()
    with pytest.raises(ConfigError, match="no state database"):
        status_table(tmp_path / "missing.sqlite", ed.key)


# -- a real crash: the process is killed (no finally, no close) after k of n messages ------------------------

_CHILD = """
import os, signal, sys
from pathlib import Path
from pydantic import SecretStr
from prdigest.deliver.ledger import Ledger
from prdigest.deliver.run import deliver
from prdigest.deliver.smtp import SmtpChannel
from tests.test_delivery import SENDER, email_readers, plan, week
import ssl
state, port, cert, password, k = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
channel = SmtpChannel(host="127.0.0.1", port=port, user="digest-bot", password=SecretStr(password), sender=SENDER,
                      ssl_context=ssl.create_default_context(cafile=cert), timeout=5)
def die(done, total):
    if done == k:
        os.kill(os.getpid(), signal.SIGKILL)
ed = week()
from tests.factories import open_ledger
deliver(ed.id, plan(ed, email_readers(6)), {"email": channel}, open_ledger(Path(state)), progress=die)
"""


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_a_killed_process_resumes_without_sending_anything_twice(smtp, tmp_path) -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    state = tmp_path / "state.sqlite"
    child = subprocess.run([sys.executable, "-c", _CHILD, str(state), str(smtp.port), str(smtp.cert), PASSWORD, "4"],
                           cwd=root, capture_output=True, timeout=60)
    assert child.returncode == -9, child.stderr.decode()[-2000:]
    assert len(smtp.messages) == 4
    ledger = open_ledger(state)
    ed = week()
    report = deliver(ed.id, plan(ed, email_readers(6)), {"email": smtp_channel(smtp)}, ledger)
    assert len(report.already) == 4 and len(report.sent) == 2
    assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == [f"r{i}@example.com" for i in range(6)]
    ledger.close()


# -- `digest run … --deliver smtp,slack` end to end (the flow, the CLI, both servers, the ledger) --------------

FLOW_READERS = """
readers:
  - {id: kern, name: Kernels team, email: kernels@example.com, slack: "#vllm-kernels", subsystems: [kernels, moe]}
  - {id: lin, name: Lin Wei, email: lin@example.com, slack: U0TESTUSER1}
  - {id: gone, name: Gone, email: gone@example.com, slack: "#no-such-channel"}
"""


@pytest.mark.prefect
def test_run_delivers_each_reader_once_across_reruns(prefect_api, tmp_path: Path) -> None:
    readers = tmp_path / "readers.yaml"
    readers.write_text(FLOW_READERS, encoding="utf-8")
    with SmtpServer(tmp_path / "tls") as smtp, SlackServer() as slack:
        smtp.reject.add("gone@example.com")
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": "pr-digest <digest@example.com>",
               "SLACK_BOT_TOKEN": slack.token, "DIGEST_SLACK_BASE_URL": slack.url,
               "DIGEST_UNSUBSCRIBE_URL": "https://digest.example.com/u/{reader}", "SSL_CERT_FILE": str(smtp.cert)}
        args = ["run", "--source", f"jsonl:{SAMPLE}", "--deliver", "smtp,slack", "--readers", str(readers),
                "--out", str(tmp_path / "out"), "--state", str(tmp_path / "state.sqlite")]
        steps: list[tuple[str, int, int]] = []
        with progress.reporting(lambda step, done, total: steps.append((step, done, total))):
            first = CliRunner().invoke(app, args, env=env)
        assert first.exit_code == 0, first.output
        # The flow relays the loop's progress as the "deliver" step (the CLI's progress bar).
        assert [s for s in steps if s[0] == "deliver"] == [("deliver", i, 6) for i in range(1, 7)]
        assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == ["kernels@example.com", "lin@example.com"]
        parents = [m for m in slack.posts() if "thread_ts" not in m]
        assert sorted(m["channel"] for m in parents) == ["C0KERNELS1", "D0TESTUSER1"]
        steps.clear()
        with progress.reporting(lambda step, done, total: steps.append((step, done, total))):
            second = CliRunner().invoke(app, args, env=env)
        assert second.exit_code == 0, second.output
        assert not [s for s in steps if s[0] == "deliver"]  # every row is sent or failed: nothing to try
        assert len(smtp.messages) == 2 and len([m for m in slack.posts() if "thread_ts" not in m]) == 2
        ledger = open_ledger(tmp_path / "state.sqlite")
        (edition,) = ledger.editions()
        rows = ledger.rows(edition)
        ledger.close()
        assert {k: r.status for k, r in rows.items()} == {
            ("gone", "email"): "failed", ("gone", "slack"): "failed", ("kern", "email"): "sent",
            ("kern", "slack"): "sent", ("lin", "email"): "sent", ("lin", "slack"): "sent"}
        assert smtp.password not in first.output + second.output and slack.token not in first.output


@pytest.mark.prefect
def test_wrong_password_stops_before_drafting_with_one_line(prefect_api, tmp_path: Path) -> None:
    with SmtpServer(tmp_path / "tls") as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": "not-the-pa55word", "DIGEST_FROM": "digest@example.com",
               "SSL_CERT_FILE": str(smtp.cert)}
        result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{SAMPLE}", "--deliver", "smtp",
                                          "--out", str(tmp_path / "out"), "--state", str(tmp_path / "s.sqlite")],
                                    env=env)
    assert result.exit_code == 2 and "rejected the login of user 'digest-bot'" in result.output
    assert "not-the-pa55word" not in result.output and smtp.messages == []
    assert not (tmp_path / "out" / "digest.json").exists()
