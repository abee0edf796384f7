"""The review step: the edition waits for an editor in the Prefect UI (or ``digest approve``) before anything
is rendered or sent.

From a deployment the run is *suspended*: the process exits, and when an editor resumes, the run starts
again from the top, on any worker: the edition comes back from its record (``in_review``, owned by this flow
run: :mod:`prdigest.state.record`, :mod:`prdigest.pipeline.loop`; nothing is collected or drafted again), and the
``suspend_flow_run`` call for a pause key that already fired returns the stored input at once. Outside a
deployment (``digest run --approve ui`` in a terminal) the process pauses and polls, with a finite timeout.

Each attempt has its own pause key (``review-1``, ``review-2``, …): an input that fails our checks is logged
with its reasons and the run waits again under the next key, so a resumed run replays the refused attempts
deterministically and nothing partial ever goes out. A review nobody resumes in time fails the run.

The form is :mod:`flows.review_form`, the editors' notification :mod:`flows.notify`; the decision, its checks
and the draft's markdown are plain Python in :mod:`prdigest.review`.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, cast

import pydantic
from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout, ObjectNotFound
from prefect.flow_runs import pause_flow_run, suspend_flow_run
from prefect.input.run_input import keyset_from_base_key
from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL

from flows.notify import notify_editors
from flows.review_form import ReviewForm, decision_of, review_form
from prdigest.classify.proposal.kept import ProposedClassifier
from prdigest.deliver import Channel
from prdigest.kernel import progress
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, problems
from prdigest.kernel.models import Edition
from prdigest.pipeline.compose import RunOptions
from prdigest.pipeline.edition import EditionPipeline
from prdigest.readers.file import Editor
from prdigest.review import (
    ReviewDecision,
    ReviewExpired,
    ReviewRejected,
    apply_decision,
    check_decision,
    decision_summary,
    md,
    parse_numbers,
    record_review,
    review_markdown,
)
from prdigest.review.accepted import keep_accepted
from prdigest.state import record as records
from prdigest.state.record import EditionRecord, Status, content_hash_of_json

#: Flow-run input key under which the draft edition is kept for ``digest approve`` / ``digest review``.
DRAFT_KEY = "pr-digest-draft"


def run_url(flow_run_id: Any) -> str | None:
    """The flow run's page in the Prefect UI (PREFECT_UI_URL), or None without a UI."""
    base = PREFECT_UI_URL.value()
    return f"{base.rstrip('/')}/runs/flow-run/{flow_run_id}" if base else None


def preflight_review(options: RunOptions) -> None:
    """Fail before collecting anything when ``--approve ui`` could never be answered: without PREFECT_API_URL
    the run talks to a temporary in-process server that no editor (UI or ``digest approve``) can reach."""
    if options.approve == "ui" and not PREFECT_API_URL.value():
        raise ConfigError("--approve ui needs a Prefect server editors can reach: run `prefect server start` and "
                          "set PREFECT_API_URL=http://127.0.0.1:4200/api (see README, Deploying)")


def review_edition(record: EditionRecord, pipeline: EditionPipeline, options: RunOptions,
                   settings: Settings) -> EditionRecord:
    """The record approved or held: automatically, or by an editor told through the run's own channels.

    The decision is bound to what the editor was shown: the draft this run published as its
    ``pr-digest-draft`` input. A record whose content no longer matches that draft (rewritten in the state store
    meanwhile, however consistently) is refused and nothing is sent.
    """
    if options.approve == "auto":
        return pipeline.review(record)
    preflight_review(options)
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise ConfigError("--approve ui needs a Prefect flow run (run the digest-edition flow)")
    run_id = str(context.flow_run.id)
    if record.status == Status.IN_REVIEW:
        get_run_logger().info("%s: resumed from its edition record (%d entries): nothing is collected or drafted "
                              "again", record.edition.name, len(record.edition.entries))
    else:
        record = pipeline.save(record.edition, Status.IN_REVIEW, expect=record, run_id=run_id)
    edition = record.edition
    services = pipeline.services
    # A repo without a rules file: the editor sees which subsystems were proposed (and kept) for it.
    classifier = services.classifier
    proposed = classifier.kept.markdown(md) if isinstance(classifier, ProposedClassifier) else []
    decision = _await_decision(edition, options, settings, run_id, services.readers.editors,
                               suspend=context.flow_run.deployment_id is not None, channels=services.channels,
                               notes=proposed)
    # The record as stored now (a suspended run reads it anew anyway): it must still be the draft the editor saw.
    stored = records.load(services.store(), record.key)
    if stored is None:
        raise records.RecordError(f"{edition.name}: the edition record vanished from the state store during the "
                                  "review: nothing is sent; run the edition again")
    record = stored
    record.check_shown(_shown_hash(run_id), decision.snapshot)
    edition = record.edition
    reviewed = apply_decision(edition, decision)  # checked before: applies in full or raises, never in part
    record_review(services.store(), edition, reviewed, run_id, seal=services.seal_key(),
                  first=parse_numbers(decision.first, "first")[0])  # edits and read-first order kept per PR
    # "Not a break": kept for later runs and digest watch's alerts, until the symbol changes again.
    keep_accepted(services.store(), edition, decision.accept, reviewed.approver or "editor")
    counts = decision_summary(reviewed)
    get_run_logger().info("%s reviewed by %s (%s): %d approved, %d edited, %d rejected", edition.name,
                          reviewed.approver, decision.decision, counts.get("approved", 0),
                          counts.get("edited", 0), counts.get("rejected", 0))
    return pipeline.save(reviewed, Status.HELD if decision.decision == "hold" else Status.APPROVED, expect=record)


