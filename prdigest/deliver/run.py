"""The delivery loop: one path for every medium and channel, with or without the ledger.

With a ledger, each pending row is claimed before its message is pushed, so concurrent runs and workers
share the work and never push the same row; each outcome is recorded the moment it is known, except on a
channel that writes locally (the outbox: ``batches``), whose claimed rows are recorded as begun together,
written, and recorded together. Without a ledger, every message is pushed and nothing is recorded. Messages
are composed lazily, one at a time, so 10,000 readers never hold 10,000 e-mails in memory, and a
message already sent is not even built. Variants go one after another (their rows claimed variant by
variant): a variant's renderings are made for its first message and dropped before the next variant's. One
reader's failure (composing or pushing) never stops the others; a state database that cannot record a step
stops the loop before anything unrecorded is sent.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum

from prdigest.deliver import Channel, Message, Parts
from prdigest.deliver.failure import ChannelUnavailable, MaybeDelivered, RecipientRejected
from prdigest.deliver.ledger import Ledger, LedgerRow, LedgerUnavailable, end_owner, new_owner
from prdigest.deliver.media import ComposeContext, Composer, Medium, Rendering
from prdigest.deliver.places import Places
from prdigest.kernel.errors import DeliveryError
from prdigest.kernel.models import EditionId
from prdigest.readers.file import Reader

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Delivery:
    """One reader's copy of one variant on one medium, composed only when it is about to be pushed."""

    reader: Reader
    medium: str
    variant: str
    recipient: str
    compose: Callable[[str | None], object]
    #: Makes the id this message gets on its first attempt (e-mail's Message-ID), one medium's for every message
    #: of a plan: the id is made when the ledger registers the row, which keeps the first one it saw so every retry
    #: carries the same id, or (without a ledger) when the message is composed. Not held per message: ~170 bytes
    #: each, 7,759 e-mails at 10,000 readers, from the plan to the end of delivery (issue 38).
    ids: "MessageIds | None" = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.reader.id, self.medium)

    def new_message_id(self) -> str | None:
        """A new id for this message's first attempt (None for media whose provider assigns ids)."""
        return self.ids(self.reader) if self.ids is not None else None

    def message(self, message_id: str | None = None) -> Message:
        """The composed message (with the ledger's id for it, when it has one; else a new one)."""
        return Message(reader=self.reader, variant=self.variant, medium=self.medium, recipient=self.recipient,
                       payload=self.compose(message_id or self.new_message_id()))


@dataclass(frozen=True, slots=True)
class MessageIds:
    """One medium's ids for a plan's messages (:attr:`Medium.message_id` in the plan's compose context)."""

    make: Callable[[ComposeContext, Reader], str | None]
    context: ComposeContext

    def __call__(self, reader: Reader) -> str | None:
        return self.make(self.context, reader)


#: The outbox's rows in the ledger are its own (``outbox-email``), never a real medium's.
OUTBOX_PREFIX = "outbox-"


def outbox_routes(deliveries: list[Delivery], channels: dict[str, Channel]) -> tuple[list[Delivery],
                                                                                    dict[str, Channel]]:
    """Deliveries to the outbox under media of their own (``outbox-email``): recorded in the ledger like any
    other (a re-run writes nothing twice, ``digest status`` lists them), apart from a real run's rows."""
    routed = {m: c for m, c in channels.items() if c.name == "outbox"}
    # one name per medium, not one string per message (11,549 at 10,000 readers, held to delivery's end)
    names = {m: OUTBOX_PREFIX + m for m in routed}
    moved = [replace(d, medium=names[d.medium]) if d.medium in names else d for d in deliveries]
    return moved, {**{m: c for m, c in channels.items() if m not in routed},
                   **{OUTBOX_PREFIX + m: c for m, c in routed.items()}}


@dataclass(frozen=True)
class Deferred:
    """One variant's renderings before they are made: its key, the media it is rendered on, and how to render
    them. :func:`plan_deliveries` makes them when the variant's first message is composed."""

    variant: str
    media: frozenset[str]
    make: Callable[[], Mapping[str, Rendering]]


