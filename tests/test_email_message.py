"""The e-mail as it leaves: the list headers read back as raw bytes from the real aiosmtpd server (no
parser in between, since a parser decodes what a mailbox provider does not)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.deliver.media import ComposeContext, RenderContext
from prdigest.deliver.run import deliver, plan_deliveries
from prdigest.kernel.config import Settings
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import link_kinds, linker
from tests.factories import edition, entry, open_ledger
from tests.servers.smtp_server import SmtpServer
from tests.test_delivery import PASSWORD, SENDER, smtp_channel

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


# -- the body and headers, read back by the email package's own parser -----------------------------------

#: Pieces of hostile texts: CJK and emoji, '=' (and what looks like quoted-printable or an encoded-word), spaces
#: and tabs ending lines, lone CRs and CRLFs, dots and 'From ' starting lines, the message's own boundary at a
#: line's start, lines far over 998 octets, and control characters (no NUL).
_PIECES = ["中文段落，含标点。", "é", "😀", "=", "==", "=3D", "=\n", "=?utf-8?q?x?=", " ", "\t", "  \n", "\t\n", "\r",
           "\r\n", "\n", "\n\n", ".\n", "\n.\n", "\n..", "From me\n", "\nFrom ", "--", "\n--=_", "x" * 1200,
           "中" * 700, "\x01", "\x0b", "\x0c", "\x1b", "\x7f", "\x85", "\u2028", '<a href="x?a=1&b=2">', "plain words "]


def _hostile(rng, pieces: int = 40) -> str:
    from prdigest.deliver.email_message import BOUNDARY

    extra = [f"\n--{BOUNDARY}\n", f"\n--{BOUNDARY}--\n"]
    return "".join(rng.choice(_PIECES + extra) for _ in range(rng.randint(0, pieces)))


#: Pieces of hostile reader names (a Reader's name is one line without control characters).
_NAME_PIECES = ["林伟", "Ann", " ", '"', "\\", "<", ">", "@", ",", ";", ":", "(", ")", ".", "O'Neil", "=?utf-8?q?x?=",
                "é", "😀", "x" * 90, "读者" * 30]


def _name(rng) -> str:
    return "".join(rng.choice(_NAME_PIECES) for _ in range(rng.randint(1, 8)))[:120].strip() or "Ann"


def _want(part, text: str, linesep: str) -> str:
    """What a part's get_content() gives back for ``text``: base64 carries the text's bytes as they are; 7bit and
    quoted-printable carry its line breaks as the message's own (CRLF on the SMTP path)."""
    return text if part["Content-Transfer-Encoding"] == "base64" else text.replace("\n", linesep)


def _check_read_back(raw: bytes, *, subject: str, name: str, address: str, text: str, html: str,
                     linesep: str = "\r\n") -> object:
    from email import message_from_bytes, policy
    from email.header import decode_header, make_header

    from prdigest.deliver.email_message import header_text

    assert raw.isascii()  # every header encoded, every body part 7bit, quoted-printable or base64
    assert raw.endswith(linesep.encode())
    lines = raw.split(linesep.encode())
    assert all(b"\r" not in line and b"\n" not in line for line in lines), "a line break other than the message's"
    assert max(len(line) for line in lines) <= 998
    msg = message_from_bytes(raw, policy=policy.default)
    assert not msg.defects and all(not p.defects for p in msg.iter_parts())
    assert msg["Subject"] == header_text(subject)
    (to,) = msg["To"].addresses
    assert to.addr_spec == address
    value = re.sub(rb"\r?\n", b"", raw_header(raw, b"To")).decode()[len("To: "):]
    if "=?" in value:
        # An encoded display name: the email package's parser puts a space between its encoded-words and
        # collapses runs of spaces within one; RFC 2047 (6.2) says the space between adjacent encoded-words is
        # ignored and the words' text is the text, as email.header's decoder reads it.
        assert str(make_header(decode_header(value))) == f"{header_text(name, 120)} <{address}>"
    else:
        assert to.display_name == header_text(name, 120)
    text_part, html_part = msg.iter_parts()
    assert all(len(line) <= 76 for part in (text_part, html_part) for line in part.get_payload().splitlines())
    assert (text_part.get_content_type(), html_part.get_content_type()) == ("text/plain", "text/html")
    assert text_part.get_content() == _want(text_part, text, linesep)
    assert html_part.get_content() == _want(html_part, html, linesep)
    return msg


