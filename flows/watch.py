"""The watch flow (``digest-watch``): ``digest watch`` on a schedule, as one Prefect flow run per interval.

It builds the run's services once (a downstream that cannot be read stops it before anything is sent), runs the
core watch (:class:`prdigest.pipeline.watch.Watch`) and publishes what it did as an artifact. The exactly-once
bookkeeping is the core's (the watch's record and the ledger in the state store), so an overlapping or retried
run sends nothing twice. Alerts need no review (they carry facts, not drafted prose) unless ``approve="ui"``:
then the run pauses for an editor's approval of its alerts before any is recorded or sent (:mod:`flows.watch_review`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact
from prefect.states import Failed

from flows.edition import edition_options
from flows.media import default_media
from flows.review import preflight_review
from flows.secrets import with_secret_blocks
from flows.watch_review import await_watch_approval
from prdigest.deliver.alert_log import AlertItem
from prdigest.kernel.config import load_settings
from prdigest.pipeline.compose import build_services
from prdigest.pipeline.watch import Watch, WatchSummary
from prdigest.pipeline.watch_approval import Approve, WatchDecision, WatchPlan
from prdigest.review.markdown import md
from renderers.alert import alert_text

__all__ = ["digest_watch", "watch_markdown"]


def watch_markdown(summary: WatchSummary) -> str:
    """The run's artifact: the window, each downstream read, each reader alerted, each fix found."""
    window = (f"[{summary.since:%Y-%m-%d %H:%M}, {summary.until:%Y-%m-%d %H:%M}) UTC" if summary.since
              else "nothing new since the last watch")
    lines = [f"# {summary.repo}: {summary.prs} PRs merged in {window}", ""]
    if summary.held:
        lines += [f"**Held:** {md(summary.held)}", ""]
    elif summary.approver:
        lines += [f"Alerts approved by {md(summary.approver)}.", ""]
    lines += [f"- downstream `{n}` at `{c[:12]}`: {f} files, {u} uses" for n, (c, f, u) in summary.downstreams.items()]
    lines += [f"- alert for `{r}`: {', '.join(f'#{n}' for n in ns)}" for r, ns in summary.alerted.items()]
    lines += [f"- #{a.number} (`{a.reader}`): fixed in `{(a.fixed_sha or '')[:12]}` after {a.lead_days} days"
              for a in summary.fixes]
    report = summary.report
    lines += ["", f"{len(report.sent)} sent, {len(report.pending)} pending, {len(report.failed)} failed, "
                  f"{len(report.already)} already sent by an earlier run"]
    return "\n".join(lines)


@flow(name="digest-watch", log_prints=False)
def digest_watch(
    repo: str = "",
    since: str = "",
    until: str = "",
    source: str = "sample",
    approve: str = "auto",
    deliver: str = "outbox",
    readers: str = "",
    rules: str = "",
    language: str = "",
    out: str = "out",
    state: str = "",
    github_url: str = "",
    slack_base_url: str = "",
    git: str = "",
) -> Any:
    """Alert each reader with a downstream about the upstream PRs merged since the last watch that break their code.

    Args:
        repo: OWNER/NAME, e.g. vllm-project/vllm.
        since: Window start (included), UTC. Empty: where the last watch ended (the first: one day ago).
        until: Window end (excluded), UTC. Empty: now.
        source: github, jsonl:PATH, or sample.
        approve: auto (alerts carry facts and need no review), or ui (the run pauses until an editor sends or
            holds its alerts in the Prefect UI).
        deliver: outbox, or any of the installed media's transports (smtp,slack,feishu shipped).
        readers: The readers file on the worker (its `downstreams:` and the readers who name one).
        rules: The subsystem rules file. Empty: the shipped rules for the repo.
        language: zh-CN, en, ... Empty: DIGEST_LANGUAGE.
        out: The output folder on the worker (the outbox of each watch under out/watch/).
        state: Leave empty on a team's deployment: DIGEST_STATE from the worker's environment.
        github_url: GitHub API base URL. Empty: DIGEST_GITHUB_URL on the worker.
        slack_base_url: Slack Web API base URL. Empty: DIGEST_SLACK_BASE_URL on the worker.
        git: The upstream's clone (a folder, or a URL kept in the state folder). Empty: DIGEST_GIT on the worker.
    """
    options = edition_options(**locals())
    preflight_review(options)  # approve="ui" needs a Prefect server an editor can reach
    logger = get_run_logger()
    media = default_media(options.deliver)
    settings, blocks = with_secret_blocks(load_settings(**options.settings_overrides()), media)
    if blocks:
        logger.info("secrets from Prefect Secret blocks: %s", ", ".join(blocks))
    services = build_services(options, settings, media)
    ask_editor: Approve | None = None
    if options.approve == "ui":
        def ask_editor(plan: WatchPlan) -> WatchDecision:
            def message(repo: str, downstream: str, commit: str, since: datetime, items: Sequence[AlertItem]
                        ) -> tuple[str, str]:
                return alert_text(repo, downstream, commit, since, items, services.language)
            return await_watch_approval(plan, message, settings.review_timeout, services)
    try:
        summary = Watch(services, alert_text, approve=ask_editor).run()
    finally:
        services.close()
    create_markdown_artifact(watch_markdown(summary), key="watch-summary",
                             description=f"{summary.repo}: what the watch alerted")
    logger.info("%s: %d PRs, alerts for %d reader(s), %d messages sent", summary.repo, summary.prs,
                len(summary.alerted), len(summary.report.sent))
    if summary.pending:
        message = (f"{summary.repo}: {len(summary.report.pending)} alert message(s) stay pending: the next watch "
                   "sends them")
        logger.error(message)
        return Failed(message=message)
    return summary