def plan_deliveries(variants: list[tuple[list[Reader], Mapping[str, Rendering] | Deferred]], media: list[Medium],
                    context: ComposeContext) -> list[Delivery]:
    """The deliveries of each variant (its readers and its rendering per medium, made or :class:`Deferred`) on
    the given media, in order: variant by variant, reader by reader, medium by medium. Not yet composed.

    A variant's composers (and its renderings, when deferred) are made when its first message is composed and
    dropped when another variant's are made: one variant's at a time, so delivering variant after variant (as
    :func:`deliver` does) holds one variant in memory and makes each once."""
    deliveries: list[Delivery] = []
    by_name = {m.name: m for m in media}
    current: dict[int, dict[str, Composer]] = {}  # the variant being composed (at most one entry)

    def compose(planned: Deferred, medium: str, reader: Reader, message_id: str | None) -> object:
        composers = current.get(id(planned))
        if composers is None:
            current.clear()  # the previous variant's renderings and composers go before this one's are made
            renderings = planned.make()
            composers = {name: by_name[name].composer(renderings[name], context)
                         for name in by_name if name in renderings}
            current[id(planned)] = composers
        return composers[medium](reader, message_id)

    ids = {m.name: MessageIds(m.message_id, context) for m in media}
    for readers, renderings in variants:
        if isinstance(renderings, Deferred):
            planned = renderings
        else:
            def made(renderings: Mapping[str, Rendering] = renderings) -> Mapping[str, Rendering]:
                return renderings
            planned = Deferred(next((r.variant for r in renderings.values()), ""), frozenset(renderings), made)
        for reader in readers:
            for medium in media:
                address = medium.address(reader)
                if medium.name in planned.media and address:
                    deliveries.append(Delivery(reader, medium.name, planned.variant, address,
                                               _Compose(compose, planned, medium.name, reader),
                                               ids[medium.name]))
    return deliveries


class _Compose:
    """One delivery's compose: ``compose(planned, medium, reader, message_id)`` for its variant, medium and reader.
    Slotted: a plan holds one per message (11,549 at 10,000 readers), ~100 bytes fewer each than a partial."""

    __slots__ = ("compose", "planned", "medium", "reader")

    def __init__(self, compose: Callable[[Deferred, str, Reader, str | None], object], planned: Deferred,
                 medium: str, reader: Reader) -> None:
        self.compose, self.planned, self.medium, self.reader = compose, planned, medium, reader

    def __call__(self, message_id: str | None) -> object:
        return self.compose(self.planned, self.medium, self.reader, message_id)


class Outcome(str, Enum):
    """What happened to one delivery in one run."""

    SENT = "sent"          # the provider accepted it now
    FAILED = "failed"      # refused for good (now or by an earlier run): not retried
    PENDING = "pending"    # not sent (transient error, channel down): the next run retries it
    ALREADY = "already"    # sent by an earlier run of this edition (or a concurrent one): not sent again
    UNCERTAIN = "uncertain"  # it may have reached the provider: not resent unless an operator asks
    ELSEWHERE = "elsewhere"  # another deliverer holds it right now (a concurrent run or worker)


@dataclass(frozen=True, slots=True)
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

    @property
    def uncertain(self) -> list[DeliveryResult]:
        return self.of(Outcome.UNCERTAIN)

    def add(self, delivery: Delivery, outcome: Outcome, detail: str = "") -> None:
        self.results.append(_result(delivery, outcome, detail))


def _result(delivery: Delivery, outcome: Outcome, detail: str = "") -> DeliveryResult:
    return DeliveryResult(delivery.reader.id, delivery.medium, delivery.variant, delivery.recipient, outcome, detail)


@dataclass(frozen=True)
class Retry:
    """How a run tries again the deliveries a transient failure left pending (a 451 greylisting answer, a
    Slack 500, a provider down for a moment): ``attempts`` more passes over them, waiting ``delay`` seconds
    before the first and twice as long before each next one (30 s, 60 s, 120 s by default: a greylisting
    server asks for a few minutes). What is still pending after the last pass stays pending: the run says so
    and exits non-zero, and ``digest resend EDITION --pending`` sends it later."""

    attempts: int = 3
    delay: float = 30.0

    def waits(self) -> list[float]:
        return [self.delay * 2 ** i for i in range(max(self.attempts, 0))]


#: No retry within the run (tests of one pass, the outbox).
NO_RETRY = Retry(attempts=0)

#: Rows claimed per transaction: few enough that a stopped deliverer holds little, many enough that
#: claiming costs a small share of the writes.
CLAIM_BATCH = 8