def test_hostile_texts_and_headers_read_back_exactly_as_rendered() -> None:
    """Each part's encoding is chosen here (binascii's quoted-printable or base64, or 7bit when nothing needs
    encoding), so the email package's parser is the judge: every header decodes to what was meant, both parts'
    content to the rendered text and HTML, and the bytes are ASCII lines of at most 998 octets ending in CRLF."""
    import random
    from email import policy

    from prdigest.deliver.email_message import build_email, message_bytes

    rng = random.Random(30)
    ed = edition([entry(100, ["kernels"], "deep-read")], language="zh-CN")
    encodings = set()
    for i in range(300):
        text, html = _hostile(rng), _hostile(rng)
        subject, name = _hostile(rng, 12), _name(rng)
        address = f"reader-{i}@example.com"
        msg = build_email(edition=ed, reader=Reader(id=f"r{i}", name=name, email=address), subject=subject,
                          preheader=_hostile(rng, 6), html=html, text=text, sender="digest <digest@example.com>",
                          unsubscribe=f"https://digest.example.com/u/{'r' * rng.randint(1, 120)}{i}")
        back = _check_read_back(message_bytes(msg, policy.SMTP), subject=subject, name=name, address=address,
                                text=text, html=html)
        encodings |= {p["Content-Transfer-Encoding"] for p in back.iter_parts()}
        line = raw_header(message_bytes(msg, policy.SMTP), b"List-Unsubscribe")
        assert re.fullmatch(rb"List-Unsubscribe: <https://digest\.example\.com/u/r+\d+>", line), line
        assert raw_header(message_bytes(msg, policy.SMTP), b"List-Unsubscribe-Post") == \
            b"List-Unsubscribe-Post: List-Unsubscribe=One-Click"
        # Written with "\n" (policy.default), 7bit and quoted-printable parts read back with "\n" too.
        _check_read_back(message_bytes(msg, policy.default), subject=subject, name=name, address=address,
                         text=text, html=html, linesep="\n")
    assert encodings == {"7bit", "quoted-printable", "base64"}


def test_a_variants_readers_share_one_body_with_their_own_headers_and_kept_message_ids() -> None:
    from email import message_from_bytes, policy

    from flows.media import EMAIL
    from prdigest.deliver.email_message import message_bytes
    from prdigest.deliver.media import Rendering
    from renderers import RenderedEmail

    ed = edition([entry(100, ["kernels"], "deep-read")], language="zh-CN")
    text, html = "纯文本 = 1 \nFrom here\n.\n", "<p>超文本 a=b</p>\n" + "<td>" * 400 + "\n"
    rendering = Rendering("email", "all", RenderedEmail("周报 vllm-project/vllm：3 篇", "要点", html, text))
    compose = EMAIL.composer(rendering, ComposeContext(edition=ed, sender="digest <digest@example.com>",
                                                       unsubscribe_template="https://example.com/u/{reader}"))
    readers = [Reader(id=f"r{i}", name=name, email=f"r{i}@example.com")
               for i, name in enumerate(["林伟", 'Ann "the editor" O\'Neil, Jr.', "Bob <admin@example.com>"])]
    kept = "<1.2.3.first-attempt@example.com>"
    messages = [compose(readers[0], None), compose(readers[1], kept), compose(readers[2], None)]
    assert messages[0].get_payload()[1] is messages[2].get_payload()[1]  # one encoded body for the variant
    for reader, msg in zip(readers, messages):
        raw = message_bytes(msg)
        back = _check_read_back(raw, subject=rendering.payload.subject, name=reader.name, address=reader.email,
                                text=text, html=html)
        assert back["List-Unsubscribe"] == f"<https://example.com/u/{reader.id}>"
        assert message_from_bytes(raw, policy=policy.default)["Message-ID"] == msg["Message-ID"]
    assert messages[1]["Message-ID"] == kept and len({m["Message-ID"] for m in messages}) == 3


