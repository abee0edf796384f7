"""The composition root: the one place that picks the real or offline implementation of each service
and builds them once per run into a :class:`Services` bundle (closed at the end of the run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


from prdigest.config import Settings
from prdigest.delivery import Channel
from prdigest.delivery.ledger import Ledger
from prdigest.delivery.outbox import OutboxChannel
from prdigest.drafting import Drafter
from prdigest.errors import ConfigError
from prdigest.media import MediaRegistry, Medium
from prdigest.models import Edition, Language
from prdigest.options import RunOptions
from prdigest.readers import Reader, ReadersFile, example_readers_path, load_readers
from prdigest.selfservice.links import web_base
from prdigest.sources import JsonlSource, Source, sample_week_path
from prdigest.store import Store, open_store
from prdigest.subsystems import Classifier, classifier_for
from prdigest.vocabulary import Vocabulary

DEFAULT_SENDER = "pr-digest <pr-digest@localhost>"


class SiteBuilder(Protocol):
    """Renders the archive (every stored edition, newest first) as ``{path under site/: bytes}``."""

    def __call__(self, editions: list[Edition], *, site_url: str | None, link_hosts: tuple[str, ...],
                 vocabularies: dict[str, Vocabulary]) -> dict[str, bytes]: ...


def make_source(options: RunOptions, settings: Settings) -> Source:
    """The PR source the options name."""
    if options.source == "sample":
        return JsonlSource(sample_week_path(), options.repo)
    if options.source.startswith("jsonl:"):
        return JsonlSource(Path(options.source.removeprefix("jsonl:")).expanduser(), options.repo)
    if options.source == "github":
        from prdigest.github import GitHubSource

        if not options.repo:
            raise ConfigError("--source github needs --repo OWNER/NAME (e.g. --repo vllm-project/vllm)")
        if settings.github_token is None or not settings.github_token.get_secret_value().strip():
            raise ConfigError("--source github needs a token: set GITHUB_TOKEN to a token that can read "
                              f"{options.repo}")
        return GitHubSource(options.repo, token=settings.github_token.get_secret_value().strip(),
                            base_url=settings.github_url, state=settings.state,
                            concurrency=settings.github_concurrency)
    raise ConfigError(f"--source '{options.source}': use jsonl:PATH or github")


def make_classifier(options: RunOptions, repo: str) -> Classifier:
    """Rules from ``--rules``, the shipped rules for the repo, or the generic top-level-folder fallback."""
    return classifier_for(repo, Path(options.rules) if options.rules else None)


def make_readers(options: RunOptions, classifier: Classifier) -> ReadersFile:
    """The readers file, validated against the subsystems the classifier can assign."""
    path = Path(options.readers) if options.readers else example_readers_path()
    return load_readers(path, classifier.known_subsystems)


def make_drafter(options: RunOptions, settings: Settings, vocabulary: Vocabulary | None = None) -> Drafter:
    """The drafter the options name (no I/O: call its ``check`` before drafting); ``vocabulary`` is the repo's."""
    from prdigest.drafting.offline import OfflineDrafter

    if options.drafter == "offline":
        return OfflineDrafter(vocabulary)
    from prdigest.drafting.llm import OpenAIDrafter

    # The model's failures fall back to the offline draft, with the repo's vocabulary.
    return OpenAIDrafter.from_settings(settings, fallback=OfflineDrafter(vocabulary))


def make_channels(options: RunOptions, settings: Settings, out: Path, media: MediaRegistry) -> dict[str, Channel]:
    """A channel per delivered medium: one outbox for all, or each medium's real channel. No I/O: a
    missing setting is reported here, before any connection; ``check`` connects."""
    delivered = media.for_deliver(options.deliver)
    if options.deliver == "outbox":
        outbox = OutboxChannel(out / "outbox", {m.name: m.outbox_file for m in delivered})
        return {m.name: outbox for m in delivered}
    return {m.name: m.channel(settings) for m in delivered}


def check_addresses(readers: ReadersFile, media: list[Medium], settings: Settings, path: str) -> None:
    """Refuse a reader whose address a delivered medium cannot reach with these settings (before anything
    is collected or sent), naming the readers file, the reader and the setting to fix."""
    for reader in readers.readers:
        for medium in media:
            address = medium.address(reader)
            problem = medium.address_problem(reader, address, settings) if address else None
            if problem:
                raise ConfigError(f"{path}: {problem}")


