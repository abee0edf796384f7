"""The edition pipeline: one object with one method per step, over one run's services.

collect → draft → (review) → render → record → deliver → summarize. The Prefect flow maps these steps
onto tasks (retries, caching, the review pause, artifacts, logs) and decides nothing of its own; the
CLI's Prefect-free paths and the benchmarks call :meth:`EditionPipeline.run`, never a copy of the flow.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel

from prdigest.collect.discussion import comments_total
from prdigest.collect.facts.step import attach_facts
from prdigest.collect.git import UpstreamClone
from prdigest.collect.git.upstream import Upstream
from prdigest.collect.sources import ReadsCommits
from prdigest.connect.embedding import load_embedder
from prdigest.connect.plans import Plans
from prdigest.connect.step import connect_edition
from prdigest.connect.variants import plan_variants
from prdigest.deliver.media import RenderProblem, link_hosts_for
from prdigest.deliver.rendered import (
    Rendered,
    compose_context,
    kept_records,
    planned_deliveries,
    render_context,
    render_variants,
)
from prdigest.deliver.run import DeliveryReport, Outcome, Retry, deliver, outbox_routes
from prdigest.draft import calibrations
from prdigest.draft.cache import cached_complete
from prdigest.draft.calibration import Calibration, calibrated
from prdigest.draft.concurrent import draft_entries
from prdigest.draft.packing import DraftContext
from prdigest.kernel import progress as progress_hook
from prdigest.kernel.errors import DigestError, SourceError
from prdigest.kernel.links import flag_foreign_links
from prdigest.kernel.models import Coverage, DraftEntry, Edition, EditionId, Entry, EntryStatus, Language, PullRequest
from prdigest.kernel.window import Window
from prdigest.kernel.writes import write_atomic
from prdigest.pipeline.compose import Services
from prdigest.pipeline.loop import run_edition
from prdigest.pipeline.outfolder import prune, start_edition
from prdigest.pipeline.prepare import draft_contexts
from prdigest.pipeline.watch_notes import with_watch_notes
from prdigest.publish.site import Archive, publish
from prdigest.review.cleared_actions import cleared_keys, without_cleared
from prdigest.review.edits import apply_edits, apply_first
from prdigest.state import record as records
from prdigest.state.record import EditionRecord, Status

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]


def _facts_coverage(entry: Entry, pr: PullRequest) -> Entry:
    """The entry's coverage says where its diff and facts came from (``git``: the files before and after;
    ``patches``: the REST hunks, partial); a drafter that records no coverage (offline) was given the whole
    record, which this says too."""
    if pr.facts_source is None:
        return entry
    if entry.coverage is not None:
        return entry.model_copy(update={"coverage": entry.coverage.model_copy(update={"source": pr.facts_source})})
    lines = pr.additions + pr.deletions
    remarks = comments_total(pr)  # the human remarks with text, bots left out (what a prompt would get)
    return entry.model_copy(update={"coverage": Coverage(
        files_seen=len(pr.files), files_total=len(pr.files), lines_seen=lines, lines_total=lines,
        comments_seen=remarks, comments_total=remarks, issues=[i.number for i in pr.linked_issues],
        source=pr.facts_source)})


def _reported(step: str) -> Progress:
    """A step's progress told to whoever drives the run (the CLI's bar, the flow's logs: prdigest.kernel.progress)."""
    return lambda done, total: progress_hook.report(step, done, total)


@dataclass(frozen=True)
class Collected:
    """What the collect step found: the repo, the window and the PRs merged in it."""

    repo: str
    window: Window
    prs: list[PullRequest]


