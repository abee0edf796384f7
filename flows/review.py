"""The review step: the edition waits for an editor in the Prefect UI (or ``digest approve``) before anything
is rendered or sent.

From a deployment the run is *suspended*: the process exits, and when an editor resumes, the run starts
again from the top; ``collect`` and ``classify-and-draft`` come back Cached (persisted results) and the
``suspend_flow_run`` call for a pause key that already fired returns the stored input at once. Outside a
deployment (``digest run --approve ui`` in a terminal) the process pauses and polls, with a finite timeout.

Each attempt has its own pause key (``review-1``, ``review-2``, …): an input that fails our checks is logged
with its reasons and the run waits again under the next key, so a resumed run replays the refused attempts
deterministically and nothing partial ever goes out. A review nobody resumes in time fails the run.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timedelta, timezone
from email.message import EmailMessage
from email.utils import formataddr, format_datetime, make_msgid, parseaddr
from pathlib import Path
from typing import Any

import pydantic
from prefect import get_run_logger
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run, suspend_flow_run
from prefect.input import RunInput
from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL

from prdigest import pipeline, progress
from prdigest.config import Settings
from prdigest.delivery import Message
from prdigest.errors import ConfigError, DeliveryError
from prdigest.models import Edition
from prdigest.readers import Editor, Reader
from prdigest.review import (
    DEFAULT_REVIEW_TIMEOUT, ReviewDecision, ReviewExpired, apply_decision, check_decision, decision_summary, md,
    prefilled_edits, record_review, review_markdown,
)
from prdigest.services import RunOptions, make_channels, make_classifier, make_readers, sender
from prdigest.store import open_store

#: Flow-run input key under which the draft edition is kept for ``digest approve`` / ``digest review``.
DRAFT_KEY = "pr-digest-draft"


class ReviewForm(ReviewDecision, RunInput):
    """The resume form: ReviewDecision's fields, rendered by the Prefect UI."""


def review_form(edition: Edition, description: str, approver: str = "") -> type[ReviewForm]:
    """The form pre-filled for this edition (like ``with_initial_data``, but keeping each field's help text)."""
    defaults: dict[str, Any] = {"approver": approver, "edits": prefilled_edits(edition)}
    fields = {name: (ReviewForm.model_fields[name].annotation,
                     pydantic.Field(default=value, description=ReviewForm.model_fields[name].description))
              for name, value in defaults.items()}
    model = pydantic.create_model("ReviewForm", __base__=ReviewForm, **fields)
    model._description = description
    return model


def review_timeout(options: RunOptions, settings: Settings) -> int:
    """Seconds a review may wait: ``review_timeout`` of the options or settings, else $DIGEST_REVIEW_TIMEOUT,
    else 3 days. (The lead may add the field to RunOptions/Settings; until then the variable configures it.)"""
    for source in (options, settings):
        value = getattr(source, "review_timeout", None)
        if value:
            return int(value)
    raw = os.environ.get("DIGEST_REVIEW_TIMEOUT", "")
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"$DIGEST_REVIEW_TIMEOUT '{raw[:20]}': a number of seconds, e.g. 259200 "
                              "for 3 days") from None
        if value < 1:
            raise ConfigError("$DIGEST_REVIEW_TIMEOUT must be at least 1 second")
        return value
    return DEFAULT_REVIEW_TIMEOUT


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


