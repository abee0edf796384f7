"""The e-mail as it leaves: the list headers read back as raw bytes from the real aiosmtpd server (no
parser in between, since a parser decodes what a mailbox provider does not)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prdigest.kernel.config import Settings
from prdigest.deliver.ledger import Ledger
from prdigest.deliver.run import deliver, plan_deliveries
from prdigest.deliver.media import ComposeContext, RenderContext
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import link_kinds, linker
from prdigest.connect.variants import plan_variants
from tests.factories import edition, entry
from tests.servers.smtp_server import SmtpServer
from tests.test_delivery import PASSWORD, SENDER, smtp_channel
from tests.factories import open_ledger

SECRET = "a-long-enough-web-secret-0123456789"


def raw_header(raw: bytes, name: bytes) -> bytes:
    """The header ``name`` exactly as it crossed the wire: its first line and any folded continuation."""
    found = re.search(rb"^" + re.escape(name) + rb":.*(?:\r?\n[ \t].*)*", raw, re.MULTILINE | re.IGNORECASE)
    assert found, f"no {name!r} header in the message"
    return found.group(0).rstrip(b"\r")


def test_list_unsubscribe_goes_over_smtp_as_one_plain_ascii_line(tmp_path: Path) -> None:
    """Failed before the fix: Python folded the 120-character digest web URL into RFC 2047 encoded-words
    (``List-Unsubscribe: =?utf-8?q?=3Chttps=3A//…``), which no provider reads as a one-click URL."""
    ed = edition([entry(100, ["kernels"], "deep-read"), entry(101, ["moe"], "skim")], language="en")
    readers = [Reader(id=f"reader-with-a-long-id-{i}", name=f"Reader {i}", email=f"r{i}@example.com")
               for i in range(3)]
    settings = Settings(state=tmp_path / "s.sqlite", web_url="https://digest.example.com/reader",
                        web_secret=SECRET)
    from flows.media import default_media

    email = default_media()["email"]
    render = RenderContext(reader_links=link_kinds(settings))
    variants = [(v.readers, {"email": email.render(ed, v, render)}) for v in plan_variants(ed, readers)[0]]
    context = ComposeContext(edition=ed, sender=SENDER, links=linker(settings, ed.repo))
    deliveries = plan_deliveries(variants, [email], context)
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        ledger = open_ledger(tmp_path / "state.sqlite")
        try:
            report = deliver(ed.id, deliveries, {"email": smtp_channel(smtp)}, ledger)
        finally:
            ledger.close()
        assert len(report.sent) == 3
        for received in smtp.messages:
            line = raw_header(received.raw, b"List-Unsubscribe")
            assert b"=?" not in line and b"\n" not in line, line
            url = re.fullmatch(rb"List-Unsubscribe: <(https://digest\.example\.com/reader/u/[\w.-]+)>", line)
            assert url, line
            assert len(url.group(1)) > 78  # long enough that the default policy would have folded it
            assert raw_header(received.raw, b"List-Unsubscribe-Post") == \
                b"List-Unsubscribe-Post: List-Unsubscribe=One-Click"
            # What a parser reads is the same URL, and the text footer links the same one.
            msg = received.message
            assert msg["List-Unsubscribe"] == f"<{url.group(1).decode()}>"
            assert url.group(1).decode() in msg.get_body(("plain",)).get_content()
        # The outbox writes the same line SMTP carries.
        from prdigest.deliver.email_message import email_outbox_file

        _, eml = email_outbox_file(deliveries[0].message())
        assert raw_header(eml, b"List-Unsubscribe") == raw_header(smtp.messages[0].raw, b"List-Unsubscribe")


@pytest.mark.parametrize("url, header", [
    ("https://example.com/u/abc", "<https://example.com/u/abc>"),
    ("https://example.com/u/é x", "<https://example.com/u/%C3%A9%20x>"),  # never an encoded-word
    ("mailto:unsub@example.com?subject=unsub", "<mailto:unsub@example.com?subject=unsub>"),
    ("https://example.com/u/<x>", "<https://example.com/u/%3Cx%3E>"),
    ("https://example.com/u/a\r\nBcc: victim@example.com", "<https://example.com/u/a%20Bcc:%20victim@example.com>"),
])
def test_list_unsubscribe_values_are_ascii_in_angle_brackets(url: str, header: str) -> None:
    from prdigest.deliver.email_message import list_unsubscribe

    assert list_unsubscribe(url) == header


def test_an_unsubscribe_url_too_long_for_one_line_is_refused_not_cut() -> None:
    from prdigest.deliver.email_message import list_unsubscribe

    with pytest.raises(ValueError, match="too long for one List-Unsubscribe line"):
        list_unsubscribe("https://example.com/u/" + "a" * 990)


def test_smtp_without_an_unsubscribe_link_is_said_at_the_check_and_in_the_summary(tmp_path: Path) -> None:
    """Failed before the fix: mail went out with no unsubscribe at all and nothing said so."""
    from typer.testing import CliRunner

    from flows.cli import app
    from tests.conftest import SAMPLE

    (tmp_path / "readers.yaml").write_text("readers:\n  - {id: all, name: Everyone, email: all@example.com}\n",
                                           encoding="utf-8")
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        env = {"DIGEST_SMTP_HOST": "127.0.0.1", "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_USER": smtp.user,
               "DIGEST_SMTP_PASSWORD": smtp.password, "DIGEST_FROM": SENDER, "SSL_CERT_FILE": str(smtp.cert)}
        args = ["run", "--source", f"jsonl:{SAMPLE}", "--since", "2026-11-16", "--until", "2026-11-17",
                "--deliver", "smtp", "--readers", str(tmp_path / "readers.yaml"), "--out", str(tmp_path / "out"),
                "--state", str(tmp_path / "state.sqlite"), "--language", "en"]
        result = CliRunner().invoke(app, args, env={**env, "COLUMNS": "400"})
        assert result.exit_code == 0, result.output
        assert len(smtp.messages) == 1 and "List-Unsubscribe" not in smtp.messages[0].message
        said = " ".join(result.output.split())
        assert said.count("--deliver smtp without DIGEST_WEB_URL or DIGEST_UNSUBSCRIBE_URL") == 2, said
        # With a link configured, nothing is said.
        quiet = CliRunner().invoke(app, [*args, "--resend-edition"],
                                   env={**env, "DIGEST_UNSUBSCRIBE_URL": "https://example.com/u/{reader}"})
        assert quiet.exit_code == 0 and "DIGEST_UNSUBSCRIBE_URL" not in quiet.output


def test_a_next_line_control_in_a_subject_or_preheader_is_a_space_not_a_refused_message() -> None:
    """Failed before: U+0085 (NEL) passed header_text, and the email package refused the header value
    ("may not contain linefeed or carriage return characters"), so the reader's message was never made."""
    from prdigest.deliver.email_message import build_email, header_text
    from tests.factories import edition, entry

    assert header_text("a\x85b\x9fc") == "a b c"
    ed = edition([entry(100, ["kernels"], "deep-read")], language="en")
    msg = build_email(edition=ed, reader=Reader(id="r", name="Ann", email="r@example.com"),
                      subject="Digest\x85Bcc: victim@example.com", preheader="pre\x85header", html="<p>x</p>",
                      text="x", sender="digest <digest@example.com>")
    assert msg["Subject"] == "Digest Bcc: victim@example.com" and "Bcc" not in msg
    assert msg["X-Digest-Preheader"] == "pre header"