def deliver(
    edition: EditionId | str,
    deliveries: list[Delivery],
    channels: dict[str, Channel],
    ledger: Ledger | None,
    progress: Progress | None = None,
    retry: Retry = NO_RETRY,
) -> DeliveryReport:
    """Push every delivery through its medium's channel, each at most once when there is a ledger.

    ``edition`` is the edition's identity (its ledger key is derived from it and recorded), or a ledger key.
    A reader the provider refuses for good, or whose message cannot be composed, is failed and the loop
    moves on; a transient error leaves it pending with its reason; a failure after the message may have
    reached the provider marks it uncertain; a channel that is down leaves all its remaining deliveries
    pending (untried) while the other media go on; with ``retry``, what a transient failure left pending is
    tried again after a wait, a bounded number of times. Channels are flushed and closed at the end. Raises
    :class:`LedgerUnavailable` (one line) when the state database cannot record a step.
    """
    if ledger is not None and any(c.name == "outbox" and not m.startswith(OUTBOX_PREFIX) for m, c in channels.items()):
        # Rows the outbox marked sent under a real medium's name would keep a real run from sending them.
        raise ValueError(f"deliver to the outbox under its own media ({OUTBOX_PREFIX}email, …): see outbox_routes")
    name = edition.name if isinstance(edition, EditionId) else edition
    if not deliveries:
        log.info("%s: nothing to deliver (no reader's filter selects an approved entry)", name)
    try:
        if ledger is None:
            report, down = DeliveryReport(), dict[str, str]()
            for done, delivery in enumerate(deliveries, start=1):
                _Attempt(delivery, None, "", None, "", report).run(channels, down)
                if progress is not None:
                    progress(done, len(deliveries))
            return report
        key = ledger.edition(edition) if isinstance(edition, EditionId) else edition
        return _Claims(key, deliveries, ledger, progress).run(channels, retry)
    finally:
        for channel in {id(c): c for c in channels.values()}.values():
            try:
                channel.flush()
            finally:
                channel.close()


