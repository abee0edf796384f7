"""The composition root: the one place that picks the real or offline implementation of each service
and builds them once per run into a :class:`Services` bundle (closed at the end of the run)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from prdigest.classify.proposal.init import read_repo
from prdigest.classify.proposal.kept import ProposedClassifier, load_kept, proposed_classifier
from prdigest.classify.proposal.repo import from_prs
from prdigest.classify.rulesfile import rules_for_repo
from prdigest.classify.subsystems import Classifier, RulesClassifier, classifier_for
from prdigest.collect.facts.surface import surface_for
from prdigest.collect.git.upstream import Upstream
from prdigest.collect.registry import SOURCES, SourceContext
from prdigest.collect.sources import JsonlSource, Source
from prdigest.connect.impact.downstream import DownstreamSpec
from prdigest.connect.impact.step import Downstreams, upstream_packages
from prdigest.deliver import Channel
from prdigest.deliver.email_message import DEFAULT_SENDER, sender  # noqa: F401 (re-exported for the shell)
from prdigest.deliver.ledger import Ledger
from prdigest.deliver.media import MediaRegistry, Medium
from prdigest.deliver.outbox import OutboxChannel
from prdigest.draft import Drafter
from prdigest.draft.cache import DraftCache
from prdigest.draft.registry import DRAFTERS, DrafterKind, DraftingContext
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.location import StateLocation
from prdigest.kernel.models import Language
from prdigest.kernel.options import RunOptions
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.publish.site import SiteBuilder
from prdigest.readers.file import Reader, ReadersFile, example_readers_path, load_readers
from prdigest.readers.selfservice import audience
from prdigest.readers.selfservice.links import web_base
from prdigest.state.record import SealKey
from prdigest.state.store import LazyStore, Store

if TYPE_CHECKING:
    from prdigest.collect.facts.surface import Surface
    from prdigest.collect.git.upstream import Upstream
    from prdigest.connect.impact.step import Downstreams



def make_source(options: RunOptions, settings: Settings, store: LazyStore | None = None,
                upstream: "Upstream | None" = None) -> Source:
    """The PR source the options name (``prdigest.collect.registry``); ``store``: the run's state store;
    ``upstream``: the run's ``--git`` clone, opened on first use."""
    return SOURCES.build(options.source, SourceContext(settings, options.repo, store,
                                                       discussion=not options.no_discussion, upstream=upstream))


def make_classifier(options: RunOptions, repo: str, settings: Settings | None = None,
                    source: Source | None = None, store: LazyStore | None = None) -> Classifier:
    """Rules from ``--rules``, else the shipped rules for the repo, else the subsystems proposed for it and
    kept in the state store (``store``, else ``settings.state``), proposed from ``source`` on the repo's
    first run: the repo's labeler, mergify, CODEOWNERS and tree through the GitHub API, or what a JSONL
    file's PRs show. The top-level-folder fallback only when no proposal is kept and none can be made (no
    settings or no source)."""
    path = Path(options.rules) if options.rules else rules_for_repo(repo)
    if path is not None or settings is None:
        return classifier_for(repo, path)

    own = store is None
    state = store or open_state(settings.state)
    try:
        kept = load_kept(state(), repo)
        if kept is not None:
            return ProposedClassifier(kept)
        if source is None:
            return classifier_for(repo, None)
        return proposed_classifier(state(), repo, lambda: _repo_snapshot(repo, settings, source))
    finally:
        if own:
            state.close()


def _repo_snapshot(repo: str, settings: Settings, source: Source):  # a RepoSnapshot
    """What a proposal reads of ``repo`` for this source: a JSONL file's PRs, else the repository on GitHub."""
    if isinstance(source, JsonlSource):
        return from_prs(repo, source.collect(None))

    return read_repo(repo, checkout=None, settings=settings)


def vocabulary_notices(classifier: Classifier) -> list[str]:
    """One line when the run uses proposed subsystems instead of a rules file (empty otherwise)."""
    return [classifier.kept.notice] if isinstance(classifier, ProposedClassifier) else []


#: Said at the configuration check and in the summary when e-mail goes out with no way to unsubscribe.
NO_UNSUBSCRIBE = ("--deliver smtp without DIGEST_WEB_URL or DIGEST_UNSUBSCRIBE_URL: e-mails go out with no "
                  "unsubscribe link and no List-Unsubscribe header (mailbox providers may file bulk mail without "
                  "one as spam); set DIGEST_WEB_URL and DIGEST_WEB_SECRET (digest web), or DIGEST_UNSUBSCRIBE_URL")


def delivery_notices(options: RunOptions, settings: Settings) -> list[str]:
    """One line when real e-mail is sent without an unsubscribe link (empty otherwise).

    Not refused: a team's digest to its own addresses may need no unsubscribe, and refusing would stop every
    such deployment on upgrade; bulk-sender rules (one-click unsubscribe) are the sender's to meet."""
    smtp = "smtp" in options.deliver.split(",")
    return [NO_UNSUBSCRIBE] if smtp and not (settings.web_url or settings.unsubscribe_url) else []