def sender(settings: Settings) -> str:
    """The From address: DIGEST_FROM, or a placeholder that only the outbox accepts."""
    from prdigest.delivery.email_message import check_from

    return check_from(settings.from_address) if settings.from_address else DEFAULT_SENDER


@dataclass
class Services:
    """Everything one edition run uses, built once by :func:`build_services` and closed by :meth:`close`.

    The source, rules, readers, media and channels are built eagerly (a bad flag or file stops the run
    before anything is collected); the drafter and the ledger are opened on first use.
    """

    options: RunOptions
    settings: Settings
    source: Source
    classifier: Classifier
    readers: ReadersFile
    media: MediaRegistry
    #: The media this run delivers (``--deliver``), in registry order.
    delivered: list[Medium]
    channels: dict[str, Channel]
    out: Path
    #: Renders the archive site from the stored editions (``renderers.site.build_site``); None: no site.
    site: SiteBuilder | None = None
    _drafter: Drafter | None = field(default=None, repr=False)
    _ledger: Ledger | None = field(default=None, repr=False)
    _store: Store | None = field(default=None, repr=False)
    _audience: list[Reader] | None = field(default=None, repr=False)

    @property
    def language(self) -> Language:
        return self.options.language or self.settings.language

    @property
    def dry_run(self) -> bool:
        """``--deliver outbox``: messages become files, and no ledger records them."""
        return self.options.deliver == "outbox"

    def drafter(self) -> Drafter:
        """The drafter, checked (``--drafter openai``: the endpoint answers, the model is served) on first use."""
        if self._drafter is None:
            drafter = make_drafter(self.options, self.settings, self.classifier.vocabulary)
            try:
                drafter.check()
            except BaseException:
                drafter.close()
                raise
            self._drafter = drafter
        return self._drafter

    def ledger(self) -> Ledger:
        """The delivery ledger in the state store, opened on first use."""
        if self._ledger is None:
            self._ledger = Ledger.open(self.settings.state)
        return self._ledger

    def store(self) -> Store:
        """The state store (edition history, snapshots), opened on first use."""
        if self._store is None:
            self._store = open_store(self.settings.state)
        return self._store

    def audience(self) -> list[Reader]:
        """The readers this edition serves: the readers file with each reader's own choices (``digest web``)
        applied and unsubscribed readers left out; read from the state store once per run."""
        if self._audience is None:
            from prdigest.selfservice import audience

            self._audience = audience(self.store(), self.source.repo, self.readers.readers,
                                      self.classifier.vocabulary, self.language)
        return self._audience

    def check_channels(self) -> None:
        """Preflight: every channel connects and authenticates, then lets go until delivery."""
        try:
            for channel in {id(c): c for c in self.channels.values()}.values():
                channel.check()
        finally:
            for channel in self.channels.values():
                channel.close()

    def close(self) -> None:
        """Release the drafter, the ledger and the channels (safe to call twice)."""
        drafter, self._drafter = self._drafter, None
        ledger, self._ledger = self._ledger, None
        store, self._store = self._store, None
        try:
            if drafter is not None:
                drafter.close()
        finally:
            if ledger is not None:
                ledger.close()
            if store is not None:
                store.close()
            for channel in self.channels.values():
                channel.close()


def build_services(options: RunOptions, settings: Settings, media: MediaRegistry,
                   site: SiteBuilder | None = None) -> Services:
    """The run's services from its options and settings; bad flags, rules or readers stop it here.
    ``media`` and ``site`` come from the shell (renderers live outside the core)."""
    source = make_source(options, settings)
    classifier = make_classifier(options, source.repo)
    readers = make_readers(options, classifier)
    out = Path(options.out)
    delivered = media.for_deliver(options.deliver)
    channels = make_channels(options, settings, out, media)
    web_base(settings)  # DIGEST_WEB_URL without its secret stops the run here, before anything is collected
    if options.deliver != "outbox":
        check_addresses(readers, delivered, settings, options.readers or str(example_readers_path()))
    return Services(options=options, settings=settings, source=source, classifier=classifier, readers=readers,
                    media=media, delivered=delivered, channels=channels, out=out, site=site)
