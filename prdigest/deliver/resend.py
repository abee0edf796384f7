"""``digest resend EDITION --uncertain | --pending | --failed``: send, on purpose, the messages that may have
reached their readers (the ledger's ``uncertain`` rows), that a run gave up on (``pending``: a greylisting
server, a Slack outage outlasting the run's retries) or that a provider refused (``failed``: a Feishu secret
or IP allow-list fixed since, a Slack bot invited to its channel since), rebuilt from the edition's record in
the state store (never from ``digest.json``, which anyone can edit; its seal checked) and the readers file.

An e-mail keeps the Message-ID of its first attempt, so a mail client that already has it drops the copy;
a Slack thread resumes after the parts the ledger recorded as posted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from prdigest.connect.variants import kept_variants
from prdigest.deliver.ledger import Key, Ledger
from prdigest.deliver.media import MediaRegistry
from prdigest.deliver.rendered import compose_context, planned_deliveries, render_context, render_variants
from prdigest.deliver.run import DeliveryReport, Retry, deliver
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition
from prdigest.kernel.storage import Store
from prdigest.readers.selfservice import audience
from prdigest.state import record as records
from prdigest.state.record import EditionRecord, SealKey


@dataclass
class Resent:
    """What ``digest resend`` did: the report of the rows it sent again, and the rows it could not rebuild."""

    edition: str
    report: DeliveryReport = field(default_factory=DeliveryReport)
    #: (reader, medium, why): uncertain rows left as they are.
    skipped: list[tuple[str, str, str]] = field(default_factory=list)


def load_record(store: Store, asked: str, seal: SealKey) -> EditionRecord:
    """The published record, without its variants (:func:`variants_of` reads those asked for): checked against
    its hash, and against its seal (what pr-digest stored after the review, not a rewrite of the state database
    since)."""
    found = records.resolve(store, asked, variants=False)
    if found is None or not found.published:
        known = ", ".join(r.edition.name for r in records.published(store)[:10]) or "none"
        raise ConfigError(f"--state {store.location}: no published edition {asked} (published editions: {known})")
    found.check_seal(seal)
    return found


def load_edition(store: Store, asked: str, seal: SealKey) -> Edition:
    """The edition as published, from its record, every variant included (see :func:`load_record`)."""
    found = load_record(store, asked, seal)
    return found.edition.model_copy(update={"variants": records.variants_of(store, found)})


def variants_of(store: Store, record: EditionRecord, keys: Iterable[str]) -> Edition:
    """The record's edition with only the variants of ``keys`` (read one by one from their rows)."""
    return record.edition.model_copy(update={"variants": records.variants_of(store, record, keys)})


#: What ``digest resend`` may send: rows that may have arrived (``uncertain``), that a run gave up on
#: (``pending``), and that a provider refused (``failed``: a Feishu secret or a Slack invitation fixed since).
RESENDABLE = ("uncertain", "pending", "failed")


def resend_uncertain(asked: str, *, state: Callable[[], Store], settings: Settings, media: MediaRegistry, readers_of,
                     only: Iterable[str] = ()) -> Resent:
    """Send the uncertain rows of edition ``asked`` again, each once (see :func:`resend_rows`)."""
    return resend_rows(asked, ("uncertain",), state=state, settings=settings, media=media, readers_of=readers_of,
                       only=only)


def resend_rows(asked: str, statuses: Iterable[str], *, state: Callable[[], Store], settings: Settings,
                media: MediaRegistry, readers_of,
                only: Iterable[str] = ()) -> Resent:
    """Send the rows of edition ``asked`` (its key, name or exact identity) at ``statuses`` (of
    :data:`RESENDABLE`), each once, with the run's retries for transient failures.

    ``state`` is the command's state store (the composition root's, which closes it); ``readers_of(repo)``
    gives the readers file and the repo's vocabulary (``(ReadersFile, Vocabulary)``); ``only``: reader ids to
    limit it to. The channels are checked before anything is sent. Uncertain and
    failed rows become pending on purpose; pending ones are sent as they are.
    """
    statuses = tuple(statuses)
    if not statuses or set(statuses) - set(RESENDABLE):
        raise ValueError(f"resend rows at {statuses}: only {', '.join(RESENDABLE)}")

    record = load_record(state(), asked, SealKey.for_state(settings.state, settings.record_secret,
                                                              settings.record_secret_previous))
    edition = record.edition  # without its variants: those of the rows to send are read below
    ledger = Ledger(state())
    key = ledger.resolve(asked)
    if key is None:
        raise ConfigError(f"--state {settings.state}: no deliveries recorded for {asked}; "
                          f"editions in the ledger: {', '.join(ledger.editions()[:10]) or 'none'}")
    if key != edition.key:
        raise ConfigError(f"the ledger's {asked} is {key}, but its record is {edition.name} ({edition.key}): "
                          "give the edition's key as `digest status` shows it")
    rows = ledger.rows(key)
    wanted = set(only)
    unknown = sorted(wanted - {r.reader for r in rows.values()})
    if unknown:
        raise ConfigError(f"--reader {', '.join(unknown)}: no delivery of {edition.name} to this reader "
                          "in the ledger")
    chosen_rows = {k: r for k, r in rows.items() if r.status in statuses and not r.medium.startswith("outbox-")
                   and (not wanted or r.reader in wanted)}
    result = Resent(edition.name)
    if not chosen_rows:
        return result
    readers, vocabulary = readers_of(edition.repo)
    delivered = [m for m in media if m.name in {medium for _, medium in chosen_rows}]
    channels = {m.name: m.channel(settings) for m in delivered}
    for channel in {id(c): c for c in channels.values()}.values():
        channel.check()
    # The readers' own choices since apply (an unsubscribe stops a pending row too); the roster is the runs' own.
    served = audience(state(), edition.repo, readers.readers, vocabulary, edition.language, record=False)
    # The variants as first sent (their filter, entries, read-first and lede), never planned again over
    # choices made since: a resent message is the message the reader was first meant to get. Only the variants
    # with a row to send are rendered (one reader resent renders one variant), through the run's own path:
    # the same contexts (the run's archive URL, the reader's own links), media and composers.
    asked_readers = {reader for reader, _ in chosen_rows}
    # Only the variants of the rows to send are read from the record (one reader resent reads one variant); a
    # record kept whole (stored before its variants had rows) gives them from its body.
    edition = variants_of(state(), record, {rows[k].variant for k in chosen_rows})
    kept = kept_variants(edition, served, vocabulary) if edition.variants or record.parts is None else []
    variants = [v for v in kept if any(r.id in asked_readers for r in v.readers)]
    rendered = render_variants(edition, variants, [], delivered, render_context(settings))
    chosen = [d for d in planned_deliveries(rendered, delivered, compose_context(settings, edition))
              if d.key in chosen_rows]
    found: set[Key] = {d.key for d in chosen}
    for k in sorted(set(chosen_rows) - found):
        result.skipped.append((*k, "not in the readers file any more, unsubscribed from it, or its filter "
                                   f"selects nothing now: left {chosen_rows[k].status}"))
    for status in ("uncertain", "failed"):
        if status in statuses:
            ledger.reopen(key, [k for k in found if chosen_rows[k].status == status], status)
    retry = Retry(settings.delivery_retries, settings.delivery_retry_delay)
    result.report = deliver(edition.id, chosen, channels, ledger, retry=retry)
    return result

