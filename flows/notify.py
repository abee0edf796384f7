"""Telling the editors (readers file ``editors:``) that an edition waits for their review."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from prefect import get_run_logger

from flows.media import default_media
from prdigest.deliver import Channel, Message
from prdigest.deliver.media import ComposeContext, Medium
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, DeliveryError
from prdigest.kernel.models import Edition
from prdigest.kernel.text import slug
from prdigest.pipeline.compose import RunOptions, make_channels, sender
from prdigest.readers.file import Editor, Reader


def notify_editors(edition: Edition, editors: list[Editor], options: RunOptions, settings: Settings,
                   flow_run_id: Any, url: str | None, deadline: datetime,
                   channels: dict[str, Channel] | None = None) -> list[str]:
    """Tell each editor that a review is waiting, on each of the run's media that has a notice: ``channels``
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
    # Each medium of the run that carries a notice (Medium.notice) builds and escapes its own.
    media = [m for m in default_media(options.deliver) if m.name in channels]
    link = url or f"flow run {flow_run_id} (no PREFECT_UI_URL set)"
    text = (f"{edition.name}: {len(edition.entries)} draft entries wait for your review until "
            f"{deadline:%Y-%m-%d %H:%M} UTC{_flagged_note(edition)}. Open {link} and click Resume (in the new UI: "
            f"under the ⋮ menu), or run `digest approve {flow_run_id} --all`. Nothing is sent until an editor "
            "approves.")
    report = tell_editors(edition, editors, text, media, channels, sender(settings))
    for channel in {id(c): c for c in channels.values()}.values():
        channel.flush()
        channel.close()
    (logger.info if report.told else logger.warning)("%s", report.line(edition.name))
    return report.results


@dataclass
class NoticeReport:
    """Which editors were told that a review waits, and why the others were not."""

    told: list[str] = field(default_factory=list)
    #: Editor name → what failed (each medium's error), when no notice reached them.
    failed: dict[str, str] = field(default_factory=dict)
    #: Editors with no address on any of the run's media that carry a notice.
    unreachable: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)

    def line(self, name: str) -> str:
        """What happened, in one line: never "told 1 editor" when the only notice failed."""
        total = len(self.told) + len(self.failed) + len(self.unreachable)
        if self.told:
            head = f"told {len(self.told)} of {total} editor{'s' if total != 1 else ''} that {name} waits for " \
                   f"review ({', '.join(self.told)})"
        else:
            head = f"no editor was told that {name} waits for review"
        why = [f"{who}: {error}" for who, error in self.failed.items()]
        why += [f"{who}: no address on the run's media" for who in self.unreachable]
        return head + (f"; not told: {'; '.join(why)}" if why else "")


def tell_editors(edition: Edition, editors: list[Editor], text: str, media: list[Medium],
                 channels: dict[str, Channel], from_address: str) -> NoticeReport:
    """Push the notice to each editor on each medium they have an address on; an editor counts as told when
    at least one of their notices was accepted. A failure is recorded, never raised."""
    report = NoticeReport()
    for i, editor in enumerate(editors, start=1):
        messages = _messages(edition, editor, i, text, media, from_address)
        errors = []
        for message in messages:
            try:
                report.results.append(channels[message.medium].push(message))
            except DeliveryError as exc:
                errors.append(f"{message.medium} failed ({exc})")
        if not messages:
            report.unreachable.append(editor.name)
        elif len(errors) == len(messages):
            report.failed[editor.name] = ", ".join(errors)
        else:
            report.told.append(editor.name)
    return report


def _flagged_note(edition: Edition) -> str:
    flagged = sum(e.flagged for e in edition.entries)
    return f" ({flagged} flagged: not sent unless you approve them by name)" if flagged else ""


def _messages(edition: Edition, editor: Editor, index: int, text: str, media: list[Medium],
              from_address: str) -> list[Message]:
    """The notification for one editor: one message on each of ``media`` (the run's) that carries a notice
    and on which the editor has an address, escaped by the medium (``Medium.notice``)."""
    reader = Reader(id=f"editor-{slug(editor.name, limit=40) or index}", name=editor.name,
                    **editor.model_dump(include={"email", "slack", "feishu", "addresses"}))
    context = ComposeContext(edition=edition, sender=from_address)
    subject = f"Review waiting: {edition.name}"
    return [Message(reader=reader, variant="review", medium=m.name, recipient=address,
                    payload=m.notice(reader, subject, text, context))
            for m in media if m.notice is not None and (address := m.address(reader))]
