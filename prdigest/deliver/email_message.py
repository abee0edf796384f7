"""Build the RFC 5322 message for one reader from a rendered email (shared by the outbox and SMTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import re
from io import BytesIO
from email import policy
from email.generator import NLCRE, BytesGenerator
from email.headerregistry import HeaderRegistry, UnstructuredHeader
from email.policy import EmailPolicy
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid, parseaddr
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Protocol
from urllib.parse import quote

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import PREFERENCES_SLOT, UNSUBSCRIBE_SLOT
from prdigest.kernel.text import slug

if TYPE_CHECKING:
    from prdigest.deliver import Message
    from prdigest.deliver.media import ComposeContext, Rendering

SLOTS = (UNSUBSCRIBE_SLOT, PREFERENCES_SLOT)
#: What could end a header line or is a control: C0 and C1 controls (U+0085 ends a line for str.splitlines, which
#: the email package refuses in a header value), DEL, and the Unicode line and paragraph separators.
_HEADER_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
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

    def fold(self, *, policy):  # noqa: ANN001, ANN201 - email's signature
        return f"{self.name}: {self}{policy.linesep}"


_REGISTRY = HeaderRegistry()
_REGISTRY.map_to_type("list-unsubscribe", OneLineHeader)
_REGISTRY.map_to_type("list-unsubscribe-post", OneLineHeader)

#: Parsed header values by (registry, name, value): most of a message's headers are every message's (From,
#: List-Id, MIME-Version, Date within a second, the parts' Content-Type, a variant's Subject). Header objects
#: are never changed once made (setting a parameter replaces the header), so messages share them.
_PARSED: dict[tuple[object, str, str], tuple[str, object]] = {}
#: Folded header lines by (header object, the policy's folding settings), for the shared header objects.
_FOLDED: dict[tuple[int, str, int | None, str, bool, str], tuple[object, bytes]] = {}
_CACHED = 1024  # entries kept in each, at most (a run's constant headers are a handful)


class _MessagePolicy(EmailPolicy):
    """The default policy, whose parsed header values are shared between messages (see ``_PARSED``)."""

    def header_store_parse(self, name, value):  # noqa: ANN001, ANN201 - email's signature
        if type(value) is not str:
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
    msg["Subject"] = header_text(subject)
    msg["From"] = context.sender
    msg["To"] = formataddr((header_text(reader.name), reader.email or ""))
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
    if not reader.email:
        raise ValueError(f"reader '{reader.id}' has no e-mail address")
    domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
    msg = EmailMessage(policy=MESSAGE_POLICY)
    msg["Subject"] = header_text(subject)
    msg["From"] = sender
    msg["To"] = formataddr((header_text(reader.name, 120), reader.email))
    msg["Date"] = format_datetime(now or datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"{edition.key}.{reader.id}", domain=domain)
    msg["List-Id"] = f"{header_text(edition.repo)} digest <{slug(edition.repo)}.pr-digest.{domain}>"
    if unsubscribe:
        msg["List-Unsubscribe"] = list_unsubscribe(unsubscribe)
        if unsubscribe.startswith("https://"):
            msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["X-Digest-Edition"] = edition.key
    msg["X-Digest-Preheader"] = header_text(preheader)
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
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
    for all readers of a variant, is encoded once (quoted-printable encoding of ~70 KB of HTML costs
    ~7 ms a message) and flattened once (:func:`message_bytes`). A message's body is made from its HTML and
    text with the reader's links filled in, nothing else: from the second reader on, those are compared with
    the first reader's, and should they ever differ (a footer with each reader's own links), every message is
    composed in full."""

    def __init__(self, rendering: "Rendering", context: "ComposeContext") -> None:
        content: EmailContent = rendering.payload
        self.content = content
        self.context = context
        self.body: list | None = None
        self.filled: tuple[str, str] | None = None  # the first reader's HTML and text, links filled in
        # A footer with each reader's own links: every message is composed in full.
        self.personal = any(slot in part for slot in SLOTS for part in (content.html, content.text))

    def _full(self, reader: Reader, message_id: str | None, *, headers_only: bool = False) -> EmailMessage:
        c, ctx = self.content, self.context
        links = ctx.links_for(reader, "email")
        html, text = ("", "") if headers_only else self._filled(reader)
        msg = build_email(edition=ctx.edition, reader=reader, subject=c.subject, preheader=c.preheader,
                          html=html, text=text, sender=ctx.sender, unsubscribe=links.unsubscribe, now=ctx.now)
        if message_id:
            del msg["Message-ID"]
            msg["Message-ID"] = message_id
        return msg

    def _filled(self, reader: Reader) -> tuple[str, str]:
        links = self.context.links_for(reader, "email")
        return links.fill(self.content.html, for_html=True), links.fill(self.content.text, for_html=False)

    def __call__(self, reader: Reader, message_id: str | None = None) -> EmailMessage:
        if self.personal:
            return self._full(reader, message_id)
        if self.body is None:
            msg = self._full(reader, message_id)
            self.body, self.filled = msg.get_payload(), self._filled(reader)
            for part in self.body:
                part.flattened = {}  # read, never changed, when sent: message_bytes writes it once
            return msg
        if self._filled(reader) != self.filled:
            self.personal = True
            return self._full(reader, message_id)
        msg = self._full(reader, message_id, headers_only=True)
        msg.set_payload(list(self.body))  # the parts are read, never changed, when sent
        return msg


class _Lines(BytesGenerator):
    """A BytesGenerator that writes a body's lines in one call, not two per line (a 70 KB quoted-printable part
    has ~1,000 lines): the same bytes (each line, then the line ending, as ``Generator._write_lines`` writes them)."""

    def _write_lines(self, lines: str) -> None:
        if not lines:
            return
        if "\r" not in lines:  # an encoded body's lines end in "\n" alone: the same as splitting at NLCRE
            self.write(lines.replace("\n", self._NL))
            return
        # NLCRE.split ends with "" when the text ends with a line break: join writes each line but the last
        # followed by the line ending, and the last (if any) alone, as the loop it replaces.
        self.write(self._NL.join(NLCRE.split(lines)))


class _SharedParts(_Lines):
    """A BytesGenerator that writes a body part a variant's messages share from the bytes it flattened to
    the first time (per policy and line ending), instead of flattening it again for every reader; and a header
    object messages share (``_PARSED``) folded once per policy."""

    def _write_headers(self, msg):  # noqa: ANN001, ANN201 - email's signature
        policy_ = self.policy
        for name, value in msg.raw_items():
            if not isinstance(policy_, EmailPolicy) or not hasattr(value, "name"):
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

    def flatten(self, msg, unixfrom=False, linesep=None):  # noqa: ANN001, ANN201 - email's signature
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
