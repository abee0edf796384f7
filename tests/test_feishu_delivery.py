"""Feishu groups through the whole pipeline (EditionPipeline and the real CLI) against a local webhook:
each group gets its readers' entries once, in cards within 20 KB, signed where the bot has a secret; a
re-run sends nothing; a crash mid-thread is settled by the ledger and resumed without repeating a card."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.media import default_media
from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from tests.conftest import ROOT, SAMPLE
from tests.factories import open_ledger
from tests.servers.feishu_server import MAX_BODY, FeishuServer
from tests.test_feishu_cards import SITE, assert_safe_cards, contents

SECRET = "kern-s1gning-secret"
READERS = """
readers:
  - {id: all, name: Everyone, feishu: all-group}
  - {id: kern, name: Kernels team, feishu: kernels-group, subsystems: [kernels, moe], exclude: [docs]}
  - {id: mail, name: Mail only, email: mail@example.com}
"""


@pytest.fixture
def feishu(monkeypatch):
    with FeishuServer() as server:
        monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_URL", server.add_bot("kernels-group", secret=SECRET))
        monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", SECRET)
        monkeypatch.setenv("DIGEST_FEISHU_ALL_GROUP_URL", server.add_bot("all-group"))
        yield server


def _readers(tmp_path: Path, text: str = READERS) -> Path:
    path = tmp_path / "readers.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def _run(tmp_path: Path, readers: Path, source: str = "sample", deliver: str = "feishu"):
    options = RunOptions(source=source, readers=str(readers), out=str(tmp_path / "out"), deliver=deliver,
                         state=str(tmp_path / "state.sqlite"), site_url=SITE)
    services = build_services(options, load_settings(**options.settings_overrides()), default_media())
    try:
        return EditionPipeline(services).run()
    finally:
        services.close()


def shown_numbers(cards: list[dict]) -> list[int]:
    """The entries a group sees (each entry's note line links its PR once: ``· [#123](…)``)."""
    return [int(n) for t in contents(cards) for n in re.findall(r"· \[#(\d+)\]\(https://github", t)]


def test_each_group_gets_its_readers_entries_once_signed_within_20_kb_and_a_rerun_sends_nothing(
        feishu, tmp_path: Path) -> None:
    summary = _run(tmp_path, _readers(tmp_path))
    assert sorted((r, m) for r, m, _ in summary.sent) == [("all", "feishu"), ("kern", "feishu")]
    published = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))["entries"]
    published = [e for e in published if e["status"] != "rejected"]
    everyone, kernels = feishu.posts("all-group"), feishu.posts("kernels-group")
    # Per-reader filtering: the kernels group sees exactly the entries its filter selects.
    want = {e["number"] for e in published if {"kernels", "moe"} & set(e["subsystems"])
            and e["subsystems"][0] != "docs"}  # exclude reads the primary subsystem
    assert sorted(shown_numbers(kernels)) == sorted(want) and want
    assert sorted(shown_numbers(everyone)) == sorted(e["number"] for e in published)
    # A week over 20 KB arrives as several cards, in order, each within the limit; the signed bot checked each.
    assert len(everyone) > 1 and all(c.size <= MAX_BODY and c.code == 0 for c in feishu.calls)
    n = len(everyone)
    assert [c["card"]["header"]["title"]["content"][-len(f"({n}/{n})"):] for c in everyone] == [
        f"({i}/{n})" for i in range(1, n + 1)]
    assert all("sign" in c for c in kernels) and not any("sign" in c for c in everyone)
    # The first card opens with the group's own lede and read-first, as its variant in digest.json has them.
    variants = json.loads((tmp_path / "out" / "digest.json").read_text(encoding="utf-8"))["variants"]
    (mine,) = [v for v in variants if "kern" in v["readers"]]
    texts = contents(kernels[:1])
    (first,) = [t for t in texts if t.startswith("**先读这些**")]
    assert [int(n) for n in re.findall(r"^\d+\. \[#(\d+)\]", first, re.M)] == mine["read_first"] != []
    assert html.unescape(texts[texts.index(first) - 1]) == mine["lede"] != ""
    # What was posted is what the run wrote for the variant (signing aside).
    written = json.loads((tmp_path / "out" / "feishu" / "all.json").read_text(encoding="utf-8"))
    assert everyone == written
    calls = len(feishu.calls)

    again = _run(tmp_path, _readers(tmp_path))
    assert "already delivered" in again.skipped and not again.sent and len(feishu.calls) == calls


