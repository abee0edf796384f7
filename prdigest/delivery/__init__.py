"""Delivery: one ``Channel`` protocol for the outbox, SMTP and Slack, and the message they carry."""

from __future__ import annotations

from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Literal, Protocol

from prdigest.readers import Reader

Medium = Literal["email", "slack"]


@dataclass
class Message:
    """One reader's copy of one variant, ready for one medium."""

    reader: Reader
    variant: str
    medium: Medium
    email: EmailMessage | None = None
    #: ``chat.postMessage`` payloads (parent first) without ``channel``; replies carry ``"thread": True``.
    slack: list[dict] = field(default_factory=list)

    @property
    def recipient(self) -> str:
        return (self.reader.email if self.medium == "email" else self.reader.slack) or ""


class Channel(Protocol):
    """Hands messages to a provider.

    Contract: ``push`` returns the provider's id for the message (Message-ID, Slack ``ts``, a file path)
    only once the provider has accepted it, and raises :class:`prdigest.errors.DeliveryError` otherwise;
    ``flush`` waits for anything buffered; ``close`` releases connections and is safe to call twice.
    """

    name: str

    def push(self, message: Message) -> str: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
