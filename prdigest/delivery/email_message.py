"""Build the RFC 5322 message for one reader from a rendered email (shared by the outbox and SMTP)."""

from __future__ import annotations

import re
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid, parseaddr
from datetime import datetime, timezone
from urllib.parse import quote

from prdigest.errors import ConfigError
from prdigest.models import Edition
from prdigest.readers import Reader

_HEADER_UNSAFE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


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
    msg = EmailMessage()
    msg["Subject"] = header_text(subject)
    msg["From"] = sender
    msg["To"] = formataddr((header_text(reader.name, 120), reader.email))
    msg["Date"] = format_datetime(now or datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"{edition.key}.{reader.id}", domain=domain)
    list_slug = re.sub(r"[^a-z0-9-]+", "-", edition.repo.lower()).strip("-")
    msg["List-Id"] = f"{header_text(edition.repo)} digest <{list_slug}.pr-digest.{domain}>"
    if unsubscribe:
        msg["List-Unsubscribe"] = f"<{header_text(unsubscribe, 900)}>"
        if unsubscribe.startswith("https://"):
            msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg["X-Digest-Edition"] = edition.key
    msg["X-Digest-Preheader"] = header_text(preheader)
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    return msg
