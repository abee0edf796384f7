"""Delivery: the message one reader gets on one medium, and the ``Channel`` protocol that carries it.

A channel is a provider (SMTP, Slack, a folder): it does not know how a medium's payload was made.
What a medium *is* (how it renders, composes and is addressed) lives in :mod:`prdigest.deliver.media`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from prdigest.readers.file import Reader


@dataclass
class Message:
    """One reader's copy of one variant, ready for one medium's channel."""

    reader: Reader
    variant: str
    medium: str
    #: The address on this medium (an e-mail address, a Slack channel, a URL).
    recipient: str
    #: What the medium's channel carries: an ``EmailMessage``, a list of Slack payloads, ...
    payload: Any


@dataclass(frozen=True)
class Parts:
    """How far a multi-part message (a Slack thread) got, for channels that send in several parts.

    ``resume`` is the checkpoint a previous attempt recorded (or None); the channel calls ``on_part``
    with the new checkpoint (and the provider id of the first part) after each accepted part, so a
    crash mid-thread resumes after the last accepted part instead of posting the parent again.
    """

    resume: dict | None
    on_part: Callable[[dict, str | None], None]


class Channel(Protocol):
    """Hands messages to a provider.

    Contract: ``check`` connects and authenticates (a preflight, before anything is drafted or sent) and
    raises :class:`prdigest.kernel.errors.ConfigError` naming the setting to fix; ``push`` returns the
    provider's id for the message (Message-ID, Slack ``ts``, a file path) only once the provider has
    accepted all of it, and raises :class:`prdigest.kernel.errors.DeliveryError` (or one of the subclasses in
    :mod:`prdigest.deliver.failure`) otherwise; a channel that sends in parts honours ``parts`` and
    others ignore it; ``flush`` waits for anything buffered; ``close`` releases connections and is safe
    to call twice.
    """

    name: str

    def check(self) -> None: ...

    def push(self, message: Message, parts: Parts | None = None) -> str: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...