class EditionSummary(BaseModel):
    """What a run produced, for the CLI's summary table and the run's result."""

    edition: str
    out: str
    entries: int
    published: int
    per_verdict: dict[str, int]
    per_subsystem: dict[str, int]
    variants: dict[str, list[str]]
    #: Messages sent by this run, per variant (the summary's table reads them: not a scan of ``sent`` per variant).
    messages: dict[str, int] = {}
    idle_readers: list[str]
    sent: list[tuple[str, str, str]]
    failed: list[tuple[str, str, str]]
    #: Still pending after this run and its retries (transient error, channel down): the run exits non-zero
    #: (the flow ends Failed), and ``digest resend EDITION --pending`` sends them.
    pending: list[tuple[str, str, str]] = []
    #: Held by another deliverer (a concurrent run or worker) when this run ended: theirs to finish.
    elsewhere: list[tuple[str, str, str]] = []
    #: Sent by an earlier run of this edition, not sent again.
    already_sent: int = 0
    #: May have reached the reader (the provider did not answer after the body went out): never resent
    #: unless an operator asks (``digest resend --uncertain``).
    uncertain: list[tuple[str, str, str]] = []
    problems: list[RenderProblem]
    files: list[str]
    #: Why the run stopped before collecting (the edition was already delivered), or "".
    skipped: str = ""
    #: The editor held the edition in its review (nothing sent, the entries left as drafted): who, and what next.
    held: str = ""
    #: What the run says before its results (subsystems proposed for a repo without a rules file).
    notices: list[str] = []
    #: One line per downstream the readers declare: its commit, files and uses read, and what the edition does
    #: to it ("downstream ascend at 1a2b3c: 120 files, 640 uses; 2 PRs break it, 3 to check").
    downstreams: list[str] = []


class Undelivered(DigestError):
    """A run ended with messages still pending after its retries: the flow run ends Failed with this error
    (its message says what to do), and ``digest run`` prints the summary it carries and exits non-zero."""

    def __init__(self, summary: EditionSummary) -> None:
        self.summary = summary
        n, name = len(summary.pending), summary.edition
        super().__init__(f"{name}: {n} message{'' if n == 1 else 's'} stayed pending after every retry of this run "
                         f"(digest status '{name}' shows why): send {'it' if n == 1 else 'them'} with "
                         f"digest resend '{name}' --pending")

    def __reduce__(self):  # pickled with the flow run's result
        return (Undelivered, (self.summary,))


def auto_approve(edition: Edition, approver: str = "auto", *, leave_flagged: bool = False) -> Edition:
    """``--approve auto``: every drafted entry is approved as drafted. With ``leave_flagged`` (real channels:
    nobody looked at it), an entry the drafter flagged for the editor (a fallback draft, a foreign link, a
    grounding failure) is left out instead, and the edition's review note and the log say which."""
    left = [e.number for e in edition.entries if leave_flagged and e.flagged]
    entries = [e.model_copy(update={"status": EntryStatus.REJECTED if e.number in left else EntryStatus.APPROVED})
               for e in edition.entries]
    note = edition.review_note
    if left:
        note = (f"auto-approval left out {len(left)} entr{'y' if len(left) == 1 else 'ies'} the drafter flagged "
                f"for the editor ({', '.join(f'#{n}' for n in left)}): review them with --approve ui")
        log.warning("%s: %s", edition.name, note)
    return edition.model_copy(update={
        "entries": entries, "approver": approver, "approved_at": datetime.now(timezone.utc), "review_note": note,
    })


def counts(entries: Iterable[Entry]) -> tuple[Counter[str], Counter[str]]:
    """Entries per verdict and per subsystem."""
    entries = list(entries)
    return Counter(e.verdict.value for e in entries), Counter(s for e in entries for s in e.subsystems)


class _Dumped(list):
    """The variants of ``digest.json``, each dumped when the encoder reaches it: never all at once (thousands at
    10,000 readers)."""

    def __iter__(self) -> Iterator[dict]:
        return (v.model_dump(mode="json") for v in super().__iter__())


def write_digest_json(out: Path, edition: Edition) -> Path:
    """``DIR/digest.json``: the edition and all its entries, each with its review status; written as it is
    encoded, variant by variant (the text ``json.dumps(..., indent=2)`` gives, never held whole)."""
    path = out / "digest.json"
    data = edition.model_copy(update={"variants": []}).model_dump(mode="json")
    data["variants"] = _Dumped(edition.variants)  # in its place: the encoder's indented path iterates it
    data["name"] = edition.name  # unambiguous: repo + ISO week, or repo + exact window (EditionId.name)
    data["week"] = edition.week
    data["key"] = edition.key  # the ledger's key: digest status and digest resend accept it, or the name
    chunks = json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(data)
    write_atomic(path, (chunk.encode("utf-8") for chunk in chunks))
    return path



