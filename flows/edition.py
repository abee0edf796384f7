"""The edition flow: the core pipeline's steps as Prefect tasks, for one repo and window.

This module decides nothing about the digest: it builds the run's services once, maps each step of
:class:`prdigest.pipeline.edition.EditionPipeline` onto a task (retries, concurrency), waits for the review, and
publishes artifacts and logs. What runs next is decided by the core loop (:mod:`prdigest.pipeline.loop`) from the
edition's record in the state store: a run resumed from its review (on any worker) continues from the record
(:mod:`flows.resume`), not from Prefect's persisted results, which live in one worker's PREFECT_HOME.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

import pydantic
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.states import Failed
from prefect.task_runners import ThreadPoolTaskRunner

from flows.artifacts import delivery_artifact, summary_markdown
from flows.media import default_media
from flows.resume import check_resumable, current_run_id
from flows.review import preflight_review, review_edition
from flows.secrets import StateParameter, refuse_secret_state, state_to_environment, with_secret_blocks
from prdigest.deliver.run import DeliveryReport
from prdigest.kernel import progress
from prdigest.kernel.config import Settings, load_settings
from prdigest.kernel.errors import ConfigError, SourceError, first_problem
from prdigest.kernel.models import Edition, Entry, PullRequest
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import Collected, EditionPipeline, EditionSummary, Rendered, Undelivered
from prdigest.pipeline.loop import run_edition
from prdigest.state.record import EditionRecord
from renderers.site import build_site

__all__ = ["EditionSummary", "digest_edition", "edition_options", "flow_parameters"]


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


@task(name="collect", retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=_transient, cache_policy=NO_CACHE)
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


@task(name="classify-and-draft", cache_policy=NO_CACHE)
def classify_and_draft(pipeline: EditionPipeline, prs: list[PullRequest]) -> list[Entry]:
    """Subsystems and a draft entry for every PR, with the LLM's usage as an artifact."""
    entries = pipeline.draft(prs, _log_progress("draft"))
    usage = pipeline.services.drafter_kind.usage
    if usage is not None:
        create_markdown_artifact(usage(entries, pipeline.services.settings), key="llm-drafting",
                                 description="LLM drafts, cache hits, fallbacks, tokens and estimated cost")
    return entries


@task(name="connect", cache_policy=NO_CACHE)  # its inputs do not hash: Prefect logged an ERROR per run
def connect(pipeline: EditionPipeline, edition: Edition, prs: list[PullRequest]) -> Edition:
    """Relations to this and earlier editions, stories, earlier follow-ups and the lede (before review)."""
    edition = pipeline.connect(edition, prs)
    get_run_logger().info("connect: %d relations, %d stories, %d earlier follow-ups",
                          sum(len(e.relations) for e in edition.entries), len(edition.stories),
                          len(edition.earlier_followups))
    return edition


@task(name="render", cache_policy=NO_CACHE)
def render(pipeline: EditionPipeline, edition: Edition) -> Rendered:
    """Plan variants over the approved entries, render each once per medium, write its files."""
    return pipeline.render(edition, lambda done, total: progress.report("render", done, total))


@task(name="publish", cache_policy=NO_CACHE)  # writes the record: never a cached result
def publish(pipeline: EditionPipeline, record: EditionRecord) -> tuple[EditionRecord, list[Path]]:
    """The edition published (its record, the history index), and the archive to DIR/site/."""
    record, files = pipeline.publish(record)
    if files:
        get_run_logger().info("archive: %d files in %s", len(files), pipeline.services.out / "site")
    return record, files


@task(name="deliver", cache_policy=NO_CACHE)  # never cached; and hashing its inputs only logged an error
def deliver_messages(pipeline: EditionPipeline, edition: Edition, rendered: Rendered) -> DeliveryReport:
    """Every reader's messages: to the outbox, or exactly once through the ledger."""
    report = pipeline.deliver(edition, rendered, _log_progress("deliver"))
    logger = get_run_logger()
    for result in report.pending:
        logger.warning("%s (%s) stays pending after every retry: %s", result.reader, result.medium, result.detail)
    return report


