"""The edition pipeline: one object with one method per step, over one run's services.

collect → draft → (review) → render → record → deliver → summarize. The Prefect flow maps these steps
onto tasks (retries, caching, the review pause, artifacts, logs) and decides nothing of its own; the
CLI's Prefect-free paths and the benchmarks call :meth:`EditionPipeline.run`, never a copy of the flow.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from prdigest.delivery.outbox import write_atomic
from prdigest.delivery.run import DeliveryReport, Outcome, deliver, plan_deliveries
from prdigest.drafting.concurrent import draft_entries
from prdigest.errors import ConfigError
from prdigest.links import flag_foreign_links
from prdigest.media import ComposeContext, RenderContext, Rendering, RenderProblem, link_hosts_for
from prdigest.models import Edition, EditionId, Entry, EntryStatus, PullRequest
from prdigest.readers import Reader
from prdigest.selfservice.links import link_kinds, linker
from prdigest.services import Services, sender
from prdigest.variants import Variant, plan_variants
from prdigest.window import Window

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Collected:
    """What the collect step found: the repo, the window and the PRs merged in it."""

    repo: str
    window: Window
    prs: list[PullRequest]


@dataclass
class RenderedVariant:
    """One variant rendered for every registered medium, shared by all of its readers."""

    variant: Variant
    renderings: dict[str, Rendering]

    @property
    def problems(self) -> list[RenderProblem]:
        return [p for r in self.renderings.values() for p in r.problems]


@dataclass
class Rendered:
    """The render step's result: every variant's renderings, the idle readers, the files written."""

    variants: list[RenderedVariant]
    idle: list[Reader]
    files: list[Path] = field(default_factory=list)

    @property
    def problems(self) -> list[RenderProblem]:
        return [p for v in self.variants for p in v.problems]


class EditionSummary(BaseModel):
    """What a run produced, for the CLI's summary table and the run's result."""

    edition: str
    out: str
    entries: int
    published: int
    per_verdict: dict[str, int]
    per_subsystem: dict[str, int]
    variants: dict[str, list[str]]
    idle_readers: list[str]
    sent: list[tuple[str, str, str]]
    failed: list[tuple[str, str, str]]
    #: Still pending after this run (transient error, channel down): the next run retries them.
    pending: list[tuple[str, str, str]] = []
    #: Sent by an earlier run of this edition, not sent again.
    already_sent: int = 0
    #: May have reached the reader (the provider did not answer after the body went out): never resent
    #: unless an operator asks (``digest resend --uncertain``).
    uncertain: list[tuple[str, str, str]] = []
    problems: list[RenderProblem]
    files: list[str]
    #: Why the run stopped before collecting (the edition was already delivered), or "".
    skipped: str = ""


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


def write_digest_json(out: Path, edition: Edition) -> Path:
    """``DIR/digest.json``: the edition and all its entries, each with its review status."""
    path = out / "digest.json"
    data = edition.model_dump(mode="json")
    data["name"] = edition.name  # unambiguous: repo + ISO week, or repo + exact window (EditionId.name)
    data["week"] = edition.week
    data["key"] = edition.key  # the ledger's key: digest status and digest resend accept it, or the name
    write_atomic(path, json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8"))
    return path


def write_inside(out: Path, relative: str, data: bytes) -> Path:
    """Write a file under ``out``, refusing any path that would resolve outside it."""
    root = out.resolve()
    path = (out / relative).resolve()
    if root not in path.parents:
        raise ConfigError(f"refusing to write '{relative}' outside the output folder {out}")
    write_atomic(path, data)
    return out / relative


class EditionPipeline:
    """One edition's steps over one run's :class:`~prdigest.services.Services`."""

    def __init__(self, services: Services) -> None:
        self.services = services

    # --- before collecting ----------------------------------------------------------------------
    def already_delivered(self) -> str | None:
        """Why this edition (the source's repo, this window) must not run again, or None: some message of it
        already went out through the ledger (sent, uncertain or being sent), and ``--resend-edition`` was not
        given. A dry run (the outbox keeps no ledger) is never "delivered". Checked before collecting, so a
        second run asks no editor to review what readers already got and keeps its ``digest.json``."""
        services = self.services
        if services.dry_run or services.options.resend_edition:
            return None
        window = self.window()
        edition = EditionId(services.source.repo, window.since, window.until)
        counts = services.ledger().counts(edition.key)
        if not (counts.get("sent", 0) or counts.get("uncertain", 0) or counts.get("sending", 0)):
            return None
        shown = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
        return (f"{edition.name} was already delivered ({shown} in the ledger): nothing is collected, no review "
                f"is requested, and {services.out / 'digest.json'} stays as delivered. To run it again on purpose, "
                "add --resend-edition (readers already sent are still skipped; `digest resend` sends to them "
                "again); `digest status` shows each reader.")

    def unfinished_delivery(self) -> Edition | None:
        """The edition as an earlier run published it (from the history) when that run left deliveries
        pending (a channel down, a transient error): the next run sends those from what was approved, with
        no new collection, drafting or review. None when nothing is pending or the history lacks it."""
        from prdigest import history

        services = self.services
        window = self.window()
        edition_id = EditionId(services.source.repo, window.since, window.until)
        # A deliverer that died mid-delivery left its rows "sending": settle them first (back to pending when
        # their push never began, uncertain when it did), or the rest of its work would never be sent.
        services.ledger().recover(edition_id.key)
        if not services.ledger().counts(edition_id.key).get("pending", 0):
            return None
        for edition in history.editions(services.store(), services.source.repo):
            if edition.since == window.since and edition.until == window.until:
                return edition
        return None

    def finish_delivery(self, edition: Edition, progress: Progress | None = None) -> EditionSummary:
        """Render the published edition again and deliver what is still pending (the ledger skips the rest);
        ``digest.json`` stays as delivered."""
        rendered = self.render(edition)
        report = self.deliver(edition, rendered, progress)
        return self.summarize(edition, rendered, report, rendered.files)

    # --- collect ------------------------------------------------------------------------------
    def window(self) -> Window:
        """The window the options name, or the source's default (last full week; all of a JSONL file)."""
        options = self.services.options
        return Window.from_flags(options.since, options.until) or self.services.source.default_window()

    def collect(self) -> Collected:
        """Every PR merged in the window, from the configured source."""
        source = self.services.source
        window = self.window()
        return Collected(source.repo, window, source.collect(window))

    # --- classify and draft --------------------------------------------------------------------
    def draft(self, prs: list[PullRequest], progress: Progress | None = None) -> list[Entry]:
        """Subsystems and a draft entry for every PR; a model-backed drafter fans out over
        ``llm_concurrency`` threads, the offline one drafts in line."""
        services = self.services
        drafter = services.drafter()  # --drafter openai: the preflight check runs here
        concurrency = 1 if services.options.drafter == "offline" else services.settings.llm_concurrency
        return draft_entries(prs, services.classifier.classify, drafter.draft, services.language, progress,
                             concurrency=concurrency)

    def new_edition(self, collected: Collected, entries: list[Entry]) -> Edition:
        """The edition awaiting review: token totals and cost summed from its entries."""
        from prdigest.drafting.cost import cost_usd  # not .llm: that imports the openai client

        services = self.services
        # URLs in prose off the allowed link hosts: flagged for the editor here, defanged by every medium.
        entries = flag_foreign_links(entries, link_hosts_for(services.settings.github_url), collected.repo)
        tokens_in, tokens_out = sum(e.tokens_in for e in entries), sum(e.tokens_out for e in entries)
        return Edition(
            repo=collected.repo, since=collected.window.since, until=collected.window.until,
            language=services.language, drafter=self.drafter_name(entries), generated_at=datetime.now(timezone.utc),
            entries=entries, tokens_in=tokens_in, tokens_out=tokens_out,
            cost_usd=cost_usd(tokens_in, tokens_out, services.settings),
        )

    def connect(self, edition: Edition, prs: list[PullRequest]) -> Edition:
        """Relations to this and earlier editions (reverted PRs demoted), stories, earlier follow-ups and the
        lede (``prdigest/connect.py``): read from the state store, before review."""
        from prdigest.connect import connect_edition
        from prdigest.drafting.cache import cached_complete
        from prdigest.embedding import load_embedder
        from prdigest.lede import openai_complete

        services = self.services
        settings = services.settings
        # The model's ledes and ranking are cached by request like drafts: a warm re-run asks nothing.
        complete = (cached_complete(openai_complete(settings), services.store(), model=settings.model)
                    if services.options.drafter == "openai" else None)
        return connect_edition(edition, prs, services.store(), max_weeks=settings.followup_weeks,
                               embedder=load_embedder if settings.followup_semantic else None,
                               complete=complete, vocabulary=services.classifier.vocabulary,
                               readers=services.readers.readers)

    def drafter_name(self, entries: list[Entry]) -> str:
        """The drafter asked for (with openai, some entries may be marked fallbacks)."""
        if self.services.options.drafter == "openai":
            return f"openai:{self.services.settings.model}"
        return entries[0].drafter if entries else self.services.options.drafter

    # --- render ----------------------------------------------------------------------------------
    def render(self, edition: Edition, progress: Progress | None = None) -> Rendered:
        """Plan variants over the approved entries, render each once per medium, write its files."""
        services = self.services
        variants, idle = plan_variants(edition, services.audience(), services.classifier.vocabulary)
        context = RenderContext(link_hosts=link_hosts_for(services.settings.github_url),
                                site_url=services.settings.site_url,
                                reader_links=link_kinds(services.settings))
        rendered = Rendered([], idle)
        for i, variant in enumerate(variants, start=1):
            renderings = {m.name: m.render(edition, variant, context) for m in services.media}
            rendered.variants.append(RenderedVariant(variant, renderings))
            for rendering in renderings.values():
                rendered.files += [write_inside(services.out, rel, data) for rel, data in rendering.files.items()]
            if progress is not None:
                progress(i, len(variants))
        return rendered

    # --- record ----------------------------------------------------------------------------------
    def record(self, edition: Edition, rendered: Rendered) -> tuple[Edition, Path]:
        """The edition as published (with its render problems and its variants as rendered), written to
        ``DIR/digest.json``."""
        edition = edition.model_copy(update={"problems": rendered.problems,
                                             "variants": [v.variant.record() for v in rendered.variants]})
        return edition, write_digest_json(self.services.out, edition)

    # --- publish --------------------------------------------------------------------------------
    def publish(self, edition: Edition) -> list[Path]:
        """Record the edition in the history (so later editions and the archive know it), then write the
        archive of every stored edition of the repo to ``DIR/site/``. Before delivery: the permalinks in
        the messages exist when they arrive."""
        from prdigest import followups, history

        services = self.services
        store = services.store()
        history.record_edition(store, edition)
        followups.track(store, edition, max_weeks=services.settings.followup_weeks)
        if services.site is None:
            return []
        files = services.site(history.editions(store, edition.repo), site_url=services.settings.site_url,
                              link_hosts=link_hosts_for(services.settings.github_url),
                              vocabularies={edition.repo: services.classifier.vocabulary})
        return [write_inside(services.out, f"site/{path}", data) for path, data in sorted(files.items())]

    # --- deliver ---------------------------------------------------------------------------------
    def deliver(self, edition: Edition, rendered: Rendered, progress: Progress | None = None) -> DeliveryReport:
        """Every reader's messages on the delivered media: to the outbox (a dry run, no ledger), or
        through the ledger (each reader's copy exactly once, across crashes and re-runs)."""
        services = self.services
        if not edition.published:
            return DeliveryReport()
        context = ComposeContext(edition=edition, sender=sender(services.settings),
                                 unsubscribe_template=services.settings.unsubscribe_url,
                                 links=linker(services.settings, edition.repo))
        deliveries = plan_deliveries([(v.variant.readers, v.renderings) for v in rendered.variants],
                                     services.delivered, context)
        ledger = None if services.dry_run else services.ledger()
        return deliver(edition.id, deliveries, services.channels, ledger, progress)

    # --- summarize -------------------------------------------------------------------------------
    def summarize(self, edition: Edition, rendered: Rendered, report: DeliveryReport,
                  files: list[Path]) -> EditionSummary:
        """What the run produced and delivered, for the CLI and the run's result."""
        per_verdict, per_subsystem = counts(edition.published)
        row = lambda r: (r.reader, r.medium, r.detail)  # noqa: E731
        return EditionSummary(
            edition=edition.name, out=str(self.services.out), entries=len(edition.entries),
            published=len(edition.published), per_verdict=dict(per_verdict),
            per_subsystem=dict(per_subsystem.most_common()),
            variants={v.variant.key: [r.id for r in v.variant.readers] for v in rendered.variants},
            idle_readers=[r.id for r in rendered.idle], sent=[row(r) for r in report.sent],
            failed=[row(r) for r in report.failed],
            pending=[row(r) for r in report.results if r.outcome in (Outcome.PENDING, Outcome.ELSEWHERE)],
            uncertain=[row(r) for r in report.uncertain],
            already_sent=len(report.already), problems=rendered.problems,
            files=[str(f) for f in files],
        )

    def skipped(self, reason: str) -> EditionSummary:
        """The result of a run that stopped before collecting (see :meth:`already_delivered`)."""
        window = self.window()
        name = EditionId(self.services.source.repo, window.since, window.until).name
        return EditionSummary(edition=name, out=str(self.services.out), entries=0, published=0, per_verdict={},
                              per_subsystem={}, variants={}, idle_readers=[], sent=[], failed=[], problems=[],
                              files=[], skipped=reason)

    # --- the whole run, without Prefect ------------------------------------------------------------
    def run(self, review: Callable[[Edition], Edition] = auto_approve) -> EditionSummary:
        """Every step in order, with ``review`` between drafting and rendering."""
        delivered = self.already_delivered()
        if delivered:
            unfinished = self.unfinished_delivery()
            if unfinished is None:
                return self.skipped(delivered)
            self.services.check_channels()
            return self.finish_delivery(unfinished)
        self.services.check_channels()
        collected = self.collect()
        entries = self.draft(collected.prs)
        edition = review(self.connect(self.new_edition(collected, entries), collected.prs))
        rendered = self.render(edition)
        edition, digest_json = self.record(edition, rendered)
        site = self.publish(edition)
        report = self.deliver(edition, rendered)
        return self.summarize(edition, rendered, report, [digest_json, *rendered.files,
                                                                *[p for p in site if p.name == "index.html"][:1]])
