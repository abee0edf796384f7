"""``digest watch``: alert each reader with a downstream, the day an upstream PR that breaks their code merges.

Same flags as ``digest run`` for what it shares (source, repo, readers, rules, deliver, git, state, out, ...);
``--since``/``--until`` override the window, which is otherwise what merged since the last watch. Exit 0 when
everything was sent (or nothing breaks), 1 when an alert stays pending, 2 when it could not run.
"""

from __future__ import annotations

import logging
import time

import typer

from flows.cli.options import options_command
from flows.cli.terminal import err_console, fail, safe
from prdigest.kernel.errors import ConfigError, DigestError
from prdigest.kernel.options import RunOptions

#: The flags of ``digest run`` that a watch uses (nothing is drafted: no drafter, model or review budget).
FLAGS = ("source", "repo", "since", "until", "approve", "deliver", "readers", "rules", "out", "language", "state",
         "github_url", "slack_base_url", "git")


def watch_once(options: RunOptions):  # a WatchSummary, imported lazily
    """Build the run's services (every file, flag and downstream checked first) and run one watch; with
    ``--approve ui``, as the ``digest-watch`` flow, which pauses for an editor's approval of the alerts."""
    from flows.cli.edition import _settings, build
    from prdigest.pipeline.watch import Watch
    from renderers.alert import alert_text

    if options.approve == "ui":
        return watch_flow(options)
    services = build(options, _settings(options))
    try:
        return Watch(services, alert_text).run()
    finally:
        services.close()


def watch_flow(options: RunOptions):  # a WatchSummary
    """``digest watch --approve ui``: the watch as a flow run against the configured Prefect API (an editor
    approves its alerts there, or holds them); alerts still pending at its end are an :class:`Undelivered`."""
    from prefect.exceptions import FailedRun

    from flows.cli.edition import UI_NEEDS_SERVER, _settings, check_files
    from flows.cli.prefect_env import api_url, unreachable
    from flows.edition import flow_parameters
    from flows.watch import digest_watch

    url = api_url()
    if url is None:
        raise ConfigError(UI_NEEDS_SERVER)
    if problem := unreachable(url):
        raise ConfigError(problem)
    check_files(options, _settings(options))  # before the flow starts: a typo is one line
    parameters = {k: v for k, v in flow_parameters(options).items() if k in FLAGS}
    try:
        return digest_watch(**parameters)
    except FailedRun as exc:  # the flow run ended Failed with alerts pending (flows.watch says so)
        raise Undelivered(str(exc)) from None


class Undelivered(DigestError):
    """A watch flow run ended with alerts pending: the next watch sends them (exit 1)."""


def print_watch(summary, seconds: float) -> None:  # a WatchSummary
    """What the watch did, one line per fact (untrusted text through :func:`safe`)."""
    from rich.console import Console

    out = Console()
    window = (f"[{summary.since:%Y-%m-%d %H:%M}, {summary.until:%Y-%m-%d %H:%M}) UTC" if summary.since
              else "nothing new since the last watch")
    out.print(safe(f"{summary.repo}: {summary.prs} PRs merged in {window}"))
    for name, (commit, files, uses) in summary.downstreams.items():
        out.print(safe(f"downstream {name} at {commit[:12]}: {files} files, {uses} uses of the upstream"))
    for reader, numbers in summary.alerted.items():
        out.print(safe(f"alert for {reader}: {', '.join(f'#{n}' for n in numbers)} break their code", "red"))
    if not summary.alerted and summary.since:
        out.print(safe("no newly merged PR breaks a reader's downstream"))
    if summary.cleared:
        out.print(safe(f"{summary.cleared} breaking line(s) left out: cleared as not a break"))
    for fixed in summary.fixes:
        out.print(safe(f"#{fixed.number} ({fixed.reader}): fixed in your {fixed.fixed_sha[:12]} "
                       f"({fixed.lead_days} days after the alert)", "green"))
    report = summary.report
    for r in report.sent:
        out.print(safe(f"sent to {r.reader} ({r.medium})"))
    for r in report.pending:
        out.print(safe(f"{r.reader} ({r.medium}) stays pending: {r.detail}", "yellow"))
    for r in report.failed:
        out.print(safe(f"{r.reader} ({r.medium}) failed: {r.detail}", "red"))
    if report.already:
        out.print(safe(f"{len(report.already)} alert message(s) were sent by an earlier run: not sent again"))
    if summary.approver and not summary.held:
        out.print(safe(f"alerts approved by {summary.approver}"))
    if summary.held:
        out.print(safe(summary.held, "yellow"))
    if summary.resumed:
        out.print(safe(f"{summary.resumed} earlier watch run(s) left unfinished were delivered"))
    if summary.key and report.results:
        out.print(safe(f"digest status '{summary.key}' lists each message of this watch"))
    out.print(f"Done in {seconds:.1f} s.")


def _watch(options: RunOptions, verbose: bool) -> None:
    started = time.perf_counter()
    if verbose:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        summary = watch_once(options)
    except Undelivered as exc:
        err_console.print(safe(str(exc), "red"))  # "… stay pending: the next watch sends them"
        raise typer.Exit(1) from None
    except DigestError as exc:
        raise fail(exc) from None
    print_watch(summary, time.perf_counter() - started)
    if summary.pending:
        err_console.print(safe("some alerts stay pending: the next watch sends them", "red"))
        raise typer.Exit(1)


watch = options_command(_watch, only=FLAGS, required=("source",), doc=(
    "Alert, the day it merges, each reader with a downstream about every upstream PR that breaks their code: "
    "what merged since the last watch, one short alert per reader, exactly once per PR and reader."))