def make_readers(options: RunOptions, classifier: Classifier) -> ReadersFile:
    """The readers file, validated against the subsystems the classifier can assign (the shipped example
    readers, vLLM's, are not held to a proposed vocabulary: they are an example, not a subscription)."""
    path = Path(options.readers) if options.readers else example_readers_path()
    proposed = bool(vocabulary_notices(classifier))
    return load_readers(path, set() if proposed and not options.readers else classifier.known_subsystems)


def make_downstreams(readers: ReadersFile, repo: str, settings: Settings, store: LazyStore | None,
                     where: str = "readers file") -> "Downstreams":
    """The run's downstreams from the readers file (none: nothing is read); a ``git:`` downstream's clone is kept
    where the upstream's is (``DIGEST_GIT_DIR``, else beside the state file). ``where``: the readers file's
    path, named when a downstream is refused."""
    specs = [DownstreamSpec(name, d.path, d.git, d.ref, d.packages, d.upstream)
             for name, d in readers.downstreams.items()]
    return Downstreams(specs, upstream_packages(repo), store() if specs and store is not None else None,
                       settings.clone_home(), where=where)


def checked_downstreams(options: RunOptions, readers: ReadersFile, repo: str, settings: Settings,
                        store: LazyStore | None) -> "Downstreams":
    """The run's downstreams, each indexed now: one that cannot be read (a missing ``path:``, a ``packages:``
    with no Python file, nothing importing the upstream) stops the run here, before anything is collected or
    sent, instead of an edition that tells its team nothing affects them."""
    downstreams = make_downstreams(readers, repo, settings, store,
                                   options.readers or str(example_readers_path()))
    downstreams.indexes()
    return downstreams


def make_drafter(options: RunOptions, settings: Settings, vocabulary: Vocabulary | None = None,
                 store: LazyStore | None = None, seal: SealKey | None = None) -> Drafter:
    """The drafter the options name (``prdigest.draft.registry``; no I/O: call its ``check`` before
    drafting); ``vocabulary`` is the repo's, ``store`` the run's state store, ``seal`` the record key its draft
    cache seals and checks rows with (None: a dry run, rows unsealed)."""
    if seal is None:
        return DRAFTERS[options.drafter].build(DraftingContext(settings, vocabulary, store))
    return DRAFTERS[options.drafter].build(DraftingContext(settings, vocabulary, store,
                                                           cache=partial(DraftCache, seal=seal)))


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


@dataclass
class Services:
    """Everything one edition run uses, built once by :func:`build_services` and closed by :meth:`close`.

    The source, rules, readers, media and channels are built eagerly (a bad flag or file stops the run
    before anything is collected); the drafter and the state store are opened on first use. The state store
    is opened once and handed to every component that keeps state (GitHub cache, draft cache, ledger,
    history, the edition records).
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
    #: The run's state store, opened on first use (``--state``) and shared by every component.
    state: LazyStore
    #: Renders the archive site from the stored editions (``renderers.site.build_site``); None: no site.
    site: SiteBuilder | None = None
    #: The ``--git`` clone, opened and fetched on first use, once per run (the source and the facts step share it).
    upstream: "Upstream | None" = None
    _drafter: Drafter | None = field(default=None, repr=False)
    _downstreams: "Downstreams | None" = field(default=None, repr=False)
    _ledger: Ledger | None = field(default=None, repr=False)
    _audience: list[Reader] | None = field(default=None, repr=False)
    _seal: SealKey | None = field(default=None, repr=False)

    @property
    def language(self) -> Language:
        return self.options.language or self.settings.language

    @property
    def notices(self) -> list[str]:
        """Lines the run says before anything else (a vocabulary proposed for a repo without rules, e-mail sent
        without an unsubscribe link, a downstream that could not be read)."""
        lines = vocabulary_notices(self.classifier) + delivery_notices(self.options, self.settings)
        return lines + (self._downstreams.notices if self._downstreams is not None else [])

    def downstreams(self) -> "Downstreams":
        """The readers file's downstreams, each indexed at its current commit once per run (on first use)."""
        if self._downstreams is None:
            self._downstreams = make_downstreams(self.readers, self.source.repo, self.settings, self.state)
        return self._downstreams

    @property
    def dry_run(self) -> bool:
        """``--deliver outbox``: messages become files that reach no reader."""
        return self.options.deliver == "outbox"

    @property
    def drafter_kind(self) -> DrafterKind:
        """The registered drafter ``--drafter`` names: its concurrency, cost, usage report and lede model."""
        return DRAFTERS[self.options.drafter]

    def drafter(self) -> Drafter:
        """The drafter, checked (``--drafter openai``: the endpoint answers, the model is served) on first use."""
        if self._drafter is None:
            drafter = make_drafter(self.options, self.settings, self.classifier.vocabulary, self.state,
                                   self.seal_key())
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
            self._ledger = Ledger(self.store())
        return self._ledger

    def seal_key(self) -> SealKey | None:
        """The key edition records are sealed with and checked against before delivery; None for the outbox
        (a dry run: nothing reaches a reader, and no key file is made for it). See :mod:`prdigest.state.record`."""
        if self.dry_run:
            return None
        if self._seal is None:
            self._seal = SealKey.for_state(self.settings.state, self.settings.record_secret,
                                            self.settings.record_secret_previous)
        return self._seal

    def surface(self) -> "Surface":
        """Where code facts look for the repo's configuration surface and API: its rules file's ``code:``."""
        rules = self.classifier.rules if isinstance(self.classifier, RulesClassifier) else None
        return surface_for(rules.code if rules is not None else None)

    def store(self) -> Store:
        """The state store (edition records, history, caches, ledger), opened on first use."""
        return self.state()

    def audience(self) -> list[Reader]:
        """The readers this edition serves: the readers file with each reader's own choices (``digest web``)
        applied and unsubscribed readers left out; read from the state store once per run."""
        if self._audience is None:
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
        """Release the drafter, the state store and the channels (safe to call twice)."""
        drafter, self._drafter = self._drafter, None
        self._ledger = None  # it writes through the state store, closed below
        try:
            if drafter is not None:
                drafter.close()
        finally:
            self.state.close()
            for channel in self.channels.values():
                channel.close()


