"""The ledger-aware delivery loop: send what is still pending, record each outcome the moment it is known.

Messages are composed lazily, one at a time, so 10,000 readers never hold 10,000 e-mails in memory,
and a message already sent in an earlier run is not even built.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from email.utils import make_msgid, parseaddr
from functools import partial
from typing import Any

from prdigest import progress as progress_hook
from prdigest.delivery import Channel, Medium, Message
from prdigest.delivery.compose import compose_messages
from prdigest.delivery.failure import ChannelUnavailable, RecipientRejected
from prdigest.delivery.ledger import Ledger, LedgerRow
from prdigest.errors import DeliveryError
from prdigest.models import Edition
from prdigest.readers import Reader

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Delivery:
    """One reader's copy of one variant for one medium, composed only when it is about to be sent."""

    reader: Reader
    medium: Medium
    variant: str
    compose: Callable[[], Message]
    #: The Message-ID this e-mail gets on its first attempt; the ledger keeps the first one it saw, so
    #: every retry carries the same id.
    message_id: str | None = None

    @property
    def recipient(self) -> str:
        return (self.reader.email if self.medium == "email" else self.reader.slack) or ""

    @property
    def key(self) -> tuple[str, str]:
        return (self.reader.id, self.medium)


def plan_deliveries(
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
) -> list[Delivery]:
    """The deliveries of one rendered variant (same arguments as ``compose_messages``), not yet composed."""
    composer = _Composer(edition=edition, variant=variant, subject=subject, preheader=preheader, html=html,
                         text=text, slack=slack, sender=sender, unsubscribe_template=unsubscribe_template, now=now)
    domain = parseaddr(sender)[1].rpartition("@")[2] or "localhost"
    deliveries: list[Delivery] = []
    for reader in readers:
        if "email" in media and reader.email:
            deliveries.append(Delivery(reader, "email", variant, partial(composer, reader, "email"),
                                       make_msgid(idstring=f"{edition.key}.{reader.id}", domain=domain)))
        if "slack" in media and reader.slack:
            deliveries.append(Delivery(reader, "slack", variant, partial(composer, reader, "slack")))
    return deliveries


class _Composer:
    """Composes one variant's messages. Every reader's headers come from ``compose_messages``; the e-mail
    body, identical for all readers of a variant, is encoded once (quoted-printable encoding of ~70 KB of
    HTML costs ~7 ms a message). The second reader's message is composed in full and compared: should
    bodies ever become personal, every message is composed in full."""

    def __init__(self, **shared: Any) -> None:
        self.shared = shared
        self.body: list | None = None
        self.checked = False
        self.personal = False

    def _full(self, reader: Reader, medium: str, **change: Any) -> Message:
        (message,) = compose_messages(readers=[reader], media=frozenset({medium}), **{**self.shared, **change})
        return message

    def __call__(self, reader: Reader, medium: str) -> Message:
        if medium != "email" or self.personal:
            return self._full(reader, medium)
        if self.body is None or not self.checked:
            message = self._full(reader, medium)
            assert message.email is not None
            parts = message.email.get_payload()
            if self.body is None:
                self.body = parts
            else:
                self.checked = True
                self.personal = _body(parts) != _body(self.body)
            return message
        message = self._full(reader, medium, html="", text="")  # headers only
        assert message.email is not None
        message.email.set_payload(list(self.body))  # the parts are read, never changed, when sent
        return message


def _body(parts: list) -> list[tuple[list[tuple[str, str]], str]]:
    return [(list(p.items()), p.get_payload()) for p in parts]


@dataclass
class LedgerReport:
    """What this run did, per delivery: sent now, failed for good, still pending, or sent before."""

    sent: list[tuple[Delivery, str]] = field(default_factory=list)
    failed: list[tuple[Delivery, str]] = field(default_factory=list)
    pending: list[tuple[Delivery, str]] = field(default_factory=list)
    already: list[tuple[Delivery, LedgerRow]] = field(default_factory=list)

    def as_rows(self) -> dict[str, list[tuple[str, str, str]]]:
        """Plain (reader, medium, provider id or error) tuples per outcome: cheap to return from a task."""
        return {
            "sent": [(d.reader.id, d.medium, pid) for d, pid in self.sent],
            "failed": [(d.reader.id, d.medium, err) for d, err in self.failed],
            "pending": [(d.reader.id, d.medium, err) for d, err in self.pending],
            "already": [(d.reader.id, d.medium, row.provider_id or "") for d, row in self.already],
        }