class _Claims:
    """One deliverer's pass over an edition's rows: claim a few pending rows, push each under its claim,
    record the outcome; variant by variant first, then repeat until no pending row of ours is left."""

    def __init__(self, key: str, deliveries: list[Delivery], ledger: Ledger, progress: Progress | None) -> None:
        self.key, self.ledger, self.progress = key, ledger, progress
        self.deliveries = deliveries
        # Each (reader, medium) at its place in the plan (its last, should one appear twice); the results and
        # what was tried are kept by place: per message a slot and a byte, where dictionaries and sets keyed by
        # the claimed rows' own (reader, medium) strings held ~0.4 KB a message to the run's end (issue 38).
        self.place = Places((d.reader.id, d.medium) for d in deliveries)
        self.results: list[DeliveryResult | None] = [None] * len(deliveries)
        self.tried = bytearray(len(deliveries))

    def run(self, channels: dict[str, Channel], retry: Retry = NO_RETRY) -> DeliveryReport:
        ledger, key = self.ledger, self.key
        ledger.register(key, _Planned([self.deliveries[i] for i in self.places()]))
        released, uncertain = ledger.recover(key)
        if released or uncertain:
            log.warning("%s: %d claim(s) of stopped deliverers returned to pending, %d became uncertain "
                        "(their push had begun)", key, released, uncertain)
        total = sum(1 for k in ledger.each_key(key, ("pending", "sending")) if k in self.place)
        owner = new_owner()
        self.done, self.total = 0, total
        try:
            self._pass(channels, owner, {})
            waits = retry.waits()
            for number, wait in enumerate(waits, start=2):
                again = [i for i, r in enumerate(self.results)
                         if r is not None and r.outcome is Outcome.PENDING and r.medium in channels]
                if not again:
                    break
                reasons = sorted({r.detail for i in again if (r := self.results[i]) is not None})
                log.warning("%s: %d deliver%s left pending (%s%s): trying again in %g s (pass %d of %d)", key,
                            len(again), "y" if len(again) == 1 else "ies", reasons[0][:200],
                            f"; and {len(reasons) - 1} other reason(s)" if len(reasons) > 1 else "", wait, number,
                            len(waits) + 1)
                time.sleep(wait)
                for i in again:
                    self.tried[i] = 0
                self.total += len(again)
                self._pass(channels, owner, {})  # a channel that was down is tried again too
        finally:
            ledger_safe(lambda: ledger.release_all(key, owner))
            end_owner(owner)
        return self._report()

    def _pass(self, channels: dict[str, Channel], owner: str, down: dict[str, str]) -> None:
        """Claim and push every pending row of ours not yet tried in this pass (and rows given back meanwhile).

        Variant by variant first, in the plan's order (each variant's readers' rows claimed together, with the
        next variants' while they fit one claim: :meth:`_chunks`), so a variant's renderings are made once for
        its first message and dropped after its last; then every
        pending row of the edition in (reader, medium) order, until none of ours is left: rows a stopped or
        concurrent deliverer gave back meanwhile."""
        for readers in self._chunks(self._pending()):
            self._claim(channels, owner, down, readers)
        while self._claim(channels, owner, down) and self._others_left():
            pass

    def _pending(self) -> bytearray:
        """Which of the plan's places have a pending row, read from the ledger a page at a time: a byte a place,
        where a set of every pending row's (reader, medium) held ~0.2 KB a row while the claims were planned."""
        pending = bytearray(len(self.deliveries))
        for k in self.ledger.each_key(self.key, ("pending",)):
            i = self.place.get(k)
            if i is not None:
                pending[i] = 1
        return pending

    def _chunks(self, pending_rows: bytearray) -> list[list[str]]:
        """The readers to claim for, chunk by chunk, in the plan's order: the readers of consecutive variants
        together as long as their pending rows fit one claim (:data:`CLAIM_BATCH`), so 10,000 readers in
        thousands of small variants are not a claim (and, in the outbox, three commits) per variant; a variant
        with more rows than that alone, :data:`CLAIM_BATCH` readers at a time."""
        pending: dict[str, int] = {}
        for i in self.places():
            if pending_rows[i] and not self.tried[i]:
                reader = self.deliveries[i].reader.id
                pending[reader] = pending.get(reader, 0) + 1
        chunks: list[list[str]] = []
        current: list[str] = []
        count = 0
        for readers in self._variants(pending_rows):
            n = sum(pending.get(r, 0) for r in readers)
            if n > CLAIM_BATCH:
                chunks += [readers[start:start + CLAIM_BATCH] for start in range(0, len(readers), CLAIM_BATCH)]
                continue
            if current and count + n > CLAIM_BATCH:
                chunks.append(current)
                current, count = [], 0
            current = current + readers
            count += n
        if current:
            chunks.append(current)
        return chunks

    def _variants(self, pending_rows: bytearray) -> list[list[str]]:
        """The readers with a pending row of ours not yet tried, grouped by variant in the plan's order."""
        groups: dict[str, list[str]] = {}
        for i in self.places():
            delivery = self.deliveries[i]
            k = delivery.key
            readers = groups.setdefault(delivery.variant, [])
            if pending_rows[i] and not self.tried[i] and (not readers or readers[-1] != k[0]):
                readers.append(k[0])
        return [readers for readers in groups.values() if readers]

    def _claim(self, channels: dict[str, Channel], owner: str, down: dict[str, str],
               readers: list[str] | None = None) -> int:
        """Claim pending rows (of ``readers`` only, when given) a few at a time, push ours not yet tried and
        give the others back. How many of ours were tried."""
        ledger, key = self.ledger, self.key
        fresh = 0
        after: tuple[str, str] | None = None
        while claimed := ledger.claim(key, owner, after, CLAIM_BATCH, readers=readers):
            after = claimed[-1].key
            mine = [r for r in claimed if self._untried(r.key)]
            mine.sort(key=lambda r: self.place[r.key])  # the plan's order: a variant's rows one after another
            # Rows another run planned (another readers file), or ours already tried in this pass.
            ledger.release(key, [r.key for r in claimed if r not in mine], owner)
            if mine and all(getattr(channels.get(r.medium), "batches", False) for r in mine):
                self._batch(mine, channels, owner, down)
                fresh += len(mine)
                continue
            for row in mine:  # if this stops midway, the finally of run() gives the rest back
                i = self.place[row.key]
                self.tried[i] = 1
                fresh += 1
                report = DeliveryReport()
                _Attempt(self.deliveries[i], row, key, ledger, owner, report).run(channels, down)
                self._result(i, report)
        return fresh

    def places(self) -> list[int]:
        """The places of the plan's deliveries, one per (reader, medium), in the plan's order."""
        return self.place.ordered()

    def _untried(self, k: tuple[str, str]) -> bool:
        """Whether (reader, medium) ``k`` is one of ours not yet tried in this pass."""
        i = self.place.get(k)
        return i is not None and not self.tried[i]

    def _result(self, i: int, report: DeliveryReport) -> None:
        self.results[i] = report.results[0]
        self.done += 1
        if self.progress is not None:
            self.progress(self.done, max(self.total, self.done))

    def _batch(self, rows: list[LedgerRow], channels: dict[str, Channel], owner: str, down: dict[str, str]) -> None:
        """Claimed rows whose channels write locally (the outbox: ``batches = True``), in three commits however
        many rows: every push recorded as begun, the files written, every outcome recorded. A crash between the
        first and the last leaves the rows begun and not recorded ``uncertain`` (never shown as sent unwritten,
        never lost), where one row at a time would leave one."""
        ledger, key = self.ledger, self.key
        attempts = []
        for row in rows:
            i = self.place[row.key]
            self.tried[i] = 1
            attempt = _Attempt(self.deliveries[i], row, key, ledger, owner, DeliveryReport())
            attempts.append((i, attempt, attempt.prepare(channels, down)))
        with ledger.outcomes():
            started = ledger.start_many(key, [a.delivery.key for _, a, ready in attempts if ready is not None], owner)
            for _, attempt, ready in attempts:
                if ready is None:
                    continue  # not attempted or not composed: its outcome is recorded already
                delivery = attempt.delivery
                if delivery.key not in started:
                    attempt.report.add(delivery, Outcome.ELSEWHERE, "the claim ran out and another deliverer took it")
                elif delivery.medium in down:  # the channel went down earlier in this batch: not pushed
                    attempt._pending(down[delivery.medium])
                else:
                    attempt.push(*ready, down)
        for i, attempt, _ in attempts:
            self._result(i, attempt.report)

    def _others_left(self) -> bool:
        """Whether rows of ours went back to pending meanwhile (a claim another deliverer gave back)."""
        return any(self._untried(k) for k in self.ledger.each_key(self.key, ("pending",)))

    def _report(self) -> DeliveryReport:
        """Every delivery's outcome in the plan's order: this run's, and for the rows it did not try (sent by an
        earlier run, held by another deliverer) what the ledger says, read a page at a time and only then."""
        untried: dict[int, DeliveryResult] = {}
        places = self.places()
        if any(self.results[i] is None for i in places):
            for k, status, error, provider_id, owner in self.ledger.outcomes_of(self.key):
                i = self.place.get(k)
                if i is None or self.results[i] is not None:
                    continue
                delivery = self.deliveries[i]
                outcome, detail = {
                    "sent": (Outcome.ALREADY, provider_id or ""),
                    "failed": (Outcome.FAILED, error or "failed"),
                    "uncertain": (Outcome.UNCERTAIN, f"{error or 'uncertain'} (not resent: digest resend --uncertain)"),
                    "sending": (Outcome.ELSEWHERE, f"being delivered by {owner}"),
                }.get(status, (Outcome.PENDING, error or "pending"))
                untried[i] = _result(delivery, outcome, detail)
        report = DeliveryReport()
        for i in places:
            found = self.results[i]
            report.results.append(found if found is not None else untried[i])
        return report


