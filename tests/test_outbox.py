"""The outbox: the exact RFC 5322 message and Slack payloads, with safe headers."""

from __future__ import annotations

import json
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.deliver.email_message import check_from
from prdigest.deliver.media import ComposeContext, Rendering
from prdigest.deliver.outbox import OutboxChannel
from prdigest.deliver.run import DeliveryReport, deliver, plan_deliveries
from prdigest.kernel.errors import ConfigError
from prdigest.readers.file import Reader
from renderers import RenderedEmail
from tests.factories import edition, entry

HTML = "<html><body>" + "x" * 3000 + "</body></html>"   # one long line, as MRML writes it
SLACK = [{"text": "parent", "blocks": []}, {"text": "reply", "blocks": [], "thread": True}]


def _deliver(directory: Path, subject: str = "vLLM 2026-W47",
             unsubscribe: str | None = "https://example.com/u/{reader}") -> DeliveryReport:
    """One variant's messages, through the delivery loop without a ledger (the dry run), into ``directory``."""
    readers = [Reader(id="kern", name="Kernels team", email="k@example.com", slack="#vllm-kernels"),
               Reader(id="dm", name="Lin", slack="U0123456")]
    ed = edition([entry(1, ["moe"])])
    renderings = {"email": Rendering("email", "moe", RenderedEmail(subject, "1 entry", HTML, "plain text")),
                  "slack": Rendering("slack", "moe", SLACK)}
    media = list(default_media())
    context = ComposeContext(edition=ed, sender="pr-digest <digest@example.com>", unsubscribe_template=unsubscribe)
    outbox = OutboxChannel(directory, {m.name: m.outbox_file for m in media})
    return deliver(ed.key, plan_deliveries([(readers, renderings)], media, context),
                   {m.name: outbox for m in media}, None)


def test_outbox_writes_complete_messages(tmp_path: Path) -> None:
    report = _deliver(tmp_path)
    assert not report.failed and not report.pending and len(report.sent) == 3
    assert [(r.reader, r.medium, r.recipient) for r in report.sent] == [
        ("kern", "email", "k@example.com"), ("kern", "slack", "#vllm-kernels"), ("dm", "slack", "U0123456")]
    assert [r.detail for r in report.sent] == [str(tmp_path / n) for n in ("kern.eml", "kern.slack.json",
                                                                           "dm.slack.json")]
    msg = message_from_bytes((tmp_path / "kern.eml").read_bytes(), policy=policy.default)
    assert msg["To"] == "Kernels team <k@example.com>"
    assert msg["List-Unsubscribe"] == "<https://example.com/u/kern>"
    assert msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert msg["Message-ID"] and msg["Date"] and "vllm-project-vllm" in msg["List-Id"]
    assert [p.get_content_type() for p in msg.iter_parts()] == ["text/plain", "text/html"]
    assert max(len(line) for line in (tmp_path / "kern.eml").read_bytes().splitlines()) <= 998
    slack = json.loads((tmp_path / "kern.slack.json").read_text())
    assert slack[0]["channel"] == "#vllm-kernels" and "thread_ts" in slack[1] and "thread" not in slack[1]
    assert (tmp_path / "dm.slack.json").exists() and not (tmp_path / "dm.eml").exists()


def test_subject_with_crlf_cannot_inject_headers(tmp_path: Path) -> None:
    _deliver(tmp_path, subject="Digest\r\nBcc: evil@example.com\nX-Evil: 1")
    msg = message_from_bytes((tmp_path / "kern.eml").read_bytes(), policy=policy.default)
    assert msg["Bcc"] is None and msg["X-Evil"] is None
    assert msg["Subject"] == "Digest Bcc: evil@example.com X-Evil: 1"


def test_mailto_unsubscribe_has_no_one_click_header(tmp_path: Path) -> None:
    _deliver(tmp_path, unsubscribe="mailto:unsub@example.com?subject={reader}")
    msg = message_from_bytes((tmp_path / "kern.eml").read_bytes(), policy=policy.default)
    assert msg["List-Unsubscribe"] == "<mailto:unsub@example.com?subject=kern>"
    assert msg["List-Unsubscribe-Post"] is None


@pytest.mark.parametrize("bad", ["no-at-sign", "a@b.co\r\nBcc: x@y.z", "<>", ""])
def test_invalid_from_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="DIGEST_FROM"):
        check_from(bad)
