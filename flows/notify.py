"""Telling the editors (readers file ``editors:``) that an edition waits for their review."""

from __future__ import annotations

from datetime import datetime, timezone
from email.message import EmailMessage
from email.utils import format_datetime, formataddr, make_msgid, parseaddr
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from flows.media import default_media
from prdigest.config import Settings
from prdigest.delivery import Channel, Message
from prdigest.delivery.email_message import header_text
from prdigest.errors import ConfigError, DeliveryError
from prdigest.models import Edition
from prdigest.readers import Editor, Reader
from prdigest.services import RunOptions, make_channels, sender
from prdigest.text import slug
from renderers.feishu import notice_card


def notify_editors(edition: Edition, editors: list[Editor], options: RunOptions, settings: Settings,
                   flow_run_id: Any, url: str | None, deadline: datetime,
                   channels: dict[str, Channel] | None = None) -> list[str]:
    """Tell each editor that a review is waiting, through the run's channels (email, Slack, Feishu): ``channels``
    when the run passes its own (built once: their warnings are logged once per run), else built here.

    Returns what each channel gave back; a failure is logged and never blocks the review.
    """
    logger = get_run_logger()
    if not editors:
        logger.info("no editors in the readers file: nobody is notified that %s waits for review", edition.name)
        return []
    if channels is None:
        try:
            channels = make_channels(options, settings, Path(options.out), default_media(options.deliver))
        except (ConfigError, DeliveryError) as exc:
            logger.warning("editors not notified: %s", exc)
            return []
    link = url or f"flow run {flow_run_id} (no PREFECT_UI_URL set)"
    text = (f"{edition.name}: {len(edition.entries)} draft entries wait for your review until "
            f"{deadline:%Y-%m-%d %H:%M} UTC{_flagged_note(edition)}. Open {link} and click Resume (in the new UI: "
            f"under the ⋮ menu), or run `digest approve {flow_run_id} --all`. Nothing is sent until an editor "
            "approves.")
    results: list[str] = []
    for i, editor in enumerate(editors, start=1):
        for message in _messages(edition, editor, i, text, set(channels), sender(settings)):
            try:
                results.append(channels[message.medium].push(message))
            except DeliveryError as exc:
                logger.warning("could not tell editor %s (%s) that a review waits: %s", editor.name,
                               message.medium, exc)
    for channel in {id(c): c for c in channels.values()}.values():
        channel.flush()
        channel.close()
    logger.info("told %d editor(s) that %s waits for review", len(editors), edition.name)
    return results


def _flagged_note(edition: Edition) -> str:
    flagged = sum(e.flagged for e in edition.entries)
    return f" ({flagged} flagged: not sent unless you approve them by name)" if flagged else ""


def _messages(edition: Edition, editor: Editor, index: int, text: str, media: set[str],
              from_address: str) -> list[Message]:
    """The notification for one editor, one message per medium the editor has and the run can send."""
    reader = Reader(id=f"editor-{slug(editor.name, limit=40) or index}", name=editor.name, email=editor.email,
                    slack=editor.slack, feishu=editor.feishu)
    messages: list[Message] = []
    if editor.email and "email" in media:
        messages.append(Message(reader=reader, variant="review", medium="email", recipient=editor.email,
                                payload=_review_email(edition, reader, text, from_address)))
    if editor.slack and "slack" in media:
        # & < > are Slack's only control characters: escaped, the text can neither ping nor link.
        safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        messages.append(Message(reader=reader, variant="review", medium="slack", recipient=editor.slack,
                                payload=[{"text": safe, "unfurl_links": False, "unfurl_media": False}]))
    if editor.feishu and "feishu" in media:
        # One card; the text is escaped card markdown (no mention can come from an edition's name).
        messages.append(Message(reader=reader, variant="review", medium="feishu", recipient=editor.feishu,
                                payload=[notice_card(f"Review waiting: {edition.name}", text)]))
    return messages


def _review_email(edition: Edition, reader: Reader, text: str, from_address: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = f"Review waiting: {edition.name}"
    msg["From"] = from_address
    msg["To"] = formataddr((header_text(reader.name), reader.email or ""))
    msg["Date"] = format_datetime(datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"review.{edition.key}",
                                   domain=parseaddr(from_address)[1].rpartition("@")[2] or "localhost")
    msg.set_content(text + "\n")
    return msg
