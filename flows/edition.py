"""The edition flow: collect → classify → draft → review → render → deliver, for one repo and window."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.artifacts import create_markdown_artifact
from pydantic import BaseModel

from prdigest import pipeline, progress
from prdigest.config import Settings, load_settings
from prdigest.delivery.ledger import Ledger
from prdigest.delivery.run import deliver_once, plan_deliveries
from prdigest.drafting.concurrent import draft_entries_concurrently
from prdigest.drafting.llm import cost_usd, usage_markdown
from prdigest.errors import ConfigError, SourceError
from prdigest.models import Edition, Entry, PullRequest
from prdigest.outputs import write_digest_json, write_variant
from prdigest.services import (
    RunOptions, make_channels, make_classifier, make_drafter, make_readers, make_source, sender,
)
from prdigest.variants import plan_variants
from prdigest.window import Window
from flows.secrets import with_secret_blocks
from flows.review import delivery_artifact, preflight_review, review_edition
from renderers.bundle import RenderedVariant, link_hosts_for, render_variants


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
    problems: list[dict[str, str | int]]
    files: list[str]


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


# persist_result: a run suspended for review re-executes from the top on resume; the default cache
# policy (inputs + task source + run id) then hands back these results instead of re-collecting.
@task(name="collect", retries=2, retry_delay_seconds=[2, 10], retry_condition_fn=_transient, persist_result=True)
def collect(options: RunOptions, settings: Settings) -> tuple[str, Window, list[PullRequest]]:
    """Every PR merged in the window, from the configured source."""
    source = make_source(options, settings)
    window = Window.from_flags(options.since, options.until)
    if window is None:
        window = source.default_window() if hasattr(source, "default_window") else Window.last_full_week()
    logger = get_run_logger()

    def log_fetches(step: str, done: int, total: int) -> None:  # the GitHub source reports per-PR fetches
        if step == "collect" and (done == total or done % max(1, total // 10) == 0):
            logger.info("collect: %d/%d PRs fetched", done, total)

    with progress.reporting(log_fetches):
        prs = source.collect(window)
    logger.info("collected %d merged PRs of %s in [%s, %s)", len(prs), source.repo,
                          window.since.isoformat(), window.until.isoformat())
    return source.repo, window, prs


@task(name="classify-and-draft", persist_result=True)
def classify_and_draft(options: RunOptions, settings: Settings, repo: str, prs: list[PullRequest]) -> list[Entry]:
    """Subsystems and a draft entry for every PR: the offline drafter in line, the LLM drafter fanned out
    over ``llm_concurrency`` threads under the ``llm_rpm`` limit, with its usage as an artifact."""
    classifier = make_classifier(options, repo)
    drafter = make_drafter(options, settings)  # --drafter openai: the preflight check runs here
    language = options.language or settings.language
    if options.drafter != "openai":
        return pipeline.draft_entries(prs, classifier.classify, drafter.draft, language, _log_progress("draft"))
    entries = draft_entries_concurrently(prs, classifier.classify, drafter.draft, language, _log_progress("draft"),
                                         concurrency=settings.llm_concurrency)
    create_markdown_artifact(usage_markdown(entries, settings), key="llm-drafting",
                             description="LLM drafts, cache hits, fallbacks, tokens and estimated cost")
    return entries


@task(name="render")
def render(edition: Edition, options: RunOptions, settings: Settings,
           out: Path) -> tuple[list[RenderedVariant], list[str], list[str]]:
    """Plan variants over the approved entries, render each once, write DIR/email and DIR/slack."""
    classifier = make_classifier(options, edition.repo)
    readers = make_readers(options, classifier)
    variants, idle = plan_variants(edition, readers.readers)
    rendered = render_variants(edition, variants, link_hosts_for(settings.github_url))
    files: list[str] = []
    for i, item in enumerate(rendered, start=1):
        files += [str(p) for p in write_variant(out, item.variant.key, html=item.email.html,
                                                  text=item.email.text, slack=item.slack)]
        progress.report("render", i, len(rendered))
    return rendered, [r.id for r in idle], files


@task(name="deliver")
def deliver(edition: Edition, rendered: list[RenderedVariant], options: RunOptions, settings: Settings,
            out: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Write every reader's messages to the outbox (a dry run, no ledger), or send them by SMTP and Slack
    through the delivery ledger: each reader's copy exactly once, across crashes and re-runs."""
    channels = make_channels(options, settings, out)
    deliveries = []
    for item in rendered:
        deliveries += plan_deliveries(
            edition=edition, variant=item.variant.key, readers=item.variant.readers,
            subject=item.email.subject, preheader=item.email.preheader, html=item.email.html,
            text=item.email.text, slack=item.slack, sender=sender(settings),
            unsubscribe_template=settings.unsubscribe_url, media=options.media,
        )
    if options.deliver == "outbox":  # a dry run: the exact messages as files, no ledger
        report = pipeline.deliver([d.compose() for d in deliveries], channels, _log_progress("deliver"))
        return {"sent": [(m.reader.id, m.medium, pid) for m, pid in report.sent],
                "failed": [(m.reader.id, m.medium, err) for m, err in report.failed], "pending": [], "already": []}
    ledger = Ledger.open(settings.state)
    try:
        report = deliver_once(edition.key, deliveries, channels, ledger, _log_progress("deliver"))
    finally:
        ledger.close()
    logger = get_run_logger()
    for d, error in report.pending:
        logger.warning("%s (%s) stays pending for the next run: %s", d.reader.id, d.medium, error)
    return report.as_rows()