def test_a_reader_whose_group_has_no_webhook_stops_the_run_before_anything_is_sent(feishu, tmp_path: Path) -> None:
    readers = _readers(tmp_path, READERS + "  - {id: lost, name: Lost, feishu: lost-group}\n")
    with pytest.raises(ConfigError, match=r"reader 'lost' names Feishu group 'lost-group', but "
                                          r"DIGEST_FEISHU_LOST_GROUP_URL is not set"):
        _run(tmp_path, readers)
    assert feishu.calls == [] and not (tmp_path / "out" / "digest.json").exists()


def test_the_outbox_writes_each_groups_cards_without_a_webhook(tmp_path: Path) -> None:
    summary = _run(tmp_path, _readers(tmp_path, READERS + "  - {id: lost, name: Lost, feishu: lost-group}\n"),
                   deliver="outbox")
    files = sorted(p.name for p in (tmp_path / "out" / "outbox").glob("*.feishu.json"))
    assert files == ["all.feishu.json", "kern.feishu.json", "lost.feishu.json"] and summary.sent
    data = json.loads((tmp_path / "out" / "outbox" / "kern.feishu.json").read_text(encoding="utf-8"))
    assert data["group"] == "kernels-group" and data["requests"][0]["msg_type"] == "interactive"


HOSTILE_PR = {
    "number": 4242, "url": "https://github.com/vllm-project/vllm/pull/4242", "author": "mallory",
    "title": '<at user_id="all">所有人</at> [Kernel] fused MoE @所有人 <at id=all></at>',
    "created_at": "2026-11-16T08:00:00Z", "merged_at": "2026-11-17T08:00:00Z", "labels": ["kernel"],
    "body": "Ping <at id=all></at> and @所有人 ![x](img_key) [click](https://evil.example/a) :OK: **bold** "
            "<font color=red>red</font> in `csrc/moe/<at id=all>.cu`.",
    "files": [{"path": "csrc/moe/fused_moe.cu", "additions": 120, "deletions": 10, "status": "modified"}],
    "additions": 120, "deletions": 10,
    "review_comments": [{"author": "eve", "body": "<at user_id=\"all\">all</at> LGTM [x](https://evil.example)"}],
}


def test_hostile_pr_text_reaches_the_group_as_text(feishu, tmp_path: Path) -> None:
    source = tmp_path / "week.jsonl"
    source.write_text(json.dumps(HOSTILE_PR, ensure_ascii=False) + "\n", encoding="utf-8")
    summary = _run(tmp_path, _readers(tmp_path), source=f"jsonl:{source}")
    assert ("all", "feishu") in {(r, m) for r, m, _ in summary.sent}
    cards = feishu.posts("all-group")
    assert_safe_cards(cards)  # no tag, no @, no link but ours
    shown = html.unescape("\n".join(contents(cards)))
    assert '<at user_id="all">所有人</at>' in shown  # the group reads the title literally


_CHILD = """
import sys
from flows.media import default_media
from prdigest.kernel.config import load_settings
from prdigest.pipeline.edition import EditionPipeline
from prdigest.pipeline.compose import RunOptions, build_services
options = RunOptions(source="sample", readers=sys.argv[1], out=sys.argv[2], deliver="feishu", state=sys.argv[3],
                     site_url="https://digest.example.com/")
EditionPipeline(build_services(options, load_settings(**options.settings_overrides()), default_media())).run()
"""


