"""What a reader may choose for themselves, and how it changes the reader the readers file describes.

A field of :class:`Preferences` that is None leaves the readers file's value; any other value replaces it
for the next edition. A field named like a :class:`~prdigest.readers.file.Reader` field overrides it as is, so a
new choice (a reader's ``budget``) is one line here. ``media`` is the exception: it names which of the
reader's addresses (e-mail, Slack, ...) still receive the digest, and the others are left out; only the reader's
personal media (:func:`personal_media`) can be left out so: a shared Slack channel or Feishu group stays, whatever a
preferences link sends (changing it is the readers file's job).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from prdigest.kernel.models import Verdict
from prdigest.readers.addresses import ADDRESSES
from prdigest.readers.file import MAX_BUDGET, Reader, SubsystemName

#: A Slack address that is one person (a user ID: the message is a direct message), not a channel.
SLACK_DM = re.compile(r"[UW][A-Z0-9]{6,}")


class Preferences(BaseModel):
    """A reader's own choices (``digest web``); None = as the readers file says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    subsystems: tuple[SubsystemName, ...] | None = None
    min_verdict: Verdict | None = None
    budget: int | None = Field(default=None, ge=1, le=MAX_BUDGET)
    media: tuple[str, ...] | None = None

    def shown(self) -> dict[str, object]:
        """The choices made (not None), as plain values: for ``digest readers`` and the store."""
        return self.model_dump(mode="json", exclude_none=True)


def addresses(reader: Reader) -> dict[str, str]:
    """The reader's addresses by medium name: the shipped media's first, then any other medium's."""
    return reader.all_addresses()


def personal_media(reader: Reader) -> set[str]:
    """The reader's media that reach only them, as each medium's address declaration says
    (``AddressField.personal``): e-mail, and Slack when it is a direct message. A Slack channel or a Feishu
    group is shared: one member's unsubscribe must not stop it for the others."""
    found = set()
    for name, value in addresses(reader).items():
        personal = ADDRESSES[name].personal
        if personal is not None and personal(value):
            found.add(name)
    return found


def stopped_media(reader: Reader, unsubscribed: bool, media: tuple[str, ...]) -> set[str]:
    """The media an unsubscribe stops: each one a link named (``media``: the e-mail's List-Unsubscribe stops
    the e-mail), and for an unsubscribe that names none (the preferences form, links sent before links named
    their medium) the reader's personal media, never a shared channel."""
    return set(media) | (personal_media(reader) if unsubscribed else set())


def without_media(reader: Reader, media: set[str]) -> Reader | None:
    """``reader`` without the addresses of ``media``; None when no address is left."""
    left = {name: value for name, value in addresses(reader).items() if name not in media}
    if not left:
        return None
    if len(left) == len(addresses(reader)):
        return reader
    return reader.without({name for name in addresses(reader) if name not in left})


def apply(reader: Reader, prefs: Preferences, known: frozenset[str] = frozenset()) -> Reader:
    """``reader`` with ``prefs`` applied; ``known`` is the repo's vocabulary (empty: not known in advance).

    A choice the readers file has since made impossible is dropped, never turned into a reader who gets
    nothing by surprise: subsystems no longer in the vocabulary are ignored (all gone: the file's filter),
    and media the reader no longer has are ignored (none left: every medium the file gives).
    """
    original = reader
    update: dict[str, object] = {}
    for name, value in prefs:
        if value is None or name == "media" or name not in Reader.model_fields:
            continue
        if name == "subsystems" and known:
            value = tuple(s for s in value if s in known)
            if not value and prefs.subsystems:
                continue
        update[name] = value
    if prefs.media is not None:
        personal = personal_media(reader)
        kept = [m for m in addresses(reader) if m in prefs.media or m not in personal]
        if kept and len(kept) < len(addresses(reader)):
            reader = reader.without({m for m in addresses(reader) if m not in kept})
    if not update:
        return reader
    try:
        return Reader.model_validate({**reader.model_dump(), **update})
    except ValidationError:
        # A stored choice that no longer fits the file (e.g. a field's bounds changed): the file wins.
        return original
