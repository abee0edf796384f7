"""The edition's steps as plain functions: flows call these, tests call them without Prefect."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone

from prdigest.delivery import Channel, Message
from prdigest.errors import DeliveryError
from prdigest.models import DraftEntry, Edition, Entry, EntryStatus, Language, PullRequest, Verdict
from prdigest.window import Window

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


def _noop(done: int, total: int) -> None:
    """Default progress callback."""


def draft_entries(
    prs: list[PullRequest],
    classify: Callable[[PullRequest], list[str]],
    draft: Callable[[PullRequest, list[str], Language], DraftEntry],
    language: Language,
    progress: Progress = _noop,
) -> list[Entry]:
    """Classify and draft every PR, in order; a PR the drafter fails on still gets an entry."""
    entries: list[Entry] = []
    for i, pr in enumerate(prs, start=1):
        subsystems = classify(pr)
        try:
            drafted = draft(pr, subsystems, language)
        except Exception as exc:  # one bad PR must not sink the edition; the editor sees why
            log.exception("drafting PR #%s failed", pr.number)
            drafted = placeholder_draft(pr, f"drafting failed: {type(exc).__name__}: {exc}"[:300])
        entries.append(Entry.from_draft(pr, subsystems, drafted))
        progress(i, len(prs))
    return entries


def placeholder_draft(pr: PullRequest, reason: str) -> DraftEntry:
    """A minimal entry for a PR no drafter could handle, marked for the editor."""
    return DraftEntry(
        number=pr.number, headline=pr.title or f"PR #{pr.number}", verdict=Verdict.SKIM,
        rationale=reason, drafter="placeholder", needs_editing=True, warnings=[reason],
    )


def new_edition(repo: str, window: Window, language: Language, drafter: str, entries: list[Entry]) -> Edition:
    """An edition awaiting review; token totals summed from its entries."""
    return Edition(
        repo=repo, since=window.since, until=window.until, language=language, drafter=drafter,
        generated_at=datetime.now(timezone.utc), entries=entries,
        tokens_in=sum(e.tokens_in for e in entries), tokens_out=sum(e.tokens_out for e in entries),
    )


def auto_approve(edition: Edition, approver: str = "auto") -> Edition:
    """``--approve auto``: every drafted entry is approved as drafted."""
    entries = [e.model_copy(update={"status": EntryStatus.APPROVED}) for e in edition.entries]
    return edition.model_copy(update={
        "entries": entries, "approver": approver, "approved_at": datetime.now(timezone.utc),
    })


def counts(entries: Iterable[Entry]) -> tuple[Counter[str], Counter[str]]:
    """Entries per verdict and per subsystem."""
    entries = list(entries)
    return Counter(e.verdict.value for e in entries), Counter(s for e in entries for s in e.subsystems)


@dataclass
class DeliveryReport:
    """What happened to each message: provider ids of the sent ones, errors of the failed ones."""

    sent: list[tuple[Message, str]] = field(default_factory=list)
    failed: list[tuple[Message, str]] = field(default_factory=list)


def deliver(messages: list[Message], channels: dict[str, Channel], progress: Progress = _noop) -> DeliveryReport:
    """Push each message to its medium's channel; one failing recipient never blocks the others."""
    report = DeliveryReport()
    for i, message in enumerate(messages, start=1):
        channel = channels[message.medium]
        try:
            report.sent.append((message, channel.push(message)))
        except DeliveryError as exc:
            report.failed.append((message, str(exc)))
        progress(i, len(messages))
    for channel in {id(c): c for c in channels.values()}.values():
        channel.flush()
        channel.close()
    return report

