"""The one loop: what an edition run does next is decided from its record, and nowhere else.

``digest run`` runs :func:`run_edition` with the pipeline's own steps; the Prefect flow runs the same function
with each step wrapped in a task (retries, caching, the review pause). Neither decides anything itself:

- no record (or ``--resend-edition``): **collect**, draft, connect, then review;
- ``collected``/``drafted``: a run that stopped before its review: collect and draft again (caches make it
  cheap); a draft left at ``drafted`` is replaced by the new one (it never moves back to collected);
- ``in_review``: **review**: the run that started it (resumed on any worker), or nothing for another run;
- ``approved``, ``published``, ``delivering``, ``partial``: **deliver** what the record holds (the ledger skips
  every row already sent); nothing is collected, drafted or reviewed again;
- ``held``, ``delivered``: **nothing**.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, TypeAlias

from prdigest.deliver.run import DeliveryReport, Outcome
from prdigest.kernel.models import Edition, EditionId, Entry, PullRequest
from prdigest.state import record as records
from prdigest.state.record import EditionRecord, Status


class Step(StrEnum):
    """What a run does next."""

    COLLECT = "collect"
    REVIEW = "review"
    DELIVER = "deliver"
    NOTHING = "nothing"


@dataclass(frozen=True)
class Decision:
    """The next step and, for ``nothing``, why (shown to the user)."""

    step: Step
    reason: str = ""


def next_step(record: EditionRecord | None, *, run_id: str | None = None, run_again: bool = False,
              out: Path | None = None) -> Decision:
    """The next step for a run (``run_id``: its flow run, when it has one) given the edition's record."""
    if record is None:
        return Decision(Step.COLLECT)
    status, name = record.status, record.edition.name
    if status in (Status.COLLECTED, Status.DRAFTED):
        return Decision(Step.COLLECT)
    if status == Status.IN_REVIEW:
        if run_id is not None and record.run_id == run_id:
            return Decision(Step.REVIEW)
        if run_again:
            return Decision(Step.COLLECT)
        return Decision(Step.NOTHING, f"{name} is waiting for its review in flow run {record.run_id}: approve or "
                                      f"hold it there (`digest approve {record.run_id}`), or run it again from the "
                                      "start with --resend-edition")
    if run_again:
        return Decision(Step.COLLECT)
    if status == Status.HELD:
        return Decision(Step.NOTHING, f"{name} was held by its editor ({record.edition.approver or 'unknown'}): "
                                      "nothing is sent. To run it again from the start, add --resend-edition")
    if status == Status.DELIVERED:
        kept = f", and {out / 'digest.json'} stays as delivered" if out is not None else ""
        return Decision(Step.NOTHING, f"{name} was already delivered: nothing is collected, no review is "
                                      f"requested{kept}. To run it again on purpose, add --resend-edition "
                                      "(readers already sent are still skipped; `digest resend` sends to them "
                                      "again); `digest status` shows each reader.")
    return Decision(Step.DELIVER)


#: The pipeline's own types (Collected, Rendered, EditionSummary) pass through the loop untouched: the loop only
#: hands them from one step to the next, so it names them ``Any`` rather than import the pipeline that runs it.
Collected: TypeAlias = Any
Rendered: TypeAlias = Any
EditionSummary: TypeAlias = Any


class Pipeline(Protocol):
    """What the loop asks of :class:`prdigest.pipeline.edition.EditionPipeline` besides the steps."""

    services: Any

    def edition_id(self) -> EditionId: ...

    def current_record(self) -> EditionRecord | None: ...

    def save(self, edition: Edition, status: Status, *, expect: EditionRecord | None, new_revision: bool = False,
             run_id: str | None = None) -> EditionRecord: ...

    def new_edition(self, collected: Collected, entries: list[Entry]) -> Edition: ...

    def with_problems(self, edition: Edition, rendered: Rendered) -> Edition: ...

    def write_view(self, edition: Edition) -> Path: ...

    def summarize(self, edition: Edition, rendered: Rendered | None, report: DeliveryReport,
                  files: Sequence[str | Path]) -> EditionSummary: ...

    def skipped(self, reason: str, record: EditionRecord | None = None) -> EditionSummary: ...