class EditionPipeline:
    """One edition's steps over one run's :class:`~prdigest.pipeline.compose.Services`."""

    def __init__(self, services: Services) -> None:
        self.services = services
        #: The ``--git`` clone the collect step opened (and fetched) for this run: the draft step reads the files'
        #: text from it too, without a second fetch. None without ``--git`` or when it could not be had.
        self._clone: UpstreamClone | None = None
        #: The connect step's variant plan, reused by this run's render step (prdigest/connect/plans.py).
        self.plans = Plans()

    # --- the record ---------------------------------------------------------------------------
    def edition_id(self) -> EditionId:
        """The edition the options name: the source's repo and the window."""
        window = self.window()
        return EditionId(self.services.source.repo, window.since, window.until)

    def current_record(self) -> EditionRecord | None:
        """The stored record of this run's edition, or None."""
        return records.load(self.services.store(), self.edition_id())

    def save(self, edition: Edition, status: Status, *, expect: EditionRecord | None, new_revision: bool = False,
             run_id: str | None = None) -> EditionRecord:
        """Store ``edition`` at ``status`` (see :func:`prdigest.state.record.save`)."""
        return records.save(self.services.store(), edition, status, expect=expect, new_revision=new_revision,
                            run_id=run_id, seal=self.services.seal_key())

    def write_view(self, edition: Edition) -> Path:
        """``DIR/digest.json``, the record's view for people and scripts. An edition with nothing to send (held,
        or every entry rejected) was not rendered: the renderings an earlier edition left in DIR go."""
        if not edition.published:
            start_edition(self.services.out, edition.key, self.services.media.names())
            prune(self.services.out, self.services.media.names(), [])
        return write_digest_json(self.services.out, edition)

    @staticmethod
    def with_problems(edition: Edition, rendered: Rendered) -> Edition:
        """The edition as it is published: with its render problems (PRs some medium could not render) and its
        variants as rendered (who gets which entries, what to read first, their lede)."""
        return edition.model_copy(update={"problems": rendered.problems,
                                          "variants": kept_records(edition.variants, rendered.variants)})

    # --- collect ------------------------------------------------------------------------------
    def window(self) -> Window:
        """The window the options name, or the source's default (last full week; all of a JSONL file)."""
        options = self.services.options
        return Window.from_flags(options.since, options.until) or self.services.source.default_window()

    def collect(self) -> Collected:
        """Every PR merged in the window, from the configured source (``--no-discussion``: without reviews,
        conversation comments and linked issues, whatever the source holds)."""
        source = self.services.source
        window = self.window()
        prs = source.collect(window)
        if not prs:  # else an empty edition is stored, published in the archive, and the run exits 0
            name = EditionId(source.repo, window.since, window.until).name
            raise SourceError(f"nothing merged into {name} ([{window.since.isoformat()}, "
                              f"{window.until.isoformat()}) UTC): no edition is made and nothing is sent; "
                              "check --repo and --since/--until")
        if self.services.options.no_discussion:
            prs = [pr.model_copy(update={"reviews": [], "comments": [], "linked_issues": []}) for pr in prs]
        return Collected(source.repo, window, self.code_facts(prs))

    def code_facts(self, prs: list[PullRequest]) -> list[PullRequest]:
        """Each PR with its code facts (``prdigest/collect/facts/``): from the ``--git`` clone, fetched once for
        the run and cached by merge commit in the state store, or from the REST patches (marked partial)."""
        services = self.services
        settings = services.settings
        upstream = services.upstream or Upstream(settings.git, settings.clone_home())
        self._clone = upstream()  # opened and fetched once for the run (the source may have opened it already)
        if upstream.problem:  # said once, when it was opened; the facts come from the patches
            settings = settings.model_copy(update={"git": None})
        # Without a clone, a source that can read the files (GitHub's API) gives them whole: exact facts.
        readable = services.source.commit_reader(prs) if self._clone is None and isinstance(
            services.source, ReadsCommits) else None
        reader = None
        if readable is not None:
            prs, reader = readable
        store = services.store() if settings.git or reader is not None else None
        with_facts, _ = attach_facts(prs, settings=settings, surface=services.surface(), store=store,
                                     clone=self._clone, reader=reader)
        return with_facts

    # --- classify and draft --------------------------------------------------------------------
    def draft_contexts(self, prs: list[PullRequest]) -> dict[int, DraftContext]:
        """What each PR's drafter is given besides the PR (whose code facts it carries): its relations from the
        cheap reference pass (this edition and the published history), and, when a clone gives them, the hunks of
        its files and their full text after the change (:func:`prdigest.pipeline.prepare.draft_contexts`, which
        ``digest eval`` calls too)."""
        return draft_contexts(self.services.source.repo, self.window(), prs, self.services.store(), self._clone)

    def draft(self, prs: list[PullRequest], progress: Progress | None = None, *,
              contexts: Mapping[int, DraftContext] | None = None) -> list[Entry]:
        """Subsystems and a draft entry for every PR, given its context (:meth:`draft_contexts`); a model-backed
        drafter fans out over ``llm_concurrency`` threads, the offline one drafts in line. Each entry records what
        the drafter was given (its coverage), and an editor's kept edit of the PR is applied again
        (prdigest/review/edits.py)."""
        services = self.services
        given = dict(contexts) if contexts is not None else self.draft_contexts(prs)
        drafter = services.drafter()  # --drafter openai: the preflight check runs here
        calibration = self.calibration()

        def one(pr: PullRequest, subsystems: list[str], language: Language) -> DraftEntry:
            return calibrated(drafter.draft(pr, subsystems, language, given.get(pr.number)), pr, subsystems,
                              language, calibration)

        entries = draft_entries(prs, services.classifier.classify, one, services.language,
                                progress or _reported("draft"),
                                concurrency=services.drafter_kind.concurrency(services.settings))
        cover = services.drafter_kind.coverage
        by_number = {pr.number: pr for pr in prs}
        if cover is not None:
            entries = [e.model_copy(update={"coverage": cover(by_number[e.number], given.get(e.number),
                                                              services.settings)}) for e in entries]
        entries = [_facts_coverage(e, by_number[e.number]) for e in entries]
        entries = without_cleared(services.store(), services.source.repo, services.language, list(zip(prs, entries)))
        return apply_edits(services.store(), services.source.repo, list(zip(prs, entries)), services.seal_key(),
                           self.edition_id().key)

    def calibration(self) -> Calibration | None:
        """The repo's latest verdict calibration (``digest calibrate``), None with ``--no-calibration`` or none."""
        if self.services.options.no_calibration:
            return None
        return calibrations.latest(self.services.store(), self.services.source.repo)

    def new_edition(self, collected: Collected, entries: list[Entry]) -> Edition:
        """The edition awaiting review: token totals and cost summed from its entries."""
        services = self.services
        # URLs in prose off the allowed link hosts: flagged for the editor here, defanged by every medium.
        entries = flag_foreign_links(entries, link_hosts_for(services.settings.github_url), collected.repo)
        tokens_in, tokens_out = sum(e.tokens_in for e in entries), sum(e.tokens_out for e in entries)
        return Edition(
            repo=collected.repo, since=collected.window.since, until=collected.window.until,
            language=services.language, drafter=self.drafter_name(entries), generated_at=datetime.now(timezone.utc),
            entries=entries, tokens_in=tokens_in, tokens_out=tokens_out,
            cost_usd=services.drafter_kind.cost(tokens_in, tokens_out, services.settings),
        )

    def connect(self, edition: Edition, prs: list[PullRequest]) -> Edition:
        """Each entry's impact on the readers' downstreams (``prdigest/connect/impact/``), relations to this and
        earlier editions (reverted PRs demoted), stories, earlier follow-ups and the lede
        (``prdigest/connect/step.py``): read from the state store, before review."""
        services = self.services
        settings = services.settings
        # What each entry's facts do to the readers' own repositories: before the variants, which select it.
        if services.readers.downstreams:
            impacted = services.downstreams().apply(edition.entries, prs)
            # Cleared impacts left out; those digest watch already alerted marked "alerted on DATE".
            impacted = with_watch_notes(services.store(), services.source.repo, impacted)
            edition = edition.model_copy(update={"entries": impacted})
        # The model's ledes and ranking are cached by request like drafts: a warm re-run asks nothing.
        make_complete = services.drafter_kind.complete
        complete = (cached_complete(make_complete(settings), services.store(), model=settings.model,
                                    seal=services.seal_key()) if make_complete else None)

        connected = connect_edition(edition, prs, services.store(), max_weeks=settings.followup_weeks,
                                    embedder=load_embedder if settings.followup_semantic else None,
                                    complete=complete, vocabulary=services.classifier.vocabulary,
                                    readers=services.audience(), plans=self.plans,
                                    cleared=cleared_keys(services.store(), services.source.repo))
        # the read-first order an editor gave this PR before
        return apply_first(services.store(), connected, services.seal_key())

    def drafter_name(self, entries: list[Entry]) -> str:
        """The drafter asked for, as its registration names it (some entries may be marked fallbacks)."""
        return self.services.drafter_kind.title(self.services.settings)

    # --- review ----------------------------------------------------------------------------------
    def review(self, record: EditionRecord) -> EditionRecord:
        """``--approve auto``: every drafted entry approved as drafted (the Prefect flow asks an editor); with real
        channels, the entries the drafter flagged for the editor are left out and the review note says so."""
        real = self.services.options.deliver != "outbox"  # the outbox is a dry run: it shows everything
        return self.save(auto_approve(record.edition, leave_flagged=real), Status.APPROVED, expect=record)

    # --- render ----------------------------------------------------------------------------------
    def render(self, edition: Edition, progress: Progress | None = None) -> Rendered:
        """Plan variants over the approved entries, render each once on the media its readers use, write its
        files and spool its renderings until delivery (:func:`prdigest.deliver.rendered.render_variants`)."""
        services = self.services
        variants, idle = plan_variants(edition, services.audience(), services.classifier.vocabulary,
                                       plans=self.plans)
        start_edition(services.out, edition.key, services.media.names())  # DIR holds this edition only
        rendered = render_variants(edition, variants, idle, services.media, render_context(services.settings),
                                   out=services.out, progress=progress or _reported("render"))
        # A variant an earlier rendering of this edition had (readers or review changed since) is gone too.
        out = str(services.out)  # path text, as the files are: no Path per file (pathlib interns their names)
        written = {os.path.relpath(f, out).split(os.sep, 1)[0] for f in rendered.files}
        prune(services.out, {*services.media.names(), *written}, rendered.files)
        return rendered

    # --- publish --------------------------------------------------------------------------------
    def publish(self, record: EditionRecord) -> tuple[EditionRecord, list[Path]]:
        """Publish the approved record (history index, status ``published``), track its follow-ups, and write
        the archive of every published edition of the repo to ``DIR/site/``: :func:`prdigest.publish.site.publish`,
        as ``digest site`` does. Before delivery: the permalinks in the messages exist when they arrive."""
        services = self.services
        repo = record.edition.repo
        archive = None if services.site is None else Archive(
            services.site, services.settings.site_url, link_hosts_for(services.settings.github_url),
            {repo: services.classifier.vocabulary}, services.settings.site_impact)
        published = publish(services.store(), services.out, archive, edition=record.edition, expect=record,
                            seal=services.seal_key(), followup_weeks=services.settings.followup_weeks, repo=repo)
        assert published.record is not None  # an edition was given
        return published.record, list(published.site.paths) if published.site else []

    # --- deliver ---------------------------------------------------------------------------------
    def deliver(self, edition: Edition, rendered: Rendered, progress: Progress | None = None) -> DeliveryReport:
        """Every reader's messages on the delivered media: to the outbox (a dry run, no ledger), or
        through the ledger (each reader's copy exactly once, across crashes and re-runs). Each variant's
        renderings are read back from the render step's spool when its first message is composed, one variant
        at a time."""
        services = self.services
        if not edition.published:
            return DeliveryReport()
        deliveries = planned_deliveries(rendered, services.delivered, compose_context(services.settings, edition))
        deliveries, channels = outbox_routes(deliveries, services.channels)
        retry = Retry(services.settings.delivery_retries, services.settings.delivery_retry_delay)
        return deliver(edition.id, deliveries, channels, services.ledger(), progress or _reported("deliver"), retry)

    # --- summarize -------------------------------------------------------------------------------
    def summarize(self, edition: Edition, rendered: Rendered | None, report: DeliveryReport,
                  files: Sequence[str | Path]) -> EditionSummary:
        """What the run produced and delivered, for the CLI and the run's result."""
        rendered = rendered or Rendered([], [])
        per_verdict, per_subsystem = counts(edition.published)
        row = lambda r: (r.reader, r.medium, r.detail)  # noqa: E731
        return EditionSummary(
            edition=edition.name, out=str(self.services.out), entries=len(edition.entries),
            published=len(edition.published), per_verdict=dict(per_verdict),
            per_subsystem=dict(per_subsystem.most_common()),
            variants={v.variant.key: [r.id for r in v.variant.readers] for v in rendered.variants},
            messages=dict(Counter(r.variant for r in report.sent)),
            idle_readers=[r.id for r in rendered.idle], sent=[row(r) for r in report.sent],
            failed=[row(r) for r in report.failed],
            pending=[row(r) for r in report.pending], elsewhere=[row(r) for r in report.of(Outcome.ELSEWHERE)],
            uncertain=[row(r) for r in report.uncertain],
            already_sent=len(report.already), problems=rendered.problems,
            files=[str(f) for f in files], notices=self.services.notices + self.earlier_unsent(),
            downstreams=self.downstream_lines(edition),
        )

    def downstream_lines(self, edition: Edition) -> list[str]:
        """One line per declared downstream: what was read of it and how many of the edition's PRs break it or
        need a check (never silent: a downstream nothing touches says so)."""
        services = self.services
        if not services.readers.downstreams:
            return []
        indexes = services.downstreams().indexes()
        lines = []
        for name, index in indexes.items():
            # "breaks" sorts before "check": the smallest is an entry's worst severity.
            worst = {e.number: min((i.severity for i in e.impact if i.downstream == name), default=None)
                     for e in edition.entries}
            breaks = sum(1 for w in worst.values() if w == "breaks")
            check = sum(1 for w in worst.values() if w == "check")
            readers = [r.id for r in services.readers.readers if r.downstream == name]
            said = f"{breaks} PR(s) break it, {check} to check" if breaks or check \
                else "no PR of this edition touches it"
            lines.append(f"downstream {name} at {index.commit[:12]}: {index.files} files, {len(index.uses)} uses of "
                         f"the upstream; {said} (readers: {', '.join(readers) or 'none'})")
        return lines

    def skipped(self, reason: str, record: EditionRecord | None = None) -> EditionSummary:
        """The result of a run with nothing to do (see :func:`prdigest.pipeline.loop.next_step`)."""
        name = record.edition.name if record is not None else self.edition_id().name
        return EditionSummary(edition=name, out=str(self.services.out), entries=0, published=0, per_verdict={},
                              per_subsystem={}, variants={}, idle_readers=[], sent=[], failed=[], problems=[],
                              files=[], skipped=reason, notices=self.services.notices + self.earlier_unsent())

    def earlier_unsent(self) -> list[str]:
        """One line per other edition of the repo whose messages are still pending in the ledger: a week whose
        delivery gave up is pointed at by every later run until someone sends it."""
        found = self.services.ledger().unsent(self.services.source.repo, self.edition_id().key)
        return [f"{name}: {n} message{'' if n == 1 else 's'} still pending from an earlier run: send "
                f"{'it' if n == 1 else 'them'} with digest resend '{name}' --pending (digest status '{name}' "
                "lists them)" for _, name, n in found]

    # --- the loop, run directly (no Prefect) ----------------------------------------------------------
    def run(self) -> EditionSummary:
        """The edition's next steps, decided from its record (:func:`prdigest.pipeline.loop.run_edition`)."""
        return run_edition(self, self)