class FlowSteps:
    """The loop's steps (:class:`prdigest.pipeline.loop.Steps`) as this flow's tasks; the review waits for an editor."""

    def __init__(self, pipeline: EditionPipeline, options: RunOptions, settings: Settings) -> None:
        self.pipeline, self.options, self.settings = pipeline, options, settings

    def collect(self) -> Collected:
        return collect(self.pipeline)

    def draft(self, prs: list[PullRequest]) -> list[Entry]:
        return classify_and_draft(self.pipeline, prs)

    def connect(self, edition: Edition, prs: list[PullRequest]) -> Edition:
        return connect(self.pipeline, edition, prs)

    def review(self, record: EditionRecord) -> EditionRecord:
        return review_edition(record, self.pipeline, self.options, self.settings)

    def render(self, edition: Edition) -> Rendered:
        rendered = render(self.pipeline, edition)
        for problem in rendered.problems:
            get_run_logger().warning("PR #%s could not be rendered for %s (%s): %s", problem.number,
                                     problem.medium, problem.variant, problem.error)
        return rendered

    def publish(self, record: EditionRecord) -> tuple[EditionRecord, list[Path]]:
        return publish(self.pipeline, record)

    def deliver(self, edition: Edition, rendered: Rendered) -> DeliveryReport:
        if not edition.published:
            get_run_logger().info("no approved entries: nothing is sent")
        report = deliver_messages(self.pipeline, edition, rendered)
        delivery_artifact(edition, report)
        return report


def edition_options(**parameters: Any) -> RunOptions:
    """RunOptions from the flow's flat parameters (an empty string or None = unset); an invalid one becomes one
    line naming the parameter. A ``state`` URL with a password is refused (flows.secrets.refuse_secret_state)."""
    refuse_secret_state(parameters.get("state"))
    git = str(parameters.get("git") or "")
    if re.match(r"^https?://[^/]*@", git) or re.match(r"^[a-z][a-z0-9+.-]*://[^/@]*:[^/@]*@", git):
        raise ConfigError("parameter 'git': the URL carries credentials, and Prefect shows parameters in clear; "
                          "set DIGEST_GIT in the worker's environment instead")
    try:
        return RunOptions(**{k: v for k, v in parameters.items() if v is not None and v != ""})
    except pydantic.ValidationError as exc:
        problem = first_problem(exc, empty="parameters")
        raise ConfigError(f"parameter '{problem.field}' (flag --{problem.field.replace('_', '-')}): "
                          f"{problem.message}") from None


def flow_parameters(options: RunOptions) -> dict[str, Any]:
    """The flow's keyword arguments for ``options`` (``digest_edition(**flow_parameters(options))``); a PostgreSQL
    ``--state`` goes to this process's DIGEST_STATE instead of a parameter (Prefect stores parameters)."""
    return state_to_environment(options.model_dump(exclude_none=True))


# An explicit, bounded task runner (Prefect's default thread pool is unbounded); no timeout_seconds:
# a run waiting days for its review must not be failed by a flow-level timeout. The parameters are flat and named
# like `digest run`'s flags, so `prefect deployment run … -p since=… -p until=…` overrides just those and the
# UI's custom-run form shows them one by one ("" rather than None for unset text: the UI renders an optional
# type as a type switcher). No secret and no state URL here: parameters are shown in the UI; DIGEST_STATE and
# the tokens come from the worker's environment.
@flow(name="digest-edition", log_prints=False,
      task_runner=ThreadPoolTaskRunner(max_workers=8))  # type: ignore[arg-type]  # prefect's generic runner type