# An explicit, bounded task runner (Prefect's default thread pool is unbounded); no timeout_seconds:
# a run waiting days for its review must not be failed by a flow-level timeout.
@flow(name="digest-edition", log_prints=False, task_runner=ThreadPoolTaskRunner(max_workers=8))
def digest_edition(options: RunOptions) -> EditionSummary:
    """One edition of the digest, from collection to delivery."""
    logger = get_run_logger()
    settings, blocks = with_secret_blocks(load_settings(**options.settings_overrides()))
    if blocks:
        logger.info("secrets from Prefect Secret blocks: %s", ", ".join(blocks))  # the names, never the values
    out = Path(options.out)
    preflight_review(options)  # --approve ui needs a Prefect server editors can reach: say so before collecting
    repo, window, prs = collect(options, settings)
    make_readers(options, make_classifier(options, repo))
    if options.deliver != "outbox":
        # Preflight: a missing host or token, a wrong password, an invalid From stop the run here,
        # before anything is drafted or sent (the deliver task connects again when it is time).
        for channel in make_channels(options, settings, out).values():
            channel.close()
    entries = classify_and_draft(options, settings, repo, prs)
    # The edition's drafter is the one asked for: with openai, some entries may be marked fallbacks.
    drafter_name = f"openai:{settings.model}" if options.drafter == "openai" else (
        entries[0].drafter if entries else options.drafter)
    edition = pipeline.new_edition(repo, window, options.language or settings.language, drafter_name, entries)
    edition = edition.model_copy(update={"cost_usd": cost_usd(edition.tokens_in, edition.tokens_out, settings)})
    edition = review_edition(edition, options, settings)

    rendered, idle, files = render(edition, options, settings, out)
    problems = [p for r in rendered for p in r.problems]
    edition = edition.model_copy(update={"problems": problems})
    files.insert(0, str(write_digest_json(out, edition)))
    for problem in problems:
        logger.warning("PR #%s could not be rendered for %s (%s): %s", problem["number"], problem["medium"],
                       problem.get("variant", ""), problem["error"])

    if not edition.published:
        logger.info("no approved entries: nothing is sent")
        report = {"sent": [], "failed": [], "pending": [], "already": []}
    else:
        report = deliver(edition, rendered, options, settings, out)
    per_verdict, per_subsystem = pipeline.counts(edition.published)
    summary = EditionSummary(
        edition=edition.name, out=str(out), entries=len(edition.entries), published=len(edition.published),
        per_verdict=dict(per_verdict), per_subsystem=dict(per_subsystem.most_common()),
        variants={r.variant.key: [x.id for x in r.variant.readers] for r in rendered}, idle_readers=idle,
        sent=report["sent"], failed=report["failed"], pending=report["pending"],
        already_sent=len(report["already"]),
        problems=problems, files=files,
    )
    create_markdown_artifact(_summary_markdown(summary), key="edition-summary",
                             description=f"{edition.name}: what was rendered and delivered")
    recipients = {(reader.id, medium): ((reader.email if medium == "email" else reader.slack) or "", r.variant.key)
                  for r in rendered for reader in r.variant.readers for medium in ("email", "slack")}
    delivery_artifact(edition, report, recipients)
    logger.info("%s: %d entries, %d variants, %d messages sent, %d failed", edition.name, summary.entries,
                len(summary.variants), len(summary.sent), len(summary.failed))
    return summary


def _summary_markdown(summary: EditionSummary) -> str:
    lines = [f"# {summary.edition}", "", f"{summary.published} of {summary.entries} entries published.", "",
             "| reader | medium | result |", "| --- | --- | --- |"]
    lines += [f"| {r} | {m} | sent |" for r, m, _ in summary.sent]
    lines += [f"| {r} | {m} | failed: {e[:80]} |" for r, m, e in summary.failed]
    lines += [f"| {r} | {m} | pending: {e[:80]} |" for r, m, e in summary.pending]
    lines += [f"| {r} | – | nothing selected |" for r in summary.idle_readers]
    return "\n".join(lines)