def review_edition(edition: Edition, options: RunOptions, settings: Settings) -> Edition:
    """Return the edition with every entry approved, edited or rejected: automatically, or by an editor."""
    if options.approve == "auto":
        return pipeline.auto_approve(edition)
    preflight_review(options)
    logger = get_run_logger()
    context = FlowRunContext.get()
    if context is None or context.flow_run is None:
        raise ConfigError("--approve ui needs a Prefect flow run (run the digest-edition flow)")
    run = context.flow_run
    suspend = run.deployment_id is not None
    timeout = review_timeout(options, settings)
    editors = make_readers(options, make_classifier(options, edition.repo)).editors
    approver = editors[0].name if len(editors) == 1 else ""
    refused: list[str] = []
    attempt = 1
    while True:
        key = f"review-{attempt}"
        live = key not in _fired_pause_keys(run.id)
        deadline = datetime.now(timezone.utc) + timedelta(seconds=timeout)
        url = run_url(run.id)
        hint = (f"From a terminal: `digest review {run.id}` shows this text, `digest approve {run.id} --all "
                f"[--reject N ...]` approves.")
        artifact_key = f"draft-{edition.key.lower()}"[:100]
        description = review_markdown(edition, deadline=deadline, run_hint=hint, artifact_hint=(
            f"Every entry in full (why, focus points, follow-ups): the **{artifact_key}** artifact, in this "
            "run's Artifacts tab."))
        if refused:
            description = ("### ⚠ Your last input was refused\n\n" + "\n".join(f"- {_md_line(r)}" for r in refused)
                           + "\n\nNothing was sent. Correct it and resume again.\n\n" + description)
        if live:
            if attempt == 1:
                _publish_draft(edition, run.id, artifact_key,
                               review_markdown(edition, deadline=deadline, run_hint=hint, budget=None))
                notify_editors(edition, editors, options, settings, run.id, url, deadline)
            progress.report("review", 0, 1)  # the CLI's bar shows the run is waiting, not stuck
            logger.info("%s: waiting for an editor (%s) until %s UTC; after that the run fails and nothing is "
                        "sent. %s", edition.name, "suspended: no worker is held" if suspend else "paused",
                        f"{deadline:%Y-%m-%d %H:%M}", url or f"flow run {run.id}")
        try:
            decision = _wait(review_form(edition, description, approver), key, timeout, suspend)
        except FlowPauseTimeout:
            message = (f"the review of {edition.name} was not resumed within {_human(timeout)}: the run fails "
                       "and nothing is sent")
            logger.error(message)
            raise ReviewExpired(message) from None
        except pydantic.ValidationError as exc:
            decision, refused = None, [f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()]
        if decision is not None:
            refused = check_decision(edition, decision)
            if not refused:
                break
        if f"review-{attempt + 1}" not in _fired_pause_keys(run.id):  # a live refusal, not a replay
            logger.warning("%s: review input refused, nothing was sent; the run waits again: %s",
                           edition.name, "; ".join(refused))
        attempt += 1
    progress.report("review", 1, 1)
    reviewed = apply_decision(edition, decision)  # checked above: applies in full or raises, never in part
    counts = decision_summary(reviewed)
    conn = open_store(settings.state)
    try:
        record_review(conn, edition, reviewed, str(run.id))
    finally:
        conn.close()
    logger.info("%s reviewed by %s (%s): %d approved, %d edited, %d rejected", edition.name, reviewed.approver,
                decision.decision, counts.get("approved", 0), counts.get("edited", 0), counts.get("rejected", 0))
    return reviewed


