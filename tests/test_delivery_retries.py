"""Delivery that does not give up quietly: transient failures are retried within the run (a 451 greylisting
answer, a Slack 500), what stays pending makes the run fail and is pointed at by every later run and by
`digest status` until `digest resend --pending` sends it; a refusal fixed since is sent by `digest resend
--failed`; Slack's Retry-After is capped and logged. The real smtplib, slack-sdk and Feishu webhook against
the local servers in tests/servers."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from flows.cli import app
from prdigest.deliver.run import Outcome, deliver
from prdigest.deliver.slack import SlackChannel
from prdigest.readers.file import Reader
from tests.conftest import SAMPLE
from tests.delivery_support import planned, race_edition
from tests.factories import open_ledger
from tests.servers.feishu_server import FeishuServer
from tests.servers.slack_server import SlackServer
from tests.servers.smtp_server import SmtpServer
from tests.test_delivery import PASSWORD, SENDER, TOKEN, smtp_channel

READERS = """readers:
  - {id: ana, name: Ana, email: ana@example.com}
  - {id: bo, name: Bo, email: bo@example.com}
"""


def _retry(attempts: int = 2, delay: float = 0.2):
    from prdigest.deliver.run import Retry

    return Retry(attempts=attempts, delay=delay)


def test_a_greylisted_reader_is_sent_by_the_runs_own_retry(tmp_path: Path, caplog) -> None:
    """Failed before the fix: Bo's row stayed pending after the run (nothing retried it)."""
    ed = race_edition()
    readers = [Reader(id="ana", name="Ana", email="ana@example.com"), Reader(id="bo", name="Bo", email="bo@example.com")]
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        smtp.greylist["bo@example.com"] = 1  # 451 once, accepted when tried again
        ledger = open_ledger(tmp_path / "state.sqlite")
        with caplog.at_level(logging.WARNING, logger="prdigest.deliver.run"):
            report = deliver(ed.id, planned(ed, readers, ("email",), sender=SENDER), {"email": smtp_channel(smtp)},
                             ledger, retry=_retry())
        rows = ledger.rows(ed.key)
        ledger.close()
    assert [(r.reader, r.outcome) for r in report.results] == [("ana", Outcome.SENT), ("bo", Outcome.SENT)]
    assert sorted(a for m in smtp.messages for a in m.rcpt_tos) == ["ana@example.com", "bo@example.com"]
    assert rows[("bo", "email")].status == "sent" and rows[("bo", "email")].attempts == 2
    (line,) = [r.getMessage() for r in caplog.records if "trying again" in r.getMessage()]
    assert "1 delivery left pending" in line and "451 4.7.1 greylisted" in line and "pass 2 of 3" in line


def test_a_slack_500_is_retried_and_the_thread_is_posted_once(tmp_path: Path) -> None:
    """Failed before the fix: the 500 left the row pending for good (rc 0)."""
    ed = race_edition()
    readers = [Reader(id="kern", name="Kernels", slack="#vllm-kernels")]
    with SlackServer(token=TOKEN) as slack:
        slack.fail_http("chat.postMessage", times=1)
        ledger = open_ledger(tmp_path / "state.sqlite")
        report = deliver(ed.id, planned(ed, readers, ("slack",)),
                         {"slack": SlackChannel(token=SecretStr(TOKEN), base_url=slack.url)}, ledger,
                         retry=_retry())
        ledger.close()
        assert [r.outcome for r in report.results] == [Outcome.SENT]
        parents = [m for m in slack.posts() if "thread_ts" not in m]
        assert len(parents) == 1 and [c.status for c in slack.calls if c.method == "chat.postMessage"][0] == 500


def test_still_pending_after_the_retries_stays_pending_with_its_reason(tmp_path: Path) -> None:
    ed = race_edition()
    readers = [Reader(id="bo", name="Bo", email="bo@example.com")]
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        smtp.defer.add("bo@example.com")
        ledger = open_ledger(tmp_path / "state.sqlite")
        started = time.monotonic()
        report = deliver(ed.id, planned(ed, readers, ("email",), sender=SENDER), {"email": smtp_channel(smtp)},
                         ledger, retry=_retry(attempts=2, delay=0.1))
        took = time.monotonic() - started
        row = ledger.rows(ed.key)[("bo", "email")]
        ledger.close()
    assert [r.outcome for r in report.results] == [Outcome.PENDING] and "451" in report.pending[0].detail
    assert row.status == "pending" and row.attempts == 3 and "451" in row.error
    assert 0.3 <= took < 10  # waited 0.1 s, then 0.2 s: bounded