def open_state(location: StateLocation | str | os.PathLike[str]) -> LazyStore:
    """The one opener of the state store: a run's or a command's store, opened on first use and closed by
    ``with`` (or :meth:`Services.close`). Every component takes the store it is handed; none opens one.
    Outside this module, a command takes it through :func:`command`."""
    return LazyStore(location)


@dataclass
class Command:
    """What a command that is not a run gets from the composition root: its state store (opened on first use,
    closed when the ``with`` ends) and the settings it was built from (None when given only a location)."""

    store: LazyStore
    settings: Settings | None = None

    def readers(self, options: RunOptions, repo: str) -> tuple[ReadersFile, Vocabulary]:
        """The readers file and ``repo``'s vocabulary as a run of it builds them (a repo without rules: the
        subsystems its runs were proposed and kept in this store)."""
        classifier = make_classifier(options, repo, self.settings, store=self.store)
        return make_readers(options, classifier), classifier.vocabulary


@contextmanager
def command(source: Settings | StateLocation | str | os.PathLike[str]) -> Iterator[Command]:
    """``with command(settings) as core:``: every command that is not a run takes its state store here, one
    store for all it reads and writes, closed when the block ends."""
    settings = source if isinstance(source, Settings) else None
    with open_state(source.state if isinstance(source, Settings) else source) as store:
        yield Command(store, settings)


@dataclass
class Configured:
    """What the configuration check builds and the run then uses (each built once per run): the state store,
    the PR source, the classifier and the readers file. No renderer, channel or Prefect is involved."""

    options: RunOptions
    settings: Settings
    state: LazyStore
    source: Source
    classifier: Classifier
    readers: ReadersFile
    #: The ``--git`` clone, opened and fetched on first use (by the source or the facts step), once.
    upstream: "Upstream | None" = None
    #: The readers file's downstreams, indexed and checked by :func:`configure`.
    downstreams: "Downstreams | None" = None

    def close(self) -> None:
        self.state.close()


def configure(options: RunOptions, settings: Settings) -> Configured:
    """The run's source, rules and readers from its options; a bad flag or file stops it here (one line)."""
    state = open_state(settings.state)

    upstream = Upstream(settings.git, settings.clone_home())
    try:
        source = make_source(options, settings, state, upstream)
        classifier = make_classifier(options, source.repo, settings, source, state)
        readers = make_readers(options, classifier)
        downstreams = checked_downstreams(options, readers, source.repo, settings, state)
    except BaseException:
        state.close()
        raise
    return Configured(options, settings, state, source, classifier, readers, upstream, downstreams)


def build_services(options: RunOptions, settings: Settings, media: MediaRegistry,
                   site: SiteBuilder | None = None, configured: Configured | None = None) -> Services:
    """The run's services from its options and settings; bad flags, rules or readers stop it here.
    ``media`` and ``site`` come from the shell (renderers live outside the core); ``configured``: what the
    configuration check already built for this run (else it is built here)."""
    configured = configured or configure(options, settings)
    try:
        out = Path(options.out)
        delivered = media.for_deliver(options.deliver)
        channels = make_channels(options, settings, out, media)
        web_base(settings)  # DIGEST_WEB_URL without its secret stops the run here, before anything is collected
        if options.deliver != "outbox":
            check_addresses(configured.readers, delivered, settings, options.readers or str(example_readers_path()))
            # PostgreSQL needs DIGEST_RECORD_SECRET
            SealKey.check_setting(settings.state, settings.record_secret, settings.record_secret_previous)
    except BaseException:
        configured.close()
        raise
    return Services(options=options, settings=settings, source=configured.source, classifier=configured.classifier,
                    readers=configured.readers, media=media, delivered=delivered, channels=channels, out=out,
                    site=site, state=configured.state, upstream=configured.upstream,
                    _downstreams=configured.downstreams)
