"""The delivery loop: one path for every medium and channel, with or without the ledger.

With a ledger (real channels), every message the ledger does not already hold as sent or failed is
pushed, and each outcome is recorded the moment it is known; without one (the outbox, a dry run),
every message is pushed and nothing is recorded. Messages are composed lazily, one at a time, so
10,000 readers never hold 10,000 e-mails in memory, and a message already sent is not even built.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from enum import Enum

from prdigest.delivery import Channel, Message, Parts
from prdigest.delivery.failure import ChannelUnavailable, RecipientRejected
from prdigest.delivery.ledger import Ledger, LedgerRow
from prdigest.errors import DeliveryError
from prdigest.media import ComposeContext, Medium, Rendering
from prdigest.readers import Reader

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Delivery:
    """One reader's copy of one variant on one medium, composed only when it is about to be pushed."""

    reader: Reader
    medium: str
    variant: str
    recipient: str
    compose: Callable[[str | None], object]
    #: The id this message gets on its first attempt (e-mail's Message-ID); the ledger keeps the
    #: first one it saw, so every retry carries the same id.
    message_id: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.reader.id, self.medium)

    def message(self, message_id: str | None = None) -> Message:
        """The composed message (with the ledger's id for it, when it has one)."""
        return Message(reader=self.reader, variant=self.variant, medium=self.medium, recipient=self.recipient,
                       payload=self.compose(message_id or self.message_id))


def plan_deliveries(variants: list[tuple[list[Reader], dict[str, Rendering]]], media: list[Medium],
                    context: ComposeContext) -> list[Delivery]:
    """The deliveries of each variant (its readers and its rendering per medium) on the given media, in
    order: variant by variant, reader by reader, medium by medium. Not yet composed."""
    deliveries: list[Delivery] = []
    for readers, renderings in variants:
        composers = {m.name: m.composer(renderings[m.name], context) for m in media if m.name in renderings}
        for reader in readers:
            for medium in media:
                address = medium.address(reader)
                if medium.name in composers and address:
                    deliveries.append(Delivery(reader, medium.name, renderings[medium.name].variant, address,
                                               partial(composers[medium.name], reader),
                                               medium.message_id(context, reader)))
    return deliveries


class Outcome(str, Enum):
    """What happened to one delivery in one run."""

    SENT = "sent"          # the provider accepted it now
    FAILED = "failed"      # refused for good (now or by an earlier run): not retried
    PENDING = "pending"    # not sent (transient error, channel down): the next run retries it
    ALREADY = "already"    # sent by an earlier run of this edition: not sent again


@dataclass(frozen=True)
class DeliveryResult:
    """One delivery's outcome: the provider id when sent, the reason otherwise."""

    reader: str
    medium: str
    variant: str
    recipient: str
    outcome: Outcome
    detail: str = ""


@dataclass
class DeliveryReport:
    """Every delivery's outcome in one run, in the order they were tried."""

    results: list[DeliveryResult] = field(default_factory=list)

    def of(self, outcome: Outcome) -> list[DeliveryResult]:
        return [r for r in self.results if r.outcome is outcome]

    @property
    def sent(self) -> list[DeliveryResult]:
        return self.of(Outcome.SENT)

    @property
    def failed(self) -> list[DeliveryResult]:
        return self.of(Outcome.FAILED)

    @property
    def pending(self) -> list[DeliveryResult]:
        return self.of(Outcome.PENDING)

    @property
    def already(self) -> list[DeliveryResult]:
        return self.of(Outcome.ALREADY)

    def add(self, delivery: Delivery, outcome: Outcome, detail: str = "") -> None:
        self.results.append(DeliveryResult(delivery.reader.id, delivery.medium, delivery.variant,
                                           delivery.recipient, outcome, detail))


def deliver(
    edition: str,
    deliveries: list[Delivery],
    channels: dict[str, Channel],
    ledger: Ledger | None,
    progress: Progress | None = None,
) -> DeliveryReport:
    """Push every delivery through its medium's channel, each at most once when there is a ledger.

    A reader the provider refuses for good is failed and the loop moves on; a transient error leaves
    it pending with its reason; a channel that is down leaves all its remaining deliveries pending
    (untried) while the other media go on. Channels are flushed and closed at the end.
    """
    if ledger is not None and any(c.name == "outbox" for c in channels.values()):
        # The outbox is a dry run: rows it marked sent would keep the real run from sending them.
        raise ValueError("the outbox is a dry run: deliver to it without a ledger (ledger=None)")
    report = DeliveryReport()
    rows: dict[tuple[str, str], LedgerRow] = {}
    todo = deliveries
    if not deliveries:
        log.info("%s: nothing to deliver (no reader's filter selects an approved entry)", edition)
    if ledger is not None:
        ledger.register(edition, [(d.reader.id, d.medium, d.variant, d.recipient, d.message_id)
                                  for d in deliveries])
        rows = ledger.rows(edition)
        todo = []
        for delivery in deliveries:
            row = rows[delivery.key]
            if row.status == "pending":
                todo.append(delivery)
            elif row.status == "sent":
                report.add(delivery, Outcome.ALREADY, row.provider_id or "")
            else:
                report.add(delivery, Outcome.FAILED, row.error or "failed")
    down: dict[str, str] = {}
    try:
        for done, delivery in enumerate(todo, start=1):
            _deliver_one(edition, delivery, rows.get(delivery.key), channels, ledger, down, report)
            if progress is not None:
                progress(done, len(todo))
    finally:
        for channel in {id(c): c for c in channels.values()}.values():
            try:
                channel.flush()
            finally:
                channel.close()
    return report


def _deliver_one(edition: str, delivery: Delivery, row: LedgerRow | None, channels: dict[str, Channel],
                 ledger: Ledger | None, down: dict[str, str], report: DeliveryReport) -> None:
    key = delivery.key
    channel = channels.get(delivery.medium)
    if channel is None or delivery.medium in down:
        reason = down.get(delivery.medium) or f"no {delivery.medium} channel configured for this run"
        if ledger is not None:
            ledger.retry_later(edition, key, f"not attempted: {reason}", attempted=False)
        report.add(delivery, Outcome.PENDING, reason)
        return
    message = delivery.message(row.message_id if row else None)
    parts = None
    if ledger is not None and row is not None:
        # A multi-part message (a Slack thread) resumes after the parts a previous run posted.
        parts = Parts(resume=json.loads(row.checkpoint) if row.checkpoint else None,
                      on_part=lambda point, first: ledger.checkpoint(edition, key, point, first))
    try:
        provider_id = channel.push(message, parts)
    except RecipientRejected as exc:
        if ledger is not None:
            ledger.failed(edition, key, str(exc))
        report.add(delivery, Outcome.FAILED, str(exc))
        log.warning("%s: %s to %s failed for good: %s", delivery.reader.id, delivery.medium,
                    delivery.recipient, exc)
    except ChannelUnavailable as exc:
        down[delivery.medium] = str(exc)
        if ledger is not None:
            ledger.retry_later(edition, key, str(exc))
        report.add(delivery, Outcome.PENDING, str(exc))
        log.warning("%s is unavailable, its messages stay pending: %s", channel.name, exc)
    except DeliveryError as exc:
        if ledger is not None:
            ledger.retry_later(edition, key, str(exc))
        report.add(delivery, Outcome.PENDING, str(exc))
    else:
        if ledger is not None:
            ledger.sent(edition, key, provider_id)
        report.add(delivery, Outcome.SENT, provider_id)
