"""Build the RFC 5322 message for one reader from a rendered email (shared by the outbox and SMTP)."""

from __future__ import annotations

import base64
import binascii
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from email import policy
from email.generator import NLCRE, BytesGenerator  # type: ignore[attr-defined]  # NLCRE: the generator's own line splitter
from email.header import Header
from email.headerregistry import BaseHeader, HeaderRegistry, UnstructuredHeader
from email.message import EmailMessage, MIMEPart
from email.policy import EmailPolicy
from email.utils import format_datetime, formataddr, make_msgid, parseaddr
from io import BytesIO
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.kernel.text import slug
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import PREFERENCES_SLOT, UNSUBSCRIBE_SLOT

if TYPE_CHECKING:
    from prdigest.deliver import Message
    from prdigest.deliver.media import ComposeContext, Rendering

SLOTS = (UNSUBSCRIBE_SLOT, PREFERENCES_SLOT)
#: What could end a header line or is a control: C0 and C1 controls (U+0085 ends a line for str.splitlines, which
#: the email package refuses in a header value), DEL, and the Unicode line and paragraph separators.
_HEADER_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
#: Bytes over 127 (each one =XX in quoted-printable).
_HIGH = bytes(range(128, 256))
#: RFC 5322's limit for one header line, CRLF excluded.
MAX_LINE = 998

if TYPE_CHECKING:
    from prdigest.kernel.config import Settings


class OneLineHeader(UnstructuredHeader):
    """A header that goes out exactly as written, on one line: ``List-Unsubscribe``.

    Python's default policy folds a header longer than 78 characters, and a URL has no space to fold at, so
    it turns the whole value into RFC 2047 encoded-words (``=?utf-8?q?=3Chttps=3A//…?=``): a mailbox
    provider reads that as no URL at all and shows no one-click button. RFC 2369 wants the angle-bracketed
    URL as plain ASCII, so this header is never encoded and never folded (its value is checked by
    :func:`list_unsubscribe` to be ASCII and to fit one line).
    """

    def fold(self, *, policy):  # email's signature
        return f"{self.name}: {self}{policy.linesep}"


class _Headers(HeaderRegistry):
    """The default header registry, each header name's class made once: the stdlib makes a new class at every
    lookup, and classes are freed only by the cyclic collector, so 10,000 readers' headers (To, Message-ID, …
    parsed per reader) piled up classes between collections."""

    def __init__(self) -> None:
        super().__init__()
        self._made: dict[str, type[BaseHeader]] = {}

    def map_to_type(self, name: str, cls: type[BaseHeader]) -> None:
        self._made.clear()
        super().map_to_type(name, cls)

    def __getitem__(self, name: str) -> type[BaseHeader]:
        made = self._made.get(name.lower())
        if made is None:
            made = self._made[name.lower()] = super().__getitem__(name)
        return made


_REGISTRY = _Headers()
# typeshed types a header class as BaseHeader's subclass; the registry takes any class with parse/init (as ours)
_REGISTRY.map_to_type("list-unsubscribe", OneLineHeader)  # type: ignore[arg-type]
_REGISTRY.map_to_type("list-unsubscribe-post", OneLineHeader)  # type: ignore[arg-type]

#: Parsed header values by (registry, name, value): most of a message's headers are every message's (From,
#: List-Id, MIME-Version, Date within a second, the parts' Content-Type, a variant's Subject). Header objects
#: are never changed once made (setting a parameter replaces the header), so messages share them.
_PARSED: dict[tuple[object, str, str], tuple[str, object]] = {}
#: Folded header lines by (header object, the policy's folding settings), for the shared header objects.
_FOLDED: dict[tuple[int, str, int | None, str, bool, str], tuple[object, bytes]] = {}
#: Encoded unstructured header values by (header name, text): a variant's Subject and preheader are every one
#: of its messages'.
_ENCODED: dict[tuple[str, str], str] = {}
#: Each header class's ``max_count`` by (registry, lower-case name).
_MAX_COUNT: dict[tuple[object, str], int | None] = {}
_CACHED = 1024  # entries kept in each, at most (a run's constant headers are a handful)
#: Headers whose value is each message's own, parsed and folded for it alone, never cached: a reader's Message-ID
#: (too long to be stored as written) is never seen again, and 1,024 of them parsed (~7 KB each) filled ``_PARSED``
#: (and ``_FOLDED`` kept them alive too) with ~7 MB that no other message used.
_OWN = frozenset({"message-id"})