def deliver_once(
    edition: str,
    deliveries: list[Delivery],
    channels: dict[str, Channel],
    ledger: Ledger,
    progress: Callable[[int, int], None] | None = None,
) -> LedgerReport:
    """Send every delivery the ledger does not hold as sent or failed, each at most once.

    A reader the provider refuses for good is marked failed and the loop moves on; a transient error
    leaves the row pending with its reason; a channel that is down leaves all its remaining rows
    pending (untried) while the other medium goes on. Channels are flushed and closed at the end.
    """
    if any(c.name == "outbox" for c in channels.values()):
        # The outbox is a dry run: marking its rows sent would keep the real run from sending them.
        raise ValueError("deliver_once is for SMTP and Slack; deliver to the outbox with pipeline.deliver")
    report = LedgerReport()
    progress = progress or partial(progress_hook.report, "deliver")
    if not deliveries:
        log.info("%s: nothing to deliver (no reader's filter selects an approved entry)", edition)
    ledger.register(edition, [(d.reader.id, d.medium, d.variant, d.recipient, d.message_id) for d in deliveries])
    rows = ledger.rows(edition)
    todo: list[Delivery] = []
    for delivery in deliveries:
        row = rows[delivery.key]
        if row.status == "pending":
            todo.append(delivery)
        elif row.status == "sent":
            report.already.append((delivery, row))
        else:
            report.failed.append((delivery, row.error or "failed"))
    down: dict[str, str] = {}
    try:
        for done, delivery in enumerate(todo, start=1):
            _deliver_one(edition, delivery, rows[delivery.key], channels, ledger, down, report)
            progress(done, len(todo))
    finally:
        for channel in {id(c): c for c in channels.values()}.values():
            try:
                channel.flush()
            finally:
                channel.close()
    return report


def _deliver_one(edition: str, delivery: Delivery, row: LedgerRow, channels: dict[str, Channel],
                 ledger: Ledger, down: dict[str, str], report: LedgerReport) -> None:
    key = delivery.key
    channel = channels.get(delivery.medium)
    if channel is None or delivery.medium in down:
        reason = down.get(delivery.medium) or f"no {delivery.medium} channel configured for this run"
        ledger.retry_later(edition, key, f"not attempted: {reason}", attempted=False)
        report.pending.append((delivery, reason))
        return
    message = delivery.compose()
    if message.email is not None and row.message_id:
        # Every attempt of this row carries the same Message-ID: should a crash fall between the
        # server's 250 and our commit, the copy sent again is recognisably the same message.
        del message.email["Message-ID"]
        message.email["Message-ID"] = row.message_id
    try:
        if getattr(channel, "resumable", False):
            # A multi-part message (a Slack thread) resumes after the parts a previous run posted.
            provider_id = channel.push(  # type: ignore[call-arg]
                message, resume=json.loads(row.checkpoint) if row.checkpoint else None,
                on_part=lambda point: ledger.checkpoint(edition, key, asdict(point), point.first))
        else:
            provider_id = channel.push(message)
    except RecipientRejected as exc:
        ledger.failed(edition, key, str(exc))
        report.failed.append((delivery, str(exc)))
        log.warning("%s: %s to %s failed for good: %s", delivery.reader.id, delivery.medium,
                    delivery.recipient, exc)
    except ChannelUnavailable as exc:
        down[delivery.medium] = str(exc)
        ledger.retry_later(edition, key, str(exc))
        report.pending.append((delivery, str(exc)))
        log.warning("%s is unavailable, its messages stay pending: %s", channel.name, exc)
    except DeliveryError as exc:
        ledger.retry_later(edition, key, str(exc))
        report.pending.append((delivery, str(exc)))
    else:
        ledger.sent(edition, key, provider_id)
        report.sent.append((delivery, provider_id))
