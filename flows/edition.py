"""The edition flow: the core pipeline's steps as Prefect tasks, for one repo and window.

This module decides nothing about the digest: it builds the run's services once, maps each step of
:class:`prdigest.pipeline.EditionPipeline` onto a task (retries, result persistence for the review's
suspend/resume, concurrency), waits for the review, and publishes artifacts and logs.
"""

from __future__ import annotations

import hashlib
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.context import TaskRunContext
from prefect.task_runners import ThreadPoolTaskRunner

from prdigest import progress
from prdigest.config import load_settings
from prdigest.delivery.run import DeliveryReport
from prdigest.drafting.llm import usage_markdown
from prdigest.errors import ConfigError, SourceError
from prdigest.models import Edition, Entry, PullRequest
from prdigest.pipeline import Collected, EditionPipeline, EditionSummary, Rendered
from prdigest.services import RunOptions, build_services
from flows.artifacts import delivery_artifact, summary_markdown
from flows.media import default_media
from flows.review import preflight_review, review_edition
from flows.secrets import with_secret_blocks

__all__ = ["EditionSummary", "digest_edition"]


def _log_progress(step: str):
    logger = get_run_logger()

    def hook(done: int, total: int) -> None:
        progress.report(step, done, total)
        if done == total or done % max(1, total // 10) == 0:
            logger.info("%s: %d/%d", step, done, total)

    return hook


def _transient(task, task_run, state) -> bool:
    """Retry collection on anything but our own user-facing errors (bad flags, malformed files)."""
    try:
        state.result()
    except (ConfigError, SourceError):
        return False
    except Exception:
        return True
    return False


def _run_step_key(context: TaskRunContext, parameters: dict[str, Any]) -> str:
    """A step's cache key: this flow run, this step, the run's options and settings. A run suspended for
    review re-executes from the top on resume: the persisted collect and draft results come back
    instead of collecting and drafting again."""
    pipeline: EditionPipeline = parameters["pipeline"]
    services = pipeline.services
    blob = "|".join([str(context.task_run.flow_run_id), context.task.name, services.options.model_dump_json(),
                     services.settings.model_dump_json()])
    return hashlib.sha256(blob.encode()).hexdigest()


@task(name="collect", retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=_transient,
      persist_result=True, cache_key_fn=_run_step_key)
def collect(pipeline: EditionPipeline) -> Collected:
    """Every PR merged in the window, from the configured source."""
    logger = get_run_logger()

    def log_fetches(step: str, done: int, total: int) -> None:  # the GitHub source reports per-PR fetches
        if step == "collect" and (done == total or done % max(1, total // 10) == 0):
            logger.info("collect: %d/%d PRs fetched", done, total)

    with progress.reporting(log_fetches):
        collected = pipeline.collect()
    logger.info("collected %d merged PRs of %s in [%s, %s)", len(collected.prs), collected.repo,
                collected.window.since.isoformat(), collected.window.until.isoformat())
    return collected


@task(name="classify-and-draft", persist_result=True, cache_key_fn=_run_step_key)
def classify_and_draft(pipeline: EditionPipeline, prs: list[PullRequest]) -> list[Entry]:
    """Subsystems and a draft entry for every PR, with the LLM's usage as an artifact."""
    entries = pipeline.draft(prs, _log_progress("draft"))
    if pipeline.services.options.drafter == "openai":
        create_markdown_artifact(usage_markdown(entries, pipeline.services.settings), key="llm-drafting",
                                 description="LLM drafts, cache hits, fallbacks, tokens and estimated cost")
    return entries


@task(name="render")
def render(pipeline: EditionPipeline, edition: Edition) -> Rendered:
    """Plan variants over the approved entries, render each once per medium, write its files."""
    return pipeline.render(edition, lambda done, total: progress.report("render", done, total))


@task(name="deliver")
def deliver(pipeline: EditionPipeline, edition: Edition, rendered: Rendered) -> DeliveryReport:
    """Every reader's messages: to the outbox, or exactly once through the ledger."""
    report = pipeline.deliver(edition, rendered, _log_progress("deliver"))
    logger = get_run_logger()
    for result in report.pending:
        logger.warning("%s (%s) stays pending for the next run: %s", result.reader, result.medium, result.detail)
    return report


# An explicit, bounded task runner (Prefect's default thread pool is unbounded); no timeout_seconds:
# a run waiting days for its review must not be failed by a flow-level timeout.
@flow(name="digest-edition", log_prints=False, task_runner=ThreadPoolTaskRunner(max_workers=8))
def digest_edition(options: RunOptions) -> EditionSummary:
    """One edition of the digest, from collection to delivery."""
    logger = get_run_logger()
    settings, blocks = with_secret_blocks(load_settings(**options.settings_overrides()))
    if blocks:
        logger.info("secrets from Prefect Secret blocks: %s", ", ".join(blocks))  # the names, never the values
    preflight_review(options)  # --approve ui needs a Prefect server editors can reach: say so before collecting
    services = build_services(options, settings, default_media())
    try:
        pipeline = EditionPipeline(services)
        # Preflight: a missing host or token, a wrong password, an invalid From stop the run here,
        # before anything is drafted or sent.
        services.check_channels()
        collected = collect(pipeline)
        entries = classify_and_draft(pipeline, collected.prs)
        edition = review_edition(pipeline.new_edition(collected, entries), options, settings)
        rendered = render(pipeline, edition)
        edition, digest_json = pipeline.record(edition, rendered)
        for problem in rendered.problems:
            logger.warning("PR #%s could not be rendered for %s (%s): %s", problem.number, problem.medium,
                           problem.variant, problem.error)
        if not edition.published:
            logger.info("no approved entries: nothing is sent")
        report = deliver(pipeline, edition, rendered)
        summary = pipeline.summarize(edition, rendered, report, [digest_json, *rendered.files])
    finally:
        services.close()
    create_markdown_artifact(summary_markdown(summary), key="edition-summary",
                             description=f"{edition.name}: what was rendered and delivered")
    delivery_artifact(edition, report)
    logger.info("%s: %d entries, %d variants, %d messages sent, %d failed", edition.name, summary.entries,
                len(summary.variants), len(summary.sent), len(summary.failed))
    return summary