class _MessagePolicy(EmailPolicy):
    """The default policy, whose parsed header values are shared between messages (see ``_PARSED``), and
    whose header classes' limits are looked up once per header name (the registry makes a class per lookup)."""

    def header_max_count(self, name):  # email's signature
        key = (self.header_factory, name.lower())
        if key not in _MAX_COUNT:
            _MAX_COUNT[key] = super().header_max_count(name)
        return _MAX_COUNT[key]

    def header_store_parse(self, name, value):  # email's signature
        if type(value) is not str or name.lower() in _OWN:
            return super().header_store_parse(name, value)
        key = (self.header_factory, name, value)
        found = _PARSED.get(key)
        if found is None:
            found = super().header_store_parse(name, value)
            if len(_PARSED) >= _CACHED:
                _PARSED.clear()
            _PARSED[key] = found
        return found


#: The policy every digest e-mail is built with: the default one, but the list headers stay as written.
MESSAGE_POLICY = _MessagePolicy(header_factory=_REGISTRY)
#: Characters a URL in List-Unsubscribe keeps as they are (printable ASCII but space, ``<`` and ``>``).
_URL_SAFE = "".join(chr(c) for c in range(0x21, 0x7f) if chr(c) not in "<>")


def list_unsubscribe(url: str) -> str:
    """The ``List-Unsubscribe`` value for one URL: ``<URL>``, ASCII only (anything else percent-encoded)."""
    value = f"<{quote(header_text(url, 2000), safe=_URL_SAFE)}>"
    if len("List-Unsubscribe: ") + len(value) > MAX_LINE:
        raise ValueError(f"the unsubscribe URL is {len(value) - 2} characters: too long for one List-Unsubscribe "
                         f"line ({MAX_LINE}); shorten DIGEST_WEB_URL or DIGEST_UNSUBSCRIBE_URL")
    return value


def email_notice(reader: Reader, subject: str, text: str, context: "ComposeContext") -> EmailMessage:
    """The editors' notice as a plain-text e-mail (its Message-ID names the edition's review)."""
    msg = EmailMessage(policy=MESSAGE_POLICY)
    msg.set_raw("Subject", unstructured("Subject", header_text(subject)))
    msg["From"] = context.sender
    msg.set_raw("To", mailbox(header_text(reader.name, 120), reader.email or ""))
    msg["Date"] = format_datetime(context.now or datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"review.{context.edition.key}",
                                   domain=parseaddr(context.sender)[1].rpartition("@")[2] or "localhost")
    msg.set_content(text + "\n")
    return msg


def header_text(value: str, limit: int = 200) -> str:
    """Collapse anything that could end a header line (CR, LF, other controls) into one space."""
    return _HEADER_UNSAFE.sub(" ", value).strip()[:limit]


def check_from(address: str) -> str:
    """Validate the From address (DIGEST_FROM) once, before anything is sent."""
    name, addr = parseaddr(address)
    if _HEADER_UNSAFE.search(address) or not re.fullmatch(r"[^@\s<>]+@[^@\s<>]+", addr or ""):
        raise ConfigError(f"DIGEST_FROM '{header_text(address)}' is not a valid From address "
                          "(e.g. 'pr-digest <digest@example.com>')")
    return formataddr((name, addr)) if name else addr


def unsubscribe_link(template: str | None, reader: Reader) -> str | None:
    """DIGEST_UNSUBSCRIBE_URL with ``{reader}`` replaced by the reader's (URL-quoted) id."""
    if not template:
        return None
    return template.replace("{reader}", quote(reader.id, safe=""))


def build_email(
    *,
    edition: Edition,
    reader: Reader,
    subject: str,
    preheader: str,
    html: str,
    text: str,
    sender: str,
    unsubscribe: str | None = None,
    now: datetime | None = None,
) -> EmailMessage:
    """A multipart/alternative message (text first, HTML preferred) with list headers for one reader."""
    return addressed(email_body(html, text), edition=edition, reader=reader, subject=subject, preheader=preheader,
                     sender=sender, unsubscribe=unsubscribe, now=now)