@pytest.mark.slow
def test_a_crash_mid_thread_is_uncertain_and_a_resend_sends_only_the_remaining_cards(feishu, tmp_path: Path,
                                                                                      monkeypatch) -> None:
    readers, out, state = _readers(tmp_path), tmp_path / "out", tmp_path / "state.sqlite"
    env = {k: v for k, v in os.environ.items() if k.startswith("DIGEST_FEISHU_")}
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(readers), str(out), str(state)], cwd=ROOT,
                             env={**os.environ, **env}, stderr=subprocess.PIPE)

    def kill_at_third_card(bot) -> bool:  # the process dies while the group's third card is on its way
        if bot.group == "all-group" and len(bot.posts) == 2:
            os.kill(child.pid, signal.SIGKILL)
            return True
        return False

    feishu.before = kill_at_third_card
    assert child.wait(timeout=300) == -signal.SIGKILL, child.stderr.read().decode()[-2000:]
    feishu.before = None
    assert len(feishu.posts("all-group")) == 2 and feishu.posts("kernels-group") == []

    # The next run settles the dead deliverer's claims: the thread it had begun is uncertain (its third
    # card may have arrived), the group it had not begun gets its cards; nothing is posted twice.
    again = _run(tmp_path, readers)
    assert [(r, m) for r, m, _ in again.sent] == [("kern", "feishu")]
    assert [(r, m) for r, m, _ in again.uncertain] == [("all", "feishu")] and len(feishu.posts("all-group")) == 2

    from flows.cli import app

    monkeypatch.setenv("DIGEST_SITE_URL", SITE)  # the run's --site-url: the thread resumes as it was rendered
    result = CliRunner().invoke(app, ["resend", "vllm-project/vllm 2026-W47", "--uncertain",
                                      "--readers", str(readers), "--state", str(state)])
    assert result.exit_code == 0, result.output
    cards = feishu.posts("all-group")
    n = len(json.loads((out / "feishu" / "all.json").read_text(encoding="utf-8")))
    assert [c["card"]["header"]["title"]["content"] for c in cards] == [
        f"PR 周报 · vllm-project/vllm · 2026-W47 ({i}/{n})" for i in range(1, n + 1)]  # each card once, in order
    ledger = open_ledger(state)
    (edition,) = ledger.editions()
    rows = ledger.rows(edition)
    ledger.close()
    assert {k: r.status for k, r in rows.items()} == {("all", "feishu"): "sent", ("kern", "feishu"): "sent"}


# -- `digest run --deliver smtp,slack,feishu`: one run, three media, through the real CLI ------------------------

@pytest.mark.prefect
def test_one_cli_run_delivers_email_slack_and_feishu_each_once(prefect_api, feishu, tmp_path: Path) -> None:
    from flows.cli import app
    from tests.servers.slack_server import SlackServer
    from tests.servers.smtp_server import SmtpServer

    readers = _readers(tmp_path, """
readers:
  - {id: kern, name: Kernels, email: kernels@example.com, slack: "#vllm-kernels", feishu: kernels-group,
     subsystems: [kernels, moe]}
  - {id: all, name: Everyone, feishu: all-group}
""")
    with SmtpServer(tmp_path / "tls") as smtp, SlackServer() as slack:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": "pr-digest <digest@example.com>",
               "SLACK_BOT_TOKEN": slack.token, "DIGEST_SLACK_BASE_URL": slack.url, "SSL_CERT_FILE": str(smtp.cert)}
        args = ["run", "--source", f"jsonl:{SAMPLE}", "--deliver", "smtp,slack,feishu", "--readers", str(readers),
                "--out", str(tmp_path / "out"), "--state", str(tmp_path / "state.sqlite"), "--site-url", SITE]
        first = CliRunner().invoke(app, args, env=env)
        assert first.exit_code == 0, first.output
        second = CliRunner().invoke(app, args, env=env)
        assert second.exit_code == 0, second.output
        assert [a for m in smtp.messages for a in m.rcpt_tos] == ["kernels@example.com"]
        assert len([m for m in slack.posts() if "thread_ts" not in m]) == 1
    kern, everyone = feishu.posts("kernels-group"), feishu.posts("all-group")
    assert kern and everyone and all("sign" in c for c in kern)
    assert len({json.dumps(c, sort_keys=True) for c in everyone}) == len(everyone)  # nothing posted twice
    assert SECRET not in first.output + second.output
    assert "hook" not in first.output  # the webhook URL (it holds the bot's token) is never printed


def test_the_editors_notice_reaches_their_group_as_one_escaped_card(feishu, tmp_path: Path) -> None:
    from flows.notify import _messages
    from prdigest.deliver.feishu import FeishuChannel
    from prdigest.kernel.config import Settings
    from prdigest.readers.file import Editor
    from tests.factories import edition, entry

    ed = edition([entry(1, ["kernels"], "deep-read")]).model_copy(update={"repo": "o/<at id=all>"})
    text = "o/x: 1 draft entry waits for your review. Open https://prefect.example.com/runs/flow-run/abc. Click Resume."
    (message,) = _messages(ed, Editor(name="Lin", feishu="kernels-group"), 1, text, [default_media()["feishu"]],
                           "d@example.com")
    FeishuChannel(Settings().feishu_bots).push(message)
    (card,) = feishu.posts("kernels-group")
    assert "sign" in card and card["card"]["header"]["title"]["tag"] == "plain_text"
    texts = contents([card])
    assert html.unescape(texts[0]) == text
    link = "https://prefect.example.com/runs/flow-run/abc"
    assert texts[1].endswith(f"]({link})") and html.unescape(texts[1]) == f"[{link}]({link})"
    assert not any("<" in t or "@" in t for t in texts)


