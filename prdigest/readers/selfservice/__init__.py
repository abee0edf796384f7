"""Reader self-service: signed links, readers' own choices in the state store, and the readers an edition
serves once those choices are applied. ``digest web`` (``flows/web/``) is the HTTP face of this package;
everything it decides is decided here, without HTTP."""

from __future__ import annotations

import logging

from prdigest.kernel.storage import Store
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.choices import Choice, ReaderChoices
from prdigest.readers.selfservice.links import Linker, ReaderLinks, linker, web_base
from prdigest.readers.selfservice.preferences import Preferences, addresses, apply, stopped_media, without_media
from prdigest.readers.selfservice.tokens import BadLink, LinkSigner, ReaderRef

__all__ = ["BadLink", "Choice", "LinkSigner", "Linker", "Preferences", "ReaderChoices", "ReaderLinks", "ReaderRef",
           "addresses", "apply", "audience", "linker", "web_base"]

log = logging.getLogger(__name__)


def audience(store: Store, repo: str, readers: list[Reader], vocabulary: Vocabulary, language: str, *,
             record: bool = True) -> list[Reader]:
    """The readers an edition of ``repo`` serves: the readers file (recorded as the roster ``digest web``
    knows), each reader's own choices applied, the media they unsubscribed from left out (one medium for a link
    that names it; their personal media, never a shared channel, otherwise), readers with no medium left out."""
    choices = ReaderChoices(store)
    if record:  # a run's readers file is the roster; `digest resend` only reads the choices
        choices.record_roster(repo, readers, vocabulary, language)
    stored = choices.choices(repo)
    served: list[Reader] = []
    for reader in readers:
        choice = stored.get(reader.id)
        if choice is None:
            served.append(reader)
            continue
        chosen = apply(reader, choice.preferences, vocabulary.known)
        stopped = stopped_media(reader, choice.unsubscribed, choice.unsubscribed_media)
        kept = without_media(chosen, stopped) if stopped else chosen
        if kept is None:
            log.info("reader %s unsubscribed from %s (digest web): no message", reader.id, repo)
        else:
            if stopped:
                log.info("reader %s unsubscribed from %s by %s (digest web): not sent there", reader.id, repo,
                         ", ".join(sorted(stopped)))
            served.append(kept)
    return served