def test_slack_retry_after_is_capped_and_every_wait_is_logged(tmp_path: Path, caplog) -> None:
    """Failed before the fix: a Retry-After of 120 s was slept through in silence."""
    ed = race_edition()
    readers = [Reader(id="kern", name="Kernels", slack="#vllm-kernels")]
    with SlackServer(token=TOKEN) as slack:
        channel = SlackChannel(token=SecretStr(TOKEN), base_url=slack.url, max_retry_after=2)
        slack.rate_limit("chat.postMessage", times=1, retry_after=1)  # waited, with a line
        ledger = open_ledger(tmp_path / "state.sqlite")
        with caplog.at_level(logging.WARNING, logger="prdigest.deliver.slack"):
            first = deliver(ed.id, planned(ed, readers, ("slack",)), {"slack": channel}, ledger)
        assert [r.outcome for r in first.results] == [Outcome.SENT]
        assert any("waiting 1 s (Retry-After)" in r.getMessage() for r in caplog.records)
        caplog.clear()
        later = race_edition().model_copy(update={"since": ed.since.replace(day=ed.since.day + 7),
                                                  "until": ed.until.replace(day=ed.until.day + 7)})
        slack.rate_limit("chat.postMessage", times=1, retry_after=120)  # over the cap: not waited
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="prdigest.deliver.slack"):
            second = deliver(later.id, planned(later, readers, ("slack",)),
                             {"slack": SlackChannel(token=SecretStr(TOKEN), base_url=slack.url, max_retry_after=2)},
                             ledger)
        assert time.monotonic() - started < 10
        ledger.close()
    assert [r.outcome for r in second.results] == [Outcome.PENDING] and "ratelimited" in second.pending[0].detail
    assert any("asks to wait 120 s (Retry-After), more than the 2 s" in r.getMessage() for r in caplog.records)


@pytest.fixture
def mail(tmp_path: Path):
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    with SmtpServer(tmp_path / "tls") as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": SENDER, "SSL_CERT_FILE": str(smtp.cert),
               "DIGEST_UNSUBSCRIBE_URL": "https://example.com/u/{reader}", "DIGEST_DELIVERY_RETRIES": "1",
               "DIGEST_DELIVERY_RETRY_DELAY": "0.1", "COLUMNS": "300"}

        def run(since: str, until: str):
            return CliRunner().invoke(app, [
                "run", "--source", f"jsonl:{SAMPLE}", "--since", since, "--until", until, "--deliver", "smtp",
                "--readers", str(tmp_path / "readers.yaml"), "--out", str(tmp_path / f"out-{since}"),
                "--state", str(tmp_path / "state.sqlite"), "--language", "en"], env=env)

        yield tmp_path, smtp, env, run