def test_each_medium_of_the_run_builds_its_own_notice_from_its_registration() -> None:
    from email.message import EmailMessage

    from flows.notify import _messages
    from prdigest.readers.file import Editor
    from tests.factories import edition, entry

    ed = edition([entry(1, ["kernels"], "deep-read")])
    editor = Editor(name="Lin", email="lin@example.com", slack="#digest-editors", feishu="editors-group")
    text = "1 draft entry waits <!here> & <at id=all></at>."
    messages = _messages(ed, editor, 1, text, list(default_media()), "pr-digest <d@example.com>")
    by = {m.medium: m for m in messages}
    assert sorted(by) == ["email", "feishu", "slack"] and {m.recipient for m in messages} == {
        "lin@example.com", "#digest-editors", "editors-group"}
    assert isinstance(by["email"].payload, EmailMessage) and by["email"].payload.get_content().startswith(text)
    assert by["slack"].payload[0]["text"] == "1 draft entry waits &lt;!here&gt; &amp; &lt;at id=all&gt;&lt;/at&gt;."
    assert "<" not in json.dumps(by["feishu"].payload, ensure_ascii=False)
    only_email = _messages(ed, editor, 1, text, [default_media()["email"]], "d@example.com")
    assert [m.medium for m in only_email] == ["email"]  # a medium the run does not deliver sends no notice


@pytest.mark.prefect
def test_group_bots_may_come_from_the_feishu_bots_secret_block(prefect_api, monkeypatch) -> None:
    from prefect.blocks.system import Secret

    from flows.secrets import with_secret_blocks
    from prdigest.kernel.config import Settings

    Secret(value={"kernels-group": {"url": "https://open.feishu.cn/open-apis/bot/v2/hook/from-block"},
                  "lark-team": {"url": "https://open.larksuite.com/open-apis/bot/v2/hook/t", "secret": "s"}}
           ).save("feishu-bots", overwrite=True)
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_URL", "https://open.feishu.cn/open-apis/bot/v2/hook/from-env")
    settings, used = with_secret_blocks(Settings())
    bots = settings.feishu_bots
    assert "feishu-bots" in used and sorted(bots) == ["kernels-group", "lark-team"]
    assert bots["kernels-group"].url.get_secret_value().endswith("from-env")  # the environment wins
    assert bots["lark-team"].secret.get_secret_value() == "s"


@pytest.mark.slow  # the channel's real backoff (2, 4, 8 s)
def test_answer_codes_through_the_ledger_rate_limits_retried_a_refused_signature_failed_with_its_reason(
        feishu, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DIGEST_FEISHU_KERNELS_GROUP_SECRET", "not-the-bots-secret")
    feishu.fault("ok")
    feishu.fault("ratelimit", times=2)  # the all-group's second card is limited twice, then accepted
    feishu.fault("5xx", value=503)
    summary = _run(tmp_path, _readers(tmp_path))
    assert [(r, m) for r, m, _ in summary.sent] == [("all", "feishu")]
    ((reader, medium, reason),) = summary.failed
    assert (reader, medium) == ("kern", "feishu") and "19021" in reason
    assert "DIGEST_FEISHU_KERNELS_GROUP_SECRET" in reason
    assert "not-the-bots-secret" not in reason and feishu.posts("kernels-group") == []
    n = len(json.loads((tmp_path / "out" / "feishu" / "all.json").read_text(encoding="utf-8")))
    assert len(feishu.posts("all-group")) == n  # every card once, the limited one after its retries
    assert [c.code for c in feishu.calls[:4]] == [0, 11232, 11232, None]  # None: the 503 had no Feishu answer
    ledger = open_ledger(tmp_path / "state.sqlite")
    (edition,) = ledger.editions()
    rows = ledger.rows(edition)
    ledger.close()
    assert rows[("kern", "feishu")].status == "failed" and "19021" in rows[("kern", "feishu")].error
    assert rows[("all", "feishu")].status == "sent" and json.loads(rows[("all", "feishu")].checkpoint)["done"] == n