def encode_body(content: str) -> tuple[str, str]:
    """A text part's body encoded for any mail path: (Content-Transfer-Encoding, the encoded lines).

    Each line (the content split at "\n") is quoted-printable encoded by ``binascii.b2a_qp`` (C), soft-broken
    at 76 characters, with anything else that could not travel as it is escaped: ``=``, bytes over 126, control
    characters (a lone CR among them), a space or tab ending a line, a dot alone on a line. When that changes
    nothing, the content is 7bit as it is; when base64 is shorter (text mostly CJK) or a line of the encoded
    text would begin "From ", base64. Every encoded line is ASCII and at most 76 characters. Decoded, base64
    gives back the content's bytes exactly, 7bit and quoted-printable the content with each "\n" the message's
    line ending (CRLF on the SMTP path)."""
    data = content.encode("utf-8")
    # base64's length, its lines of 76 characters each ended by "\n", told before encoding it; quoted-printable
    # is longer than the content by two characters at least for every byte over 127 (=XX).
    chars = 4 * -(-len(data) // 3)
    chars += -(-chars // 76)
    if len(data) + 2 * (len(data) - len(data.translate(None, _HIGH))) <= chars:
        if b"\r" in data or b" \n" in data or b"\t\n" in data or data.endswith((b" ", b"\t")):
            quoted = b"\n".join(binascii.b2a_qp(line, istext=False) for line in data.split(b"\n"))
        else:  # the same in one call: the text's line breaks are its only "\n" and no line ends in a space
            quoted = binascii.b2a_qp(data)
        # A line beginning "From " would be written ">From " by a generator that guards mbox files (smtplib's
        # send_message uses one): such a text goes as base64, which has no such line.
        if not quoted.startswith(b"From ") and b"\nFrom " not in quoted:
            if quoted == data:
                return "7bit", content
            if len(quoted) <= chars:
                return "quoted-printable", quoted.decode("ascii")
    return "base64", base64.encodebytes(data).decode("ascii")


#: The boundary of every message's parts (see :func:`email_body`).
BOUNDARY = f"=_{secrets.token_hex(8)}"


@dataclass(frozen=True)
class EmailBody:
    """The body a variant's messages share: the text and the HTML part, encoded once, and the boundary
    between them."""

    text: MIMEPart
    html: MIMEPart
    boundary: str


def _text_part(content: str, subtype: str) -> MIMEPart:
    """A ``text/<subtype>`` part holding ``content`` encoded (its payload set as encoded, its headers saying so)."""
    transfer, encoded = encode_body(content)
    part = MIMEPart(policy=MESSAGE_POLICY)
    part["Content-Type"] = f'text/{subtype}; charset="utf-8"'
    part["Content-Transfer-Encoding"] = transfer
    part.set_payload(encoded)
    part.flattened = {}  # type: ignore[attr-defined]  # read, never changed, when sent: message_bytes writes it once per policy
    return part


def email_body(html: str, text: str) -> EmailBody:
    """The text and HTML parts of a message, encoded (:func:`encode_body`), and a boundary none of them can hold:
    it begins ``=_``, which no encoded line holds (quoted-printable writes ``=`` only before two hex digits or a
    line break, base64 has neither character, and 7bit content holds no ``=``). So every message can have the
    same boundary, and with it the same Content-Type header, parsed and folded once."""
    return EmailBody(_text_part(text, "plain"), _text_part(html, "html"), BOUNDARY)


#: The line length headers are folded to (the default policy's).
MAX_FOLDED = 78


def _put(msg: EmailMessage, name: str, value: str) -> None:
    """Set a header: a value of printable ASCII that fits its line as it is is stored as written (nothing to
    encode or fold: the generator writes it so, and a parser reads it when asked); any other is parsed by the
    policy, which folds it when the message is written."""
    if value.isascii() and value.isprintable() and len(name) + 2 + len(value) <= MAX_FOLDED:
        msg.set_raw(name, value)
    else:
        msg[name] = value


def _plain(text: str) -> bool:
    """Whether header text can be written as it is: printable ASCII holding nothing a decoder would read as an
    encoded-word (``=?``) and no run of spaces (which a display name's parsing collapses)."""
    return text.isascii() and text.isprintable() and "=?" not in text and "  " not in text


def _words(name: str, text: str) -> str:
    """``text`` as RFC 2047 encoded-words (UTF-8) by ``email.header.Header``, folded to at most 78 characters
    a line ("\n" between lines: the generator writes the policy's line ending): a decoder joins adjacent
    encoded-words without the folding between them, so it reads ``text`` back exactly."""
    return Header(text, "utf-8", maxlinelen=MAX_FOLDED, header_name=name).encode(linesep="\n")


def unstructured(name: str, text: str) -> str:
    """The value of an unstructured header (Subject, the preheader): ``text`` as it is when it is plain and fits
    its line, else its encoded-words (:func:`_words`). The email package's own folding is not used: it leaves a
    literal ``=?…?=`` in a Subject as it is, which every reader then sees decoded."""
    if _plain(text) and len(name) + 2 + len(text) <= MAX_FOLDED:
        return text
    key = (name, text)
    found = _ENCODED.get(key)
    if found is None:
        if len(_ENCODED) >= _CACHED:
            _ENCODED.clear()
        found = _ENCODED[key] = _words(name, text)
    return found


def mailbox(name: str, address: str) -> str:
    """A To value: ``formataddr``'s when the name is plain and it fits one line, else the name as encoded-words
    followed by the address (on a line of its own when the last word's has no room). The email package's folding
    of a long quoted name drops the quotes (``Smith, John…`` became two addresses), so it is not used."""
    pair = formataddr((name, address))
    if _plain(name) and len("To: ") + len(pair) <= MAX_FOLDED:
        return pair
    words = _words("To", name)
    last = words.rpartition("\n")[2]
    used = len(last) + (0 if "\n" in words else len("To: "))
    return f"{words}{' ' if used + len(address) + 3 <= MAX_FOLDED else chr(10) + ' '}<{address}>"


def addressed(
    body: EmailBody,
    *,
    edition: Edition,
    reader: Reader,
    subject: str,
    preheader: str,
    sender: str,
    unsubscribe: str | None = None,
    now: datetime | None = None,
    message_id: str | None = None,
) -> EmailMessage:
    """One reader's message around a body (which readers of a variant share): that reader's headers, the list
    headers, and the body's parts."""
    if not reader.email:
        raise ValueError(f"reader '{reader.id}' has no e-mail address")
    domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
    msg = EmailMessage(policy=MESSAGE_POLICY)
    msg.set_raw("Subject", unstructured("Subject", header_text(subject)))
    msg["From"] = sender
    msg.set_raw("To", mailbox(header_text(reader.name, 120), reader.email))
    _put(msg, "Date", format_datetime(now or datetime.now(timezone.utc)))
    _put(msg, "Message-ID", message_id or make_msgid(idstring=f"{edition.key}.{reader.id}", domain=domain))
    msg["List-Id"] = f"{header_text(edition.repo)} digest <{slug(edition.repo)}.pr-digest.{domain}>"
    if unsubscribe:
        _put(msg, "List-Unsubscribe", list_unsubscribe(unsubscribe))
        if unsubscribe.startswith("https://"):
            msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["X-Digest-Edition"] = edition.key
    msg.set_raw("X-Digest-Preheader", unstructured("X-Digest-Preheader", header_text(preheader)))
    msg["MIME-Version"] = "1.0"
    msg["Content-Type"] = f'multipart/alternative; boundary="{body.boundary}"'
    msg.set_payload([body.text, body.html])  # the parts are read, never changed, when sent
    return msg


class EmailContent(Protocol):
    """What a rendered email offers the composer (``renderers.email.RenderedEmail`` has it)."""

    subject: str
    preheader: str
    html: str
    text: str


def email_message_id(context: "ComposeContext", reader: Reader) -> str:
    """The Message-ID a reader's copy gets on its first attempt; the ledger keeps it for every retry,
    so a copy sent again after a crash is recognisably the same message."""
    domain = parseaddr(context.sender)[1].rpartition("@")[2] or "localhost"
    return make_msgid(idstring=f"{context.edition.key}.{reader.id}", domain=domain)


class EmailComposer:
    """Composes one variant's e-mails. Every reader's headers are built in full; the body, identical
    for all readers of a variant, is encoded once (:func:`email_body`) and flattened once (:func:`message_bytes`).
    A message's body is made from its HTML and text with the reader's links filled in, nothing else: from the
    second reader on, those are compared with the first reader's, and should they ever differ (a footer with
    each reader's own links), every message gets a body of its own."""

    def __init__(self, rendering: "Rendering", context: "ComposeContext") -> None:
        content: EmailContent = rendering.payload
        self.content = content
        self.context = context
        self.body: EmailBody | None = None
        self.filled: tuple[str, str] | None = None  # the first reader's HTML and text, links filled in
        # A footer with each reader's own links: every message is composed in full.
        self.personal = any(slot in part for slot in SLOTS for part in (content.html, content.text))

    def _filled(self, reader: Reader) -> tuple[str, str]:
        links = self.context.links_for(reader, "email")
        return links.fill(self.content.html, for_html=True), links.fill(self.content.text, for_html=False)

    def __call__(self, reader: Reader, message_id: str | None = None) -> EmailMessage:
        c, ctx = self.content, self.context
        if not reader.email:
            raise ValueError(f"reader '{reader.id}' has no e-mail address")
        filled = self._filled(reader)
        if self.personal or (self.filled is not None and filled != self.filled):
            self.personal = True
            body = email_body(*filled)
        else:
            if self.body is None:
                self.body, self.filled = email_body(*filled), filled
            body = self.body
        return addressed(body, edition=ctx.edition, reader=reader, subject=c.subject, preheader=c.preheader,
                         sender=ctx.sender, unsubscribe=ctx.links_for(reader, "email").unsubscribe, now=ctx.now,
                         message_id=message_id)


class _Lines(BytesGenerator):
    """A BytesGenerator that writes a body's lines in one call, not two per line (a 70 KB quoted-printable part
    has ~1,000 lines): the same bytes (each line, then the line ending, as ``Generator._write_lines`` writes them)."""

    def _write_lines(self, lines: str) -> None:
        if not lines:
            return
        if "\r" not in lines:  # an encoded body's lines end in "\n" alone: the same as splitting at NLCRE
            self.write(lines.replace("\n", self._NL))  # type: ignore[attr-defined]  # the generator's line ending
            return
        # NLCRE.split ends with "" when the text ends with a line break: join writes each line but the last
        # followed by the line ending, and the last (if any) alone, as the loop it replaces.
        self.write(self._NL.join(NLCRE.split(lines)))  # type: ignore[attr-defined]  # the generator's line ending


class _SharedParts(_Lines):
    """A BytesGenerator that writes a body part a variant's messages share from the bytes it flattened to
    the first time (per policy and line ending), instead of flattening it again for every reader; and a header
    object messages share (``_PARSED``) folded once per policy."""

    def _write_headers(self, msg):  # email's signature
        policy_ = self.policy
        for name, value in msg.raw_items():
            if not isinstance(policy_, EmailPolicy) or not hasattr(value, "name") or name.lower() in _OWN:
                self._fp.write(policy_.fold_binary(name, value))
                continue
            # What EmailPolicy.fold_binary's result depends on: the header, the line length, the line ending,
            # utf8 (and cte_type, which says whether to refold).
            key = (id(value), name, policy_.max_line_length, policy_.linesep, policy_.utf8, policy_.cte_type)
            found = _FOLDED.get(key)
            if found is None or found[0] is not value:
                found = (value, policy_.fold_binary(name, value))
                if len(_FOLDED) >= _CACHED:
                    _FOLDED.clear()
                _FOLDED[key] = found
            self._fp.write(found[1])
        self.write(self._NL)

    def flatten(self, msg, unixfrom=False, linesep=None):  # email's signature
        cache = getattr(msg, "flattened", None)
        if cache is None:
            return super().flatten(msg, unixfrom, linesep)
        policy = self.policy or msg.policy
        key = (unixfrom, linesep, self._mangle_from_, self.maxheaderlen, policy.linesep, policy.utf8,
               policy.cte_type, policy.max_line_length)
        data = cache.get(key)
        if data is None:
            buffer = BytesIO()
            _Lines(buffer, self._mangle_from_, self.maxheaderlen, policy=self.policy).flatten(
                msg, unixfrom, linesep)
            data = cache[key] = buffer.getvalue()
        self._fp.write(data)
        return None


def message_bytes(msg: EmailMessage, policy_: policy.Policy = policy.SMTP) -> bytes:
    """``msg.as_bytes(policy=policy_)``, byte for byte, with the body parts a variant's messages share
    flattened once for all of them."""
    buffer = BytesIO()
    _SharedParts(buffer, mangle_from_=False, policy=policy_).flatten(msg, unixfrom=False)
    return buffer.getvalue()


def email_outbox_file(message: "Message") -> tuple[str, bytes]:
    """``<reader-id>.eml``: the complete RFC 5322 message SMTP would carry."""
    return f"{message.reader.id}.eml", message_bytes(message.payload, policy.SMTP)


#: The From address when DIGEST_FROM is not set: only the outbox accepts it.
DEFAULT_SENDER = "pr-digest <pr-digest@localhost>"


def sender(settings: "Settings") -> str:
    """The From address: DIGEST_FROM, or a placeholder that only the outbox accepts."""
    return check_from(settings.from_address) if settings.from_address else DEFAULT_SENDER