class _Planned:
    """The ledger rows of ``deliveries`` (reader, medium, variant, recipient, Message-ID), made as they are read
    and made again when read again (a retried transaction, with new ids: none was kept): never one list of them
    all."""

    def __init__(self, deliveries: Iterable[Delivery]) -> None:
        self.deliveries = deliveries

    def __iter__(self) -> Iterator[tuple[str, str, str, str, str | None]]:
        return ((d.reader.id, d.medium, d.variant, d.recipient, d.new_message_id()) for d in self.deliveries)


def ledger_safe(work: Callable[[], object]) -> None:
    """Tidy-up writes while stopping: the stop's own cause must surface, not a second store error."""
    try:
        work()
    except Exception as exc:  # logged; the claims expire with their lease
        log.warning("could not give back claims while stopping: %s", exc)


@dataclass
class _Attempt:
    """One delivery tried once: compose, record the start of the push, push, record the outcome."""

    delivery: Delivery
    row: LedgerRow | None
    edition: str
    ledger: Ledger | None
    owner: str
    report: DeliveryReport

    def run(self, channels: dict[str, Channel], down: dict[str, str]) -> None:
        ready = self.prepare(channels, down)
        if ready is None:
            return
        if self.ledger is not None and not self.ledger.start(self.edition, self.delivery.key, self.owner):
            self.report.add(self.delivery, Outcome.ELSEWHERE, "the claim ran out and another deliverer took it")
            return
        self.push(*ready, down)

    def prepare(self, channels: dict[str, Channel], down: dict[str, str]) -> tuple[Channel, Message] | None:
        """The channel and the composed message; None (its outcome recorded) when its channel is missing or
        down, or the message cannot be composed."""
        delivery, ledger = self.delivery, self.ledger
        channel = channels.get(delivery.medium)
        if channel is None or delivery.medium in down:
            reason = down.get(delivery.medium) or f"no {delivery.medium} channel configured for this run"
            if ledger is not None:
                ledger.release(self.edition, [delivery.key], self.owner, f"not attempted: {reason}")
            self.report.add(delivery, Outcome.PENDING, reason)
            return None
        try:
            message = delivery.message(self.row.message_id if self.row else None)
        except Exception as exc:  # one reader's bad data must not stop the others
            self._failed(f"cannot compose the message: {type(exc).__name__}: {exc}")
            log.warning("%s: composing the %s message failed: %s", delivery.reader.id, delivery.medium, exc)
            return None
        return channel, message

    def push(self, channel: Channel, message: Message, down: dict[str, str]) -> None:
        """Push the message whose start is recorded, and record the outcome."""
        parts = None
        ledger, delivery = self.ledger, self.delivery
        if ledger is not None and self.row is not None:
            # A multi-part message (a Slack thread) resumes after the parts a previous run posted.
            key, edition, owner = delivery.key, self.edition, self.owner
            parts = Parts(resume=json.loads(self.row.checkpoint) if self.row.checkpoint else None,
                          on_part=lambda point, first: ledger.checkpoint(edition, key, point, first, owner))
        self._push(channel, message, parts, down)

    def _push(self, channel: Channel, message: Message, parts: Parts | None, down: dict[str, str]) -> None:
        delivery, ledger, key = self.delivery, self.ledger, self.delivery.key
        try:
            provider_id = channel.push(message, parts)
        except RecipientRejected as exc:
            self._failed(str(exc))
            log.warning("%s: %s to %s failed for good: %s", delivery.reader.id, delivery.medium,
                        delivery.recipient, exc)
        except MaybeDelivered as exc:
            if ledger is not None:
                ledger.uncertain(self.edition, key, str(exc), self.owner)
            self.report.add(delivery, Outcome.UNCERTAIN, str(exc))
            log.warning("%s: %s to %s may have been delivered, marked uncertain (not resent): %s",
                        delivery.reader.id, delivery.medium, delivery.recipient, exc)
        except ChannelUnavailable as exc:
            down[delivery.medium] = str(exc)
            self._pending(str(exc))
            log.warning("%s is unavailable, its messages stay pending: %s", channel.name, exc)
        except DeliveryError as exc:
            self._pending(str(exc))
        except LedgerUnavailable:
            raise
        except Exception as exc:  # a channel's bug fails this reader, not the whole run
            log.exception("%s: pushing the %s message failed unexpectedly", delivery.reader.id, delivery.medium)
            self._failed(f"unexpected error while pushing: {type(exc).__name__}: {exc}")
        else:
            if ledger is not None:
                ledger.sent(self.edition, key, provider_id, self.owner)
            self.report.add(delivery, Outcome.SENT, provider_id)

    def _failed(self, reason: str) -> None:
        if self.ledger is not None:
            self.ledger.failed(self.edition, self.delivery.key, reason, self.owner)
        self.report.add(self.delivery, Outcome.FAILED, reason)

    def _pending(self, reason: str) -> None:
        if self.ledger is not None:
            self.ledger.retry_later(self.edition, self.delivery.key, reason, owner=self.owner)
        self.report.add(self.delivery, Outcome.PENDING, reason)
