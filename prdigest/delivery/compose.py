"""Turn one rendered variant into the messages its readers receive."""

from __future__ import annotations

from datetime import datetime

from prdigest.delivery import Message
from prdigest.delivery.email_message import build_email, unsubscribe_link
from prdigest.models import Edition
from prdigest.readers import Reader


def compose_messages(
    *,
    edition: Edition,
    variant: str,
    readers: list[Reader],
    subject: str,
    preheader: str,
    html: str,
    text: str,
    slack: list[dict],
    sender: str,
    unsubscribe_template: str | None,
    media: frozenset[str] = frozenset({"email", "slack"}),
    now: datetime | None = None,
) -> list[Message]:
    """One message per reader and medium they have (email, Slack), all sharing the variant's rendering."""
    messages: list[Message] = []
    for reader in readers:
        if reader.email and "email" in media:
            email = build_email(
                edition=edition, reader=reader, subject=subject, preheader=preheader, html=html, text=text,
                sender=sender, unsubscribe=unsubscribe_link(unsubscribe_template, reader), now=now,
            )
            messages.append(Message(reader=reader, variant=variant, medium="email", email=email))
        if reader.slack and "slack" in media:
            messages.append(Message(reader=reader, variant=variant, medium="slack", slack=slack))
    return messages
