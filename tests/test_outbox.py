"""The outbox: the exact RFC 5322 message and Slack payloads, with safe headers."""

from __future__ import annotations

import json
from email import message_from_bytes, policy
from pathlib import Path

import pytest

from prdigest.delivery.compose import compose_messages
from prdigest.delivery.email_message import check_from
from prdigest.delivery.outbox import OutboxChannel
from prdigest.errors import ConfigError
from prdigest.pipeline import deliver
from prdigest.readers import Reader
from tests.factories import edition, entry

HTML = "<html><body>" + "x" * 3000 + "</body></html>"   # one long line, as MRML writes it


def _messages(subject: str = "vLLM 2026-W47", unsubscribe: str | None = "https://example.com/u/{reader}"):
    readers = [Reader(id="kern", name="Kernels team", email="k@example.com", slack="#vllm-kernels"),
               Reader(id="dm", name="Lin", slack="U0123456")]
    return compose_messages(
        edition=edition([entry(1, ["moe"])]), variant="moe", readers=readers, subject=subject,
        preheader="1 entry", html=HTML, text="plain text", slack=[{"text": "parent", "blocks": []},
                                                                     {"text": "reply", "blocks": [], "thread": True}],
        sender="pr-digest <digest@example.com>", unsubscribe_template=unsubscribe,
    )


def test_outbox_writes_complete_messages(tmp_path: Path) -> None:
    report = deliver(_messages(), {"email": OutboxChannel(tmp_path), "slack": OutboxChannel(tmp_path)})
    assert not report.failed and len(report.sent) == 3
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
    deliver(_messages(subject="Digest\r\nBcc: evil@example.com\nX-Evil: 1"), {"email": OutboxChannel(tmp_path),
                                                                              "slack": OutboxChannel(tmp_path)})
    msg = message_from_bytes((tmp_path / "kern.eml").read_bytes(), policy=policy.default)
    assert msg["Bcc"] is None and msg["X-Evil"] is None
    assert msg["Subject"] == "Digest Bcc: evil@example.com X-Evil: 1"


def test_mailto_unsubscribe_has_no_one_click_header(tmp_path: Path) -> None:
    deliver(_messages(unsubscribe="mailto:unsub@example.com?subject={reader}"),
            {"email": OutboxChannel(tmp_path), "slack": OutboxChannel(tmp_path)})
    msg = message_from_bytes((tmp_path / "kern.eml").read_bytes(), policy=policy.default)
    assert msg["List-Unsubscribe"] == "<mailto:unsub@example.com?subject=kern>"
    assert msg["List-Unsubscribe-Post"] is None


@pytest.mark.parametrize("bad", ["no-at-sign", "a@b.co\r\nBcc: x@y.z", "<>", ""])
def test_invalid_from_is_a_config_error(bad: str) -> None:
    with pytest.raises(ConfigError, match="DIGEST_FROM"):
        check_from(bad)