def digest_edition(
    repo: str = "",
    since: str = "",
    until: str = "",
    source: str = "sample",
    drafter: str = "offline",  # any name in the pr_digest.drafters group (RunOptions checks it)
    approve: Literal["auto", "ui"] = "auto",
    deliver: str = "outbox",
    readers: str = "",
    rules: str = "",
    language: str = "",
    out: str = "out",
    state: StateParameter = "",
    github_url: str = "",
    llm_base_url: str = "",
    model: str = "",
    slack_base_url: str = "",
    site_url: str = "",
    git: str = "",
    no_discussion: bool = False,
    input_budget: str = "",
    site_impact: bool = False,
    no_calibration: bool = False,
    resend_edition: bool = False,
) -> EditionSummary:
    """One edition of the digest, from collection to delivery.

    Args:
        repo: OWNER/NAME, e.g. vllm-project/vllm.
        since: Start of the window (included): a date or an ISO time, UTC. Empty: the last full Monday-to-Monday
            week for GitHub, every PR of a JSONL file.
        until: End of the window (excluded): a date or an ISO time, UTC.
        source: github, jsonl:PATH, or sample (the shipped week).
        drafter: offline, or openai (DIGEST_LLM_BASE_URL, DIGEST_MODEL, OPENAI_API_KEY from the worker).
        approve: auto, or ui: an editor approves in the Prefect UI or with `digest approve`.
        deliver: outbox (files, a dry run), or any installed medium's transport (smtp,slack,feishu shipped).
        readers: The readers file (YAML) on the worker, relative to the code's folder. Empty: the example.
        rules: The subsystem rules file (YAML). Empty: the shipped rules for the repo.
        language: zh-CN, en, or any language with a catalog on the worker (DIGEST_CATALOGS). Empty: DIGEST_LANGUAGE.
        out: The output folder on the worker.
        state: Leave empty on a team's deployment: DIGEST_STATE from the worker's environment (a postgresql://
            URL holds a password, and parameters are shown in clear).
        github_url: GitHub API base URL. Empty: DIGEST_GITHUB_URL on the worker.
        llm_base_url: OpenAI-compatible base URL. Empty: DIGEST_LLM_BASE_URL on the worker.
        model: The LLM model. Empty: DIGEST_MODEL on the worker.
        slack_base_url: Slack Web API base URL. Empty: DIGEST_SLACK_BASE_URL on the worker.
        site_url: The archive's public URL (links in email, Slack and feeds). Empty: DIGEST_SITE_URL.
        git: The upstream's git clone for code facts: a folder on the worker, or a URL kept as a bare partial clone
            in the state folder. Empty: DIGEST_GIT on the worker (a URL with a token goes there, never here).
        no_discussion: Collect no reviews, conversation comments or linked issues (a cheaper run).
        input_budget: Tokens of PR data packed into one prompt. Empty: DIGEST_LLM_INPUT_BUDGET (12000).
        site_impact: Show "Affects your code" (the downstreams' file paths) on the archive pages. Off:
            DIGEST_SITE_IMPACT on the worker (those paths are the teams' own, not public).
        no_calibration: Keep the drafter's verdicts (the repo's calibration from digest calibrate is not applied).
        resend_edition: Run an edition the ledger shows as delivered again (review included). Off: such a run
            stops before collecting and keeps digest.json as delivered.
    """
    options = edition_options(**locals())  # first: locals() holds exactly the parameters here
    logger = get_run_logger()
    media = default_media(options.deliver)
    settings, blocks = with_secret_blocks(load_settings(**options.settings_overrides()), media)
    if blocks:
        logger.info("secrets from Prefect Secret blocks: %s", ", ".join(blocks))  # the names, never the values
    preflight_review(options)  # --approve ui needs a Prefect server editors can reach: say so before collecting
    services = build_services(options, settings, media, site=build_site)
    for notice in services.notices:  # e.g. subsystems proposed for a repo without a rules file
        logger.info(notice)
    try:
        pipeline = EditionPipeline(services)
        run_id = current_run_id() if options.approve == "ui" else None
        if run_id is not None:
            check_resumable(services.store(), str(run_id), options.repo or options.source)
        summary = run_edition(pipeline, FlowSteps(pipeline, options, settings),
                              run_id=str(run_id) if run_id is not None else None)
    finally:
        services.close()
    if summary.skipped:
        logger.warning(summary.skipped)
        return summary
    if summary.held:
        logger.warning(summary.held)
    create_markdown_artifact(summary_markdown(summary), key="edition-summary",
                             description=f"{summary.edition}: what was rendered and delivered")
    logger.info("%s: %d entries, %d variants, %d messages sent, %d failed", summary.edition, summary.entries,
                len(summary.variants), len(summary.sent), len(summary.failed))
    if summary.pending:  # the run gave up on some readers: not Completed (the CLI prints the summary it carries)
        undelivered = Undelivered(summary)
        logger.error(str(undelivered))
        return Failed(message=str(undelivered), data=undelivered)  # type: ignore[return-value]  # a Prefect state ends the flow run as Failed
    return summary
