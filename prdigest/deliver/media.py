"""Media as a registry: what a medium is (email, Slack, ...) as one value the pipeline iterates over.

Adding a medium is one renderer module (pure: edition + variant → payload and files), one channel
module (a provider that pushes a payload) and one :class:`Medium` registration in the composition
root's registry. The pipeline, the delivery loop and the flow never name a medium.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from prdigest.connect.variants import Variant
from prdigest.deliver import Channel, Message
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.links import DEFAULT_LINK_HOSTS
from prdigest.kernel.models import Edition, RenderProblem
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.links import Linker, ReaderLinks, unsubscribe_url


def link_hosts_for(api_url: str) -> tuple[str, ...]:
    """Hosts whose PR URLs may become links: github.com, plus a GitHub Enterprise host from its API URL."""
    host = (urlsplit(api_url).hostname or "").lower()
    return DEFAULT_LINK_HOSTS if host in ("", "api.github.com", *DEFAULT_LINK_HOSTS) else (*DEFAULT_LINK_HOSTS, host)


@dataclass(frozen=True)
class RenderContext:
    """What every renderer may use besides the edition and the variant."""

    #: Hosts whose https PR URLs may become links.
    link_hosts: tuple[str, ...] = DEFAULT_LINK_HOSTS
    #: The archive's URL: "view in browser" and a permalink per entry when set.
    site_url: str | None = None
    #: The links each reader gets (``unsubscribe``, ``preferences``): the renderers leave the placeholders of
    #: ``prdigest.readers.selfservice.links`` where they go, and each reader's composer fills them in.
    reader_links: tuple[str, ...] = ()
    #: Scratch space the renderers share across the variants rendered with this context (an entry's pieces
    #: are the same in every variant that holds it: ``renderers/shared.py``). One context per render step.
    shared: dict = field(default_factory=dict, compare=False, hash=False, repr=False)


@dataclass(frozen=True)
class Rendering:
    """One variant rendered for one medium, shared by all of the variant's readers."""

    medium: str
    variant: str
    #: What the medium's composer turns into each reader's message (e.g. a RenderedEmail, Slack payloads).
    payload: Any
    #: Files for the output folder, by path relative to it (``email/<variant>.html``, ...).
    files: dict[str, bytes] = field(default_factory=dict)
    problems: list[RenderProblem] = field(default_factory=list)


@dataclass(frozen=True)
class ComposeContext:
    """What every composer may use besides the rendering and the reader."""

    edition: Edition
    sender: str
    unsubscribe_template: str | None = None
    now: datetime | None = None
    #: Each reader's unsubscribe and preferences links (``digest web`` or DIGEST_UNSUBSCRIBE_URL).
    links: Linker | None = None

    def links_for(self, reader: Reader, medium: str | None = None) -> ReaderLinks:
        """The reader's links in a message on ``medium``: from :attr:`links`, else the unsubscribe template, else
        none. An unsubscribe link names its medium, so it stops that medium only."""
        if self.links is not None:
            return self.links(reader, medium)
        if self.unsubscribe_template:
            return ReaderLinks(unsubscribe_url(self.unsubscribe_template, reader, medium))
        return ReaderLinks()


#: Builds one reader's payload from a rendering; ``message_id`` is the id the ledger keeps for the row.
Composer = Callable[[Reader, "str | None"], Any]


@dataclass(frozen=True)
class Medium:
    """One medium: how it is addressed, rendered, composed, written to the outbox and carried."""

    #: The medium's name in the ledger, digest.json and the outbox (``email``, ``slack``).
    name: str
    #: The word ``--deliver`` uses for its real channel (``smtp`` for email).
    transport: str
    render: Callable[[Edition, Variant, RenderContext], Rendering]
    #: A composer for one rendering: called once per variant, then once per reader.
    composer: Callable[[Rendering, ComposeContext], Composer]
    #: The outbox's file for a message: (file name, bytes).
    outbox_file: Callable[[Message], tuple[str, bytes]]
    #: The real channel, from settings (no I/O: ``check`` connects).
    channel: Callable[[Settings], Channel]
    #: A stable id for a reader's message, planned before sending and kept by the ledger (e-mail's
    #: Message-ID); None for media whose provider assigns ids.
    message_id: Callable[[ComposeContext, Reader], str | None] = lambda context, reader: None
    #: Why a reader's address cannot be delivered to with these settings (e.g. a Feishu group whose webhook
    #: is not configured), or None; asked for every reader before anything is collected or sent.
    address_problem: Callable[[Reader, str, Settings], str | None] = lambda reader, address, settings: None
    #: The editors' "review waiting" notice on this medium: (editor as a reader, subject, plain text, context)
    #: → the payload its channel carries, the text escaped for the medium; None: no notice on this medium.
    notice: Callable[[Reader, str, str, ComposeContext], Any] | None = None
    #: The reader's address on this medium, or None when the reader does not use it; None: the readers file's
    #: address of the medium's name (its ``pr_digest.addresses`` declaration: ``reader.address(name)``).
    address: Callable[[Reader], str | None] = None  # type: ignore[assignment]  # __post_init__ replaces None
    #: What its channel needs that is secret, as (environment variable, Prefect Secret block) pairs: a deployed
    #: flow fills a variable missing from the worker's environment from its block (``flows/secrets.py``).
    secrets: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.address is None:
            name = self.name
            object.__setattr__(self, "address", lambda reader: reader.address(name))


class MediaRegistry:
    """The media a run knows, in order (the order outputs are written and deliveries tried)."""

    def __init__(self, media: Iterable[Medium]) -> None:
        self._media: dict[str, Medium] = {}
        for medium in media:
            self.register(medium)

    def register(self, medium: Medium) -> None:
        """Add a medium; its name and transport must be new."""
        if medium.name in self._media or medium.transport in self.transports():
            raise ValueError(f"medium '{medium.name}' ({medium.transport}) is already registered")
        self._media[medium.name] = medium

    def __iter__(self) -> Iterator[Medium]:
        return iter(self._media.values())

    def __getitem__(self, name: str) -> Medium:
        return self._media[name]

    def names(self) -> list[str]:
        return list(self._media)

    def transports(self) -> list[str]:
        return [m.transport for m in self._media.values()]

    def for_deliver(self, deliver: str) -> list[Medium]:
        """The media a ``--deliver`` value sends: every medium for ``outbox``, else those named."""
        words = [w for w in deliver.split(",") if w]
        if words == ["outbox"]:
            return list(self)
        unknown = [w for w in words if w not in self.transports()]
        if unknown or not words:
            raise ConfigError(f"--deliver '{deliver}': use 'outbox' or any of '{','.join(self.transports())}'")
        return [m for m in self if m.transport in words]