def test_a_run_that_leaves_rows_pending_fails_and_every_later_run_points_at_them(mail) -> None:
    """Failed before the fix: rc 0, and the next week's run said nothing of the reader who lost a week."""
    root, smtp, env, run = mail
    smtp.defer.add("bo@example.com")
    first = run("2026-11-16", "2026-11-17")
    said = " ".join(first.output.split())
    assert first.exit_code == 1, said
    assert "bo (email) stays pending after every retry" in said
    assert "1 message stayed pending after every retry of this run" in said
    assert "digest resend 'vllm-project/vllm 2026-11-16..2026-11-17' --pending" in said
    assert [a for m in smtp.messages for a in m.rcpt_tos] == ["ana@example.com"]
    # The next week's run (another edition of the repo) points at it, and so does digest status.
    smtp.defer.clear()
    second = run("2026-11-17", "2026-11-18")
    said = " ".join(second.output.split())
    assert "vllm-project/vllm 2026-11-16..2026-11-17: 1 message still pending from an earlier run" in said, said
    status = CliRunner().invoke(app, ["status", "vllm-project/vllm 2026-11-17..2026-11-18", "--state",
                                      str(root / "state.sqlite")], env={"COLUMNS": "300"})
    assert "vllm-project/vllm 2026-11-16..2026-11-17 (another edition of this repo) has 1 message still pending" \
        in " ".join(status.output.split())
    earlier = CliRunner().invoke(app, ["status", "vllm-project/vllm 2026-11-16..2026-11-17", "--state",
                                       str(root / "state.sqlite")], env={"COLUMNS": "300"})
    assert "1 pending: no run sends them by itself" in " ".join(earlier.output.split())
    # digest resend --pending sends it, once.
    before = len(smtp.messages)
    args = ["resend", "vllm-project/vllm 2026-11-16..2026-11-17", "--pending", "--readers",
            str(root / "readers.yaml"), "--state", str(root / "state.sqlite")]
    resent = CliRunner().invoke(app, args, env=env)
    assert resent.exit_code == 0, resent.output
    assert "bo (email) to bo@example.com: resent" in resent.output
    assert [a for m in smtp.messages[before:] for a in m.rcpt_tos] == ["bo@example.com"]
    again = CliRunner().invoke(app, args, env=env)
    assert again.exit_code == 0 and "nothing pending to resend" in again.output
    third = run("2026-11-18", "2026-11-19")
    assert "still pending" not in third.output
    # A reader who unsubscribed since is not sent a pending row: the readers' own choices apply to resend too.
    smtp.defer.add("bo@example.com")
    fourth = run("2026-11-19", "2026-11-20")
    assert fourth.exit_code == 1
    from prdigest.readers.selfservice import ReaderChoices
    from prdigest.state.store import open_store

    with open_store(root / "state.sqlite") as store:
        ReaderChoices(store).set_unsubscribed("vllm-project/vllm", "bo", True, "email")
    smtp.defer.clear()
    before = len(smtp.messages)
    skipped = CliRunner().invoke(app, [*args[:1], "vllm-project/vllm 2026-11-19..2026-11-20", *args[2:]], env=env)
    assert "bo (email): not in the readers file any more, unsubscribed from it" in " ".join(skipped.output.split())
    assert len(smtp.messages) == before


def test_a_feishu_refusal_fixed_since_is_sent_by_resend_failed(tmp_path: Path) -> None:
    """Failed before the fix: a signature refusal was failed for good, and no command sent it once fixed."""
    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: kern, name: Kernels, feishu: kernels-group}\n"
                                           "  - {id: all, name: All, feishu: all-group}\n", encoding="utf-8")
    with FeishuServer() as feishu:
        url = feishu.add_bot("kernels-group", secret="the-right-s3cret")
        env = {"DIGEST_FEISHU_KERNELS_GROUP_URL": url, "DIGEST_FEISHU_KERNELS_GROUP_SECRET": "a-wrong-s3cret",
               "DIGEST_FEISHU_ALL_GROUP_URL": feishu.add_bot("all-group"), "COLUMNS": "300"}
        args = ["--readers", str(tmp_path / "readers.yaml"), "--state", str(tmp_path / "state.sqlite")]
        first = CliRunner().invoke(app, ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until",
                                         "2026-11-17", "--deliver", "feishu", "--out", str(tmp_path / "out"),
                                         "--language", "en", *args], env=env)
        assert first.exit_code == 0, first.output  # failed for good is not pending: the run does not fail
        assert "kern (feishu) failed" in " ".join(first.output.split()) and not feishu.posts("kernels-group")
        edition = "vllm-project/vllm 2026-11-16..2026-11-17"
        status = CliRunner().invoke(app, ["status", edition, "--state", str(tmp_path / "state.sqlite")],
                                    env={"COLUMNS": "300"})
        assert f"digest resend '{edition}' --failed" in " ".join(status.output.split())
        fixed = {**env, "DIGEST_FEISHU_KERNELS_GROUP_SECRET": "the-right-s3cret"}
        resent = CliRunner().invoke(app, ["resend", edition, "--failed", "--reader", "kern", *args], env=fixed)
        assert resent.exit_code == 0, resent.output
        assert "kern (feishu) to kernels-group: resent" in resent.output
        assert feishu.posts("kernels-group")
        ledger = open_ledger(tmp_path / "state.sqlite")
        (key,) = ledger.editions()
        assert {k: r.status for k, r in ledger.rows(key).items()} == {("all", "feishu"): "sent",
                                                                      ("kern", "feishu"): "sent"}
        ledger.close()


