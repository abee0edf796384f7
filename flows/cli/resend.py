"""``digest resend EDITION --uncertain | --pending | --failed``: send, on purpose, what may have reached its
readers, what a run gave up on, or what a provider refused before a fix."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.text import Text

from flows.cli.options import state_option
from flows.cli.terminal import print_error
from prdigest.kernel.errors import DigestError

console = Console(stderr=True, soft_wrap=True)


def resend(
    edition: str = typer.Argument(..., help="The edition as `digest run` printed it (e.g. 'vllm-project/vllm "
                                  "2026-W47'), or its key from digest.json / digest status."),
    uncertain: bool = typer.Option(False, "--uncertain", help="Resend the rows marked uncertain (they may have "
                                   "reached the reader: the provider did not answer after the message went out)."),
    pending: bool = typer.Option(False, "--pending", help="Send the rows still pending (a run's retries gave up: "
                                 "greylisting, a provider down); `digest run` and `digest status` point at them."),
    failed: bool = typer.Option(False, "--failed", help="Send the rows a provider refused, once the cause is fixed "
                                "(a Feishu secret, keyword or IP list; a Slack bot invited to its channel)."),
    reader: list[str] = typer.Option([], "--reader", help="Only this reader's rows; repeat for several."),
    readers: Optional[Path] = typer.Option(None, "--readers", help="readers.yaml (default: the shipped example)."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Subsystem rules YAML (default: shipped for the repo)."),
    state: Optional[str] = state_option(),
    slack_base_url: Optional[str] = typer.Option(None, "--slack-base-url", help="Slack Web API base URL; or "
                                                 "$DIGEST_SLACK_BASE_URL."),
) -> None:
    """Send an edition's uncertain, pending or failed deliveries, each once: the e-mail keeps its Message-ID, so
    a client that already has it drops the copy. Channels are checked first; nothing else is sent."""
    from flows.media import default_media
    from prdigest.deliver.resend import resend_rows
    from prdigest.deliver.run import Outcome
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import RunOptions, command

    statuses = [s for s, asked in (("uncertain", uncertain), ("pending", pending), ("failed", failed)) if asked]
    if not statuses:
        console.print("error: say what to resend: --uncertain, --pending or --failed (the rows `digest status` "
                      "shows so)", markup=False, highlight=False)
        raise typer.Exit(2)
    options = RunOptions(readers=str(readers) if readers else None, rules=str(rules) if rules else None)

    try:
        settings = load_settings(state=state, slack_base_url=slack_base_url)
        with command(settings) as core:  # one store for the record, the ledger and the readers' choices
            done = resend_rows(edition, statuses, state=core.store, settings=settings, media=default_media(),
                               readers_of=lambda repo: core.readers(options, repo), only=reader)
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    shown = Console(soft_wrap=True)
    if not done.report.results and not done.skipped:
        shown.print(Text(f"{done.edition}: nothing {' or '.join(statuses)} to resend"), highlight=False)
        return
    for result in done.report.results:
        verb = "resent" if result.outcome is Outcome.SENT else result.outcome.value
        shown.print(Text(f"{result.reader} ({result.medium}) to {result.recipient}: {verb} {result.detail}".rstrip()),
                    highlight=False)
    for rid, medium, why in done.skipped:
        shown.print(Text(f"{rid} ({medium}): {why}"), highlight=False)
    if any(r.outcome is not Outcome.SENT for r in done.report.results) or done.skipped:
        raise typer.Exit(1)