def _shown_hash(flow_run_id: Any) -> str:
    """The content hash of the draft this run showed its editor (its ``pr-digest-draft`` input, kept by Prefect)."""
    with get_client(sync_client=True) as client:
        try:
            return content_hash_of_json(client.read_flow_run_input(flow_run_id, DRAFT_KEY))
        except ObjectNotFound:
            return ""


def _await_decision(edition: Edition, options: RunOptions, settings: Settings, run_id: Any, editors: list[Editor],
                    *, suspend: bool, channels: dict[str, Channel] | None = None,
                    notes: list[str] | None = None) -> ReviewDecision:
    """Wait, attempt after attempt, until an editor's input passes :func:`check_decision`."""
    logger = get_run_logger()
    timeout = settings.review_timeout
    refused: list[str] = []
    attempt = 1
    while True:
        key = f"review-{attempt}"
        live = key not in _fired_pause_keys(run_id)
        deadline = datetime.now(timezone.utc) + timedelta(seconds=timeout)
        url = run_url(run_id)
        hint = (f"From a terminal: `digest review {run_id}` shows this text, `digest approve {run_id} --all "
                f"[--reject N ...]` approves.")
        artifact_key = f"draft-{edition.key.lower()}"[:100]
        description = review_markdown(edition, deadline=deadline, run_hint=hint,
                                      artifact_hint=_artifact_hint(artifact_key), notes=notes)
        if refused:
            description = _refusal_markdown(refused) + description
        if live:
            if attempt == 1:
                _publish_draft(edition, run_id, artifact_key,
                               review_markdown(edition, deadline=deadline, run_hint=hint, budget=None,
                                               notes=notes))
                notify_editors(edition, editors, options, settings, run_id, url, deadline, channels=channels)
            progress.report("review", 0, 1)  # the CLI's bar shows the run is waiting, not stuck
            logger.info("%s: waiting for an editor (%s) until %s UTC; after that the run fails and nothing is "
                        "sent. %s", edition.name, "suspended: no worker is held" if suspend else "paused",
                        f"{deadline:%Y-%m-%d %H:%M}", url or f"flow run {run_id}")
        decision: ReviewDecision | None
        try:
            decision = _wait(review_form(edition, description), key, timeout, suspend, live)
        except FlowPauseTimeout:
            message = (f"the review of {edition.name} was not resumed within {_human(timeout)}: the run fails "
                       "and nothing is sent")
            logger.error(message)
            raise ReviewExpired(message) from None
        except pydantic.ValidationError as exc:
            decision, refused = None, [f"{field}: {message}" for field, message in problems(exc)]
        except ReviewRejected as exc:  # an edits line the form could not read
            decision, refused = None, exc.reasons
        if decision is not None:
            refused = check_decision(edition, decision)
            if not refused:
                progress.report("review", 1, 1)
                return decision
        if f"review-{attempt + 1}" not in _fired_pause_keys(run_id):  # a live refusal, not a replay
            logger.warning("%s: review input refused, nothing was sent; the run waits again: %s",
                           edition.name, "; ".join(refused))
        attempt += 1


def _wait(form: type[ReviewForm], key: str, timeout: int, suspend: bool, live: bool = True) -> ReviewDecision:
    if suspend and not live:
        # A resumed run replays its review from the top. The input of a pause key that already fired is read
        # as it is: suspend_flow_run would first log "Suspending flow run…", after the resume, out of order.
        return decision_of(cast(ReviewForm, form.load(keyset_from_base_key(f"suspended-{key}"))))  # sync call
    if suspend:
        result = suspend_flow_run(wait_for_input=form, timeout=timeout, key=key)
    else:
        # pause_flow_run crashes on timeout=None and defaults to one hour: always pass ours.
        result = pause_flow_run(wait_for_input=form, timeout=timeout, key=key,
                                poll_interval=max(1, min(10, timeout // 60)))
    return decision_of(result)


def _fired_pause_keys(flow_run_id: Any) -> set[str]:
    with get_client(sync_client=True) as client:
        return set(client.read_flow_run(flow_run_id).empirical_policy.pause_keys or ())


def _publish_draft(edition: Edition, flow_run_id: Any, key: str, markdown: str) -> None:
    """The whole draft as a markdown artifact, and as a flow-run input for ``digest approve``/``digest review``."""
    create_markdown_artifact(markdown, key=key,
                             description=f"{edition.name}: the draft digest awaiting review")
    with get_client(sync_client=True) as client:
        existing = {i.key for i in client.filter_flow_run_input(key_prefix=DRAFT_KEY, limit=1,
                                                                exclude_keys=set(), flow_run_id=flow_run_id)}
        if DRAFT_KEY not in existing:
            client.create_flow_run_input(flow_run_id, DRAFT_KEY, edition.model_dump_json())


def _artifact_hint(key: str) -> str:
    """A link to the draft artifact (every entry in full) that works from either UI (PREFECT_UI_URL)."""
    base = (PREFECT_UI_URL.value() or "").rstrip("/")
    name = f"[{key}]({base}/artifacts/key/{key})" if base else f"**{key}**"
    return (f"Every entry in full (why, focus points, follow-ups): the {name} artifact, also in this run's "
            "Artifacts tab.")


def _refusal_markdown(reasons: list[str]) -> str:
    """What the editor reads above the form after an input was refused."""
    return ("### ⚠ Your last input was refused\n\n" + "\n".join(f"- {md(r, 300)}" for r in reasons)
            + "\n\nNothing was sent. Correct it and resume again.\n\n")


def _human(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} day(s)"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    return f"{seconds} s"