class Steps(Protocol):
    """The steps the loop calls; the pipeline runs them directly, the Prefect flow as tasks."""

    def collect(self) -> Collected: ...

    def draft(self, prs: list[PullRequest]) -> list[Entry]: ...

    def connect(self, edition: Edition, prs: list[PullRequest]) -> Edition: ...

    def review(self, record: EditionRecord) -> EditionRecord:
        """The record at ``approved`` or ``held``."""
        ...

    def render(self, edition: Edition) -> Rendered: ...

    def publish(self, record: EditionRecord) -> tuple[EditionRecord, list[Path]]:
        """The record at ``published``, and the archive's files."""
        ...

    def deliver(self, edition: Edition, rendered: Rendered) -> DeliveryReport: ...


def run_edition(pipeline: Pipeline, steps: Steps, *, run_id: str | None = None) -> EditionSummary:
    """One run of the edition the pipeline's options name, from wherever its record stands. When another run
    moves the record meanwhile (two runs of one week at once), this run reads it again and follows it."""
    services = pipeline.services
    store = services.store()
    record = (records.load_by_run(store, run_id) if run_id is not None else None) or pipeline.current_record()
    run_again = services.options.resend_edition
    checked = False
    for _ in range(_FOLLOW):
        decision = next_step(record, run_id=run_id, run_again=run_again, out=services.out)
        if decision.step == Step.NOTHING:
            return pipeline.skipped(decision.reason, record)
        if not checked:  # preflight: a missing host or token, a wrong password stop the run before any work
            services.check_channels()
            checked = True
        try:
            return _run(pipeline, steps, record, decision, run_id=run_id, run_again=run_again)
        except records.Conflict:
            record, run_again = pipeline.current_record(), False
    raise records.RecordError(f"the edition record of {pipeline.edition_id().name} kept changing under this run "
                              f"({_FOLLOW} times): is another run looping on it?")


#: How many times a run follows a record another run moved before giving up.
_FOLLOW = 5


def _run(pipeline: Pipeline, steps: Steps, record: EditionRecord | None, decision: Decision, *,
         run_id: str | None, run_again: bool) -> EditionSummary:
    services = pipeline.services
    store = services.store()
    if decision.step == Step.COLLECT:
        collected = steps.collect()
        new_revision = run_again and record is not None
        # A draft left by a run that stopped before its review (drafted) is drafted again and replaced in one
        # save: a record never moves back to collected, and the week must not stay blocked behind it.
        if new_revision or record is None or record.status != Status.DRAFTED:
            record = pipeline.save(pipeline.new_edition(collected, []), Status.COLLECTED,
                                   expect=None if new_revision else record, new_revision=new_revision, run_id=run_id)
        entries = steps.draft(collected.prs)
        edition = steps.connect(pipeline.new_edition(collected, entries), collected.prs)
        record = pipeline.save(edition, Status.DRAFTED, expect=record)
        decision = Decision(Step.REVIEW)
        # The PRs, the drafts and the connect step's edition are not read past here (the record holds what is
        # reviewed): held to the run's end, its variants were kept twice after the render (3,088 each at 10,000
        # readers).
        del collected, entries, edition
    assert record is not None
    if decision.step == Step.REVIEW:
        record = steps.review(record)
        if record.status == Status.HELD:
            digest_json = pipeline.write_view(record.edition)
            summary = pipeline.summarize(record.edition, None, DeliveryReport(), [digest_json])
            edition = record.edition
            return summary.model_copy(update={"held": (
                f"{edition.name} is held by {edition.approver or 'its editor'}: nothing is sent, and its "
                f"{len(edition.entries)} entries stay as drafted (digest.json). To review it again, run it again "
                "with --resend-edition")})
    seal = services.seal_key()
    if seal is not None:  # what is delivered is what pr-digest sealed after the review, not a rewrite since
        record.check_seal(seal)
    rendered = steps.render(record.edition)
    files: list[str | Path] = list(rendered.files)
    if record.status == Status.APPROVED:
        record = pipeline.save(pipeline.with_problems(record.edition, rendered), Status.APPROVED, expect=record)
        record, site = steps.publish(record)
        files += [p for p in site if p.name == "index.html" and p.parent.name == "site"][:1]
    digest_json = pipeline.write_view(record.edition)
    records.mark(store, record, Status.DELIVERING, seal)
    report = steps.deliver(record.edition, rendered)
    unfinished = report.pending or report.of(Outcome.ELSEWHERE)
    records.mark(store, record, Status.PARTIAL if unfinished else Status.DELIVERED, seal)
    return pipeline.summarize(record.edition, rendered, report, [digest_json, *files])