def _wait(form: type[ReviewForm], key: str, timeout: int, suspend: bool) -> ReviewDecision:
    if suspend:
        result = suspend_flow_run(wait_for_input=form, timeout=timeout, key=key)
    else:
        # pause_flow_run crashes on timeout=None and defaults to one hour: always pass ours.
        result = pause_flow_run(wait_for_input=form, timeout=timeout, key=key,
                                poll_interval=max(1, min(10, timeout // 60)))
    return ReviewDecision.model_validate(result.model_dump(include=set(ReviewDecision.model_fields)))


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


# --------------------------------------------------------------------------------------- notification

def notify_editors(edition: Edition, editors: list[Editor], options: RunOptions, settings: Settings,
                   flow_run_id: Any, url: str | None, deadline: datetime) -> list[str]:
    """Tell each editor (readers file ``editors:``) that a review is waiting, through the run's channels.

    Returns what each channel gave back; a failure is logged and never blocks the review.
    """
    logger = get_run_logger()
    if not editors:
        logger.info("no editors in the readers file: nobody is notified that %s waits for review", edition.name)
        return []
    try:
        channels = make_channels(options, settings, Path(options.out))
    except (ConfigError, DeliveryError) as exc:
        logger.warning("editors not notified: %s", exc)
        return []
    link = url or f"flow run {flow_run_id} (no PREFECT_UI_URL set)"
    text = (f"{edition.name}: {len(edition.entries)} draft entries wait for your review until "
            f"{deadline:%Y-%m-%d %H:%M} UTC. Open {link} and click Resume (in the new UI: under the ⋮ menu), "
            f"or run `digest approve {flow_run_id} --all`. Nothing is sent until an editor approves.")
    results: list[str] = []
    for i, editor in enumerate(editors, start=1):
        slug = re.sub(r"[^a-z0-9]+", "-", editor.name.lower()).strip("-")[:40]
        reader = Reader(id=f"editor-{slug or i}", name=editor.name, email=editor.email, slack=editor.slack)
        messages: list[Message] = []
        if editor.email and "email" in channels:
            messages.append(Message(reader=reader, variant="review", medium="email",
                                    email=_review_email(edition, reader, text, sender(settings))))
        if editor.slack and "slack" in channels:
            safe = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            messages.append(Message(reader=reader, variant="review", medium="slack",
                                    slack=[{"text": safe, "unfurl_links": False, "unfurl_media": False}]))
        for message in messages:
            try:
                results.append(channels[message.medium].push(message))
            except DeliveryError as exc:
                logger.warning("could not tell editor %s (%s) that a review waits: %s", editor.name,
                               message.medium, exc)
    for channel in {id(c): c for c in channels.values()}.values():
        channel.flush()
        channel.close()
    logger.info("told %d editor(s) that %s waits for review", len(editors), edition.name)
    return results


def _review_email(edition: Edition, reader: Reader, text: str, from_address: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = f"Review waiting: {edition.name}"
    msg["From"] = from_address
    msg["To"] = formataddr((re.sub(r"[\r\n]+", " ", reader.name), reader.email or ""))
    msg["Date"] = format_datetime(datetime.now(timezone.utc))
    msg["Message-ID"] = make_msgid(idstring=f"review.{edition.key}",
                                   domain=parseaddr(from_address)[1].rpartition("@")[2] or "localhost")
    msg.set_content(text + "\n")
    return msg


# --------------------------------------------------------------------------------------- after delivery

def delivery_artifact(edition: Edition, report: Any,
                      recipients: dict[tuple[str, str], tuple[str, str]] | None = None) -> list[dict[str, str]]:
    """A table artifact of what was sent to whom; call it after delivery with its report.

    ``report`` is a ``pipeline.DeliveryReport`` (sent/failed of Messages), the ledger's report
    (``prdigest.delivery.run.LedgerReport``: sent/failed/pending/already of Deliveries), or the deliver
    task's plain rows (``{"sent": [(reader id, medium, detail)], …}``, with ``recipients`` mapping
    (reader id, medium) to (recipient, variant)). Returns the rows.
    """
    rows: list[dict[str, str]] = []
    for result, attr in (("sent", "sent"), ("failed", "failed"), ("pending", "pending"), ("sent before", "already")):
        if isinstance(report, dict):
            for rid, medium, detail in report.get(attr, []):
                recipient, variant = (recipients or {}).get((rid, medium), ("", ""))
                rows.append({"reader": rid, "medium": medium, "recipient": recipient, "variant": variant,
                             "result": result, "detail": str(detail or "")[:160]})
            continue
        for item, detail in getattr(report, attr, None) or []:
            detail = getattr(detail, "provider_id", detail)
            rows.append({"reader": item.reader.id, "medium": item.medium, "recipient": item.recipient or "",
                         "variant": str(getattr(item, "variant", "") or ""), "result": result,
                         "detail": str(detail or "")[:160]})
    table = rows or [{"reader": "", "medium": "", "recipient": "", "variant": "", "result": "nothing sent",
                      "detail": ""}]
    sent = sum(1 for r in rows if r["result"] in ("sent", "sent before"))
    create_table_artifact(table, key=f"sent-{edition.key.lower()}"[:100],
                          description=f"{edition.name}: approved by {edition.approver or 'nobody'}; "
                                      f"{len(edition.published)} entries published, {sent} messages sent, "
                                      f"{len(rows) - sent} not (failed or pending)")
    return rows


def _human(seconds: int) -> str:
    if seconds % 86400 == 0:
        return f"{seconds // 86400} day(s)"
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hour(s)"
    return f"{seconds} s"


def _md_line(text: str) -> str:
    return md(text, 300)