def test_hostile_bodies_cross_a_real_smtp_server_intact(tmp_path: Path) -> None:
    """The SMTP path (smtplib's own flattening, dot-stuffing, the server's parsing) carries what the outbox
    writes: each reader's variant with hostile text and HTML arrives whole, and its outbox file reads the same."""
    import random

    from flows.media import EMAIL
    from prdigest.deliver.email_message import email_outbox_file
    from prdigest.deliver.media import Rendering
    from renderers import RenderedEmail

    rng = random.Random(7)
    ed = edition([entry(100, ["kernels"], "deep-read")], language="zh-CN")
    variants, bodies = [], {}
    for v in range(6):
        text, html, subject = _hostile(rng, 80), _hostile(rng, 80), _hostile(rng, 10)
        readers = [Reader(id=f"v{v}r{i}", name=_name(rng), email=f"v{v}r{i}@example.com")
                   for i in range(2)]
        variants.append((readers, {"email": Rendering("email", f"v{v}", RenderedEmail(subject, "p", html, text))}))
        bodies.update({r.email: (r, subject, text, html) for r in readers})
    context = ComposeContext(edition=ed, sender=SENDER, unsubscribe_template="https://example.com/u/{reader}")
    deliveries = plan_deliveries(variants, [EMAIL], context)
    with SmtpServer(tmp_path / "tls", password=PASSWORD) as smtp:
        report = deliver(ed.key, deliveries, {"email": smtp_channel(smtp)}, None)
        assert len(report.sent) == 12 and not report.failed, (report.failed, report.pending)
        received = {m.rcpt_tos[0]: m for m in smtp.messages}
    for delivery in deliveries:
        reader, subject, text, html = bodies[delivery.reader.email]
        raw = received[reader.email].raw
        back = _check_read_back(raw, subject=subject, name=reader.name, address=reader.email, text=text, html=html)
        # made when composed (no ledger here): the reader's own, under the sender's domain
        assert back["Message-ID"].endswith(f".{ed.key}.{delivery.reader.id}@example.com>"), back["Message-ID"]
        _, eml = email_outbox_file(delivery.message())
        again = _check_read_back(eml, subject=subject, name=reader.name, address=reader.email, text=text, html=html)
        assert [p.get_content() for p in again.iter_parts()] == [p.get_content() for p in back.iter_parts()]


def test_quoted_printable_in_one_call_is_the_same_as_line_by_line_where_it_is_used() -> None:
    """encode_body encodes a text with no CR and no line ending in a space or tab in one call of b2a_qp, any
    other line by line: the same bytes where the one call is used."""
    import binascii
    import random

    from prdigest.deliver.email_message import encode_body

    rng = random.Random(5)
    pieces = [p for p in _PIECES if "\r" not in p and not p.endswith((" \n", "\t\n"))]
    used = 0
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30))).replace(" \n", "\n")
        data = text.encode()
        if re.search(rb"[ \t](\n|$)", data):
            continue
        used += 1
        lines = b"\n".join(binascii.b2a_qp(line, istext=False) for line in data.split(b"\n"))
        assert binascii.b2a_qp(data) == lines
        transfer, encoded = encode_body(text)
        if transfer == "quoted-printable":
            assert encoded.encode() == lines
    assert used > 200


def test_each_header_names_class_is_made_once_whatever_the_number_of_readers() -> None:
    """Failed before: the email package made a new header class at every header parsed (each reader's To and
    Message-ID), freed only by the cyclic collector: 10,000 readers' messages piled up classes between its runs."""
    import gc
    from email.headerregistry import BaseHeader

    from prdigest.deliver.email_message import build_email
    from tests.factories import edition, entry

    ed = edition([entry(100, ["kernels"], "deep-read")], language="en")

    def classes_after(n: int) -> int:
        for i in range(n):
            build_email(edition=ed, reader=Reader(id=f"r{i}", name=f"Reader {i}", email=f"r{i}@example.com"),
                        subject="Digest", preheader="pre", html="<p>x</p>", text="x",
                        sender="digest <digest@example.com>")
        # header classes only: other modules of a long test session may make classes of their own meanwhile
        return sum(1 for o in gc.get_objects() if isinstance(o, type) and issubclass(o, BaseHeader))

    gc.collect()
    gc.disable()  # as between two runs of the collector
    try:
        few = classes_after(5)
        many = classes_after(200)
    finally:
        gc.enable()
    assert many - few < 10, (few, many)