@pytest.mark.prefect
def test_the_flow_run_ends_failed_not_completed_when_rows_stay_pending(prefect_api, mail) -> None:
    """Failed before the fix: the digest-edition flow run was Completed with a reader's row pending."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.sorting import FlowRunSort

    root, smtp, env, run = mail
    smtp.defer.add("bo@example.com")
    result = run("2026-11-20", "2026-11-21")  # PREFECT_API_URL is set: the flow runs the loop
    said = " ".join(result.output.split())
    assert result.exit_code == 1, said
    assert "bo (email) stays pending after every retry" in said  # the summary is still printed
    with get_client(sync_client=True) as client:
        (latest,) = client.read_flow_runs(sort=FlowRunSort.START_TIME_DESC, limit=1)
    assert latest.state is not None and latest.state.type.value == "FAILED", latest.state
    assert "stayed pending after every retry" in (latest.state.message or "")


def test_resend_after_a_reader_changed_their_preferences_sends_the_variant_first_planned(tmp_path: Path) -> None:
    """Failed before the fix: resend planned the variants again over the readers' later digest web choices, so a
    reader who narrowed their subsystems after the run got a message the run never planned for them."""
    from prdigest.readers.selfservice import ReaderChoices
    from prdigest.readers.selfservice.preferences import Preferences
    from prdigest.state.record import resolve
    from prdigest.state.store import open_store

    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: kern, name: Kernels, feishu: kernels-group}\n",
                                           encoding="utf-8")
    with FeishuServer() as feishu:
        url = feishu.add_bot("kernels-group", secret="the-right-s3cret")
        env = {"DIGEST_FEISHU_KERNELS_GROUP_URL": url, "DIGEST_FEISHU_KERNELS_GROUP_SECRET": "a-wrong-s3cret",
               "COLUMNS": "300"}
        args = ["--readers", str(tmp_path / "readers.yaml"), "--state", str(tmp_path / "state.sqlite")]
        first = CliRunner().invoke(app, ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until",
                                         "2026-11-17", "--deliver", "feishu", "--out", str(tmp_path / "out"),
                                         "--language", "en", *args], env=env)
        assert first.exit_code == 0, first.output
        edition = "vllm-project/vllm 2026-11-16..2026-11-17"
        with open_store(tmp_path / "state.sqlite") as store:
            recorded = resolve(store, edition).edition
            (variant,) = recorded.variants
            assert variant.readers == ["kern"] and variant.filter is not None and variant.filter.subsystems == []
            # After the run the reader narrows the digest to one subsystem (digest web's preferences form), one
            # that some of the variant's entries do not have.
            narrow = recorded.published[0].subsystems[0]
            assert any(narrow not in e.subsystems for e in recorded.published)
            ReaderChoices(store).set_preferences("vllm-project/vllm", "kern", Preferences(subsystems=(narrow,)))
        fixed = {**env, "DIGEST_FEISHU_KERNELS_GROUP_SECRET": "the-right-s3cret"}
        resent = CliRunner().invoke(app, ["resend", edition, "--failed", *args], env=fixed)
        assert resent.exit_code == 0, resent.output
        posts = feishu.posts("kernels-group")
        cards = " ".join(str(post) for post in posts)
        # What was resent is the variant the run planned (everything), not one over the reader's new choice.
        assert all(f"/pull/{n}" in cards for n in variant.numbers)
        rendered = sorted(p.name for p in (tmp_path / "out").rglob("*.json") if "feishu" in str(p))
        assert rendered == [f"{variant.key}.json"], rendered
        import json
        planned = json.loads((tmp_path / "out" / "feishu" / f"{variant.key}.json").read_text(encoding="utf-8"))
        sent = [p.get("card", p) for p in posts]
        wanted = [p.get("card", p) for p in (planned if isinstance(planned, list) else [planned])]
        assert [json.dumps(c, sort_keys=True) for c in sent] == [json.dumps(c, sort_keys=True) for c in wanted]
