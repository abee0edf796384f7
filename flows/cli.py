"""The ``digest`` command line: the outermost shell, above the flows (it imports them lazily)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from flows.cli_numbers import NumbersCommand, pr_numbers
from flows.terminal import print_error, safe, safe_table
from prdigest import progress as progress_hook
from prdigest.errors import DigestError
from prdigest.text import for_terminal

app = typer.Typer(
    name="digest",
    help="pr-digest: a weekly, triaged digest of the pull requests merged into an upstream repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(stderr=True, soft_wrap=True)  # errors stay one line, however narrow the terminal
STEPS = {"collect": "Collecting PRs", "draft": "Classifying and drafting",
         "review": "Waiting for an editor (Prefect UI or digest approve)", "render": "Rendering variants",
         "deliver": "Delivering"}


def _quiet_prefect(verbose: bool) -> None:
    """Prefect's console logs (tracebacks included) would drown the progress bar and our one-line
    errors; without --verbose they are silenced on the console only: the run's logs still reach its API."""
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect waits 20 s for its temporary API server; a busy laptop or CI runner needs longer (seen: 55 s).
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    import logging

    import prefect  # noqa: F401  (sets up Prefect's logging handlers)

    level = logging.INFO if verbose else logging.CRITICAL
    for handler in logging.getLogger().handlers:
        if type(handler).__name__ == "PrefectConsoleHandler":
            handler.setLevel(level)


def _run(options, verbose: bool):
    """Run the edition flow with a progress bar; user-facing errors become one line and exit 2."""
    _quiet_prefect(verbose)
    started = time.perf_counter()
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=console, transient=False) as bar:
        bar_tasks: dict[str, int] = {}
        starting = bar.add_task("Starting Prefect and collecting PRs", total=None)

        def on_progress(step: str, done: int, total: int) -> None:
            if starting is not None and not bar.tasks[0].finished:
                bar.update(starting, total=1, completed=1)
            if step not in bar_tasks:
                bar_tasks[step] = bar.add_task(STEPS.get(step, step), total=total)
            bar.update(bar_tasks[step], completed=done, total=total)

        try:
            from flows.edition import digest_edition, flow_parameters

            with progress_hook.reporting(on_progress):
                summary = digest_edition(**flow_parameters(options))
        except DigestError as exc:
            _quiet_prefect(verbose)
            bar.stop()
            print_error(exc, console)
            raise typer.Exit(2) from None
        bar.update(starting, total=1, completed=1)
    _quiet_prefect(verbose)  # the ephemeral API logs its shutdown at exit through a fresh handler
    _print_summary(summary, time.perf_counter() - started)
    return summary


def _print_summary(summary, seconds: float) -> None:
    out = Console()
    if summary.skipped:  # already delivered: nothing was collected, reviewed or sent
        out.print(safe(summary.skipped, "yellow"))
        return
    table = Table(title=f"{summary.edition}: {summary.published}/{summary.entries} entries published")
    table.add_column("verdict")
    table.add_column("entries", justify="right")
    for verdict in ("deep-read", "skim", "skip"):
        table.add_row(verdict, str(summary.per_verdict.get(verdict, 0)))
    out.print(safe_table(table))
    subs = Table(title="Entries per subsystem")
    subs.add_column("subsystem")
    subs.add_column("entries", justify="right")
    for name, n in summary.per_subsystem.items():
        subs.add_row(name, str(n))
    out.print(safe_table(subs))
    readers = Table(title="Readers served")
    readers.add_column("variant")
    readers.add_column("readers")
    readers.add_column("messages", justify="right")
    for key, ids in summary.variants.items():
        n = sum(1 for r, _, _ in summary.sent if r in ids)
        readers.add_row(key, ", ".join(ids), str(n))
    for rid in summary.idle_readers:
        readers.add_row(Text("(nothing selected)", style="dim"), rid, "0")
    out.print(safe_table(readers))
    for problem in summary.problems:
        out.print(safe(problem, "yellow"))
    for rid, medium, err in summary.failed:
        out.print(safe(f"{rid} ({medium}) failed: {err}", "red"))
    if not summary.published:
        out.print("[bold]No approved entries: nothing was sent[/bold] (readers are spared an empty digest).")
    for rid, medium, err in summary.pending:
        out.print(safe(f"{rid} ({medium}) stays pending for the next run: {err}", "yellow"))
    for rid, medium, err in summary.uncertain:  # may have been delivered: never resent by itself
        out.print(safe(f"{rid} ({medium}) is uncertain (digest status; digest resend --uncertain): {err}", "magenta"))
    if summary.already_sent:
        out.print(f"{summary.already_sent} message(s) were sent by an earlier run of this edition: not sent again.")
    root = Path(summary.out)
    out.print(f"\nDone in {seconds:.1f} s. Open:")
    out.print(f"  {root / 'digest.json'}")
    for key in summary.variants:
        out.print(f"  {root / 'email' / (key + '.html')}")
    if (root / "outbox").exists():
        out.print(f"  {root / 'outbox'}/")
    if (root / "site" / "index.html").exists():
        out.print(f"  {root / 'site' / 'index.html'}  (the archive; `digest serve {root}` for its search)")


@app.command()
def demo(
    out: Path = typer.Option(Path("out"), "--out", help="Output folder (created)."),
    language: Optional[str] = typer.Option(None, "--language", help="zh-CN (default) or en."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's logs too."),
) -> None:
    """Run the whole pipeline on the shipped sample week of vLLM PRs: offline drafter, automatic
    approval, outbox delivery. Needs no network and no server."""
    _run(_options(source="sample", out=str(out), language=language), verbose)


@app.command()
def run(
    source: str = typer.Option(..., "--source", help="jsonl:PATH (a file in the source format) or github."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME (inferred from a JSONL file's URLs)."),
    since: Optional[str] = typer.Option(None, "--since", help="Window start, UTC date or ISO time (inclusive)."),
    until: Optional[str] = typer.Option(None, "--until", help="Window end, UTC date or ISO time (exclusive)."),
    drafter: str = typer.Option("offline", "--drafter", help="offline or openai."),
    approve: str = typer.Option("auto", "--approve", help="auto, or ui (an editor approves in Prefect)."),
    deliver: str = typer.Option("outbox", "--deliver", help="outbox, or any of smtp,slack,feishu (comma-separated)."),
    readers: Optional[Path] = typer.Option(None, "--readers", help="readers.yaml (default: the shipped example)."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Subsystem rules YAML (default: shipped for the repo)."),
    out: Path = typer.Option(Path("out"), "--out", help="Output folder: digest.json, email/, slack/, outbox/."),
    language: Optional[str] = typer.Option(None, "--language", help="zh-CN (default) or en; or $DIGEST_LANGUAGE."),
    state: Optional[str] = typer.Option(None, "--state", help="State database; or $DIGEST_STATE."),
    github_url: Optional[str] = typer.Option(None, "--github-url", help="GitHub API base URL (Enterprise: "
                                             "https://HOST/api/v3); or $DIGEST_GITHUB_URL. Token: $GITHUB_TOKEN."),
    llm_base_url: Optional[str] = typer.Option(None, "--llm-base-url", help="OpenAI-compatible base URL "
                                               "(e.g. a vLLM server's /v1); or $DIGEST_LLM_BASE_URL."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM model name; or $DIGEST_MODEL."),
    slack_base_url: Optional[str] = typer.Option(None, "--slack-base-url", help="Slack Web API base URL; "
                                                 "or $DIGEST_SLACK_BASE_URL. Token: $SLACK_BOT_TOKEN."),
    site_url: Optional[str] = typer.Option(None, "--site-url", help="The archive's public URL: 'view in "
                                           "browser' and permalinks in every medium; or $DIGEST_SITE_URL."),
    resend_edition: bool = typer.Option(False, "--resend-edition", help="Run an edition the ledger shows as "
                                        "delivered again, review included (without it such a run stops before "
                                        "collecting and keeps digest.json)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Show Prefect's logs too."),
) -> None:
    """Run one edition: collect, classify, draft, review, render and deliver."""
    _run(_options(source=source, repo=repo, since=since, until=until, drafter=drafter, approve=approve,
                  deliver=deliver, readers=str(readers) if readers else None,
                  rules=str(rules) if rules else None, out=str(out), language=language,
                  state=str(state) if state else None, github_url=github_url, llm_base_url=llm_base_url,
                  model=model, slack_base_url=slack_base_url, site_url=site_url,
                  resend_edition=resend_edition), verbose)


# --- review from a terminal (issue 5; code in flows/approve.py) ------------------------------------------
@app.command()
def review(
    run_id: str = typer.Argument(..., help="The flow run waiting for review (from the editors' notification)."),
) -> None:
    """Print the draft digest a run waits to have approved, as the Prefect UI shows it above the form.
    Talks to $PREFECT_API_URL (and $PREFECT_API_AUTH_STRING)."""
    _quiet_prefect(False)
    try:
        from flows.approve import review_text

        text = review_text(run_id)
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    typer.echo(for_terminal(text))


@app.command(cls=NumbersCommand)
def approve(
    run_id: str = typer.Argument(..., help="The flow run waiting for review."),
    all_entries: bool = typer.Option(False, "--all", help="Approve every unflagged entry (except those given to "
                                     "--reject); flagged (⚠) ones only with --approve N or --include-flagged."),
    reject: list[str] = typer.Option([], "--reject", help="PR numbers to leave out: --reject 1 2 3, --reject 1,2,3 "
                                     "or --reject 1 --reject 2."),
    approve_numbers: list[str] = typer.Option([], "--approve", help="PR numbers to send (without --all: only "
                                              "these; with --all: flagged ones too), written like --reject."),
    include_flagged: bool = typer.Option(False, "--include-flagged", help="Also send every flagged (⚠) entry as "
                                         "drafted."),
    approver: Optional[str] = typer.Option(None, "--approver", help="Your name, recorded in digest.json "
                                           "(default: your login name)."),
    note: str = typer.Option("", "--note", help="A note for the record."),
) -> None:
    """Approve a run waiting for review and resume it (Prefect has no resume command). Checked like the
    UI form: unknown PR numbers or nothing left to send are refused and the run keeps waiting."""
    import getpass

    _quiet_prefect(False)
    try:
        from flows.approve import approve_run

        message = approve_run(run_id, all=all_entries, reject=pr_numbers(reject, "--reject"),
                              approve=pr_numbers(approve_numbers, "--approve"),
                              approver=approver or getpass.getuser(), note=note, include_flagged=include_flagged)
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    console.print(message, markup=False, highlight=False)


@app.command()
def screenshot(
    out: Path = typer.Argument(Path("out"), help="An output folder of `digest demo` or `digest run`."),
    variant: Optional[str] = typer.Option(None, "--variant", help="Only this variant (default: every one)."),
) -> None:
    """Screenshot each rendered email in headless Chromium at 600 px and 375 px (phone), light and dark,
    into OUT/screenshots/, to check what readers will see."""
    from prdigest.screenshot import screenshot as shoot

    pages = sorted((out / "email").glob(f"{variant or '*'}.html"))
    if not pages:
        print_error(f"no rendered email under {out / 'email'}: run `digest demo` first", console)
        raise typer.Exit(2)
    try:
        for page in pages:
            for width in (600, 375):
                for dark in (False, True):
                    png = out / "screenshots" / f"{page.stem}-{width}{'-dark' if dark else ''}.png"
                    Console().print(str(shoot(page, png, width=width, dark=dark)))
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None


def _options(**values):
    """RunOptions from flags; invalid flags become one clear line."""
    from pydantic import ValidationError

    from prdigest.services import RunOptions

    try:
        return RunOptions(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as exc:
        err = exc.errors()[0]
        flag = "--" + str(err["loc"][0]).replace("_", "-") if err["loc"] else "options"
        print_error(f"{flag}: {err['msg']}", console)
        raise typer.Exit(2) from None


def main() -> None:  # pragma: no cover - console entry point
    app()


@app.command()
def status(
    edition: str = typer.Argument(..., help="The edition's key or name, e.g. vllm-project-vllm-2026-W47."),
    state: Optional[str] = typer.Option(None, "--state", help="State database; or $DIGEST_STATE (default: "
                                        "the configured one, then every .digest/*.sqlite)."),
) -> None:
    """Print the delivery ledger of one edition: what was sent, what failed and why, what is pending."""
    from flows.status_lookup import find_status
    from prdigest.config import load_settings

    try:
        settings = load_settings(state=state)
        table, used = find_status(edition, settings.state, explicit=bool(state or os.environ.get("DIGEST_STATE")))
        if str(used) != str(settings.state):
            console.print(safe(f"(found in state database {used})"), highlight=False)
        Console().print(safe_table(table))
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None



# --- resending uncertain deliveries (issue 10; the command is in flows/delivery_cli.py) ---------------------
from flows.delivery_cli import register as _register_delivery  # noqa: E402

_register_delivery(app)

# --- the archive (issue 13; commands in flows/site_cli.py) -------------------------------------------------
from flows.site_cli import register as _register_site  # noqa: E402  (after app's own commands)

_register_site(app)

# --- measuring the drafts (issue 15; the command is in flows/eval_cli.py) -------------------------------------
from flows.eval_cli import register as _register_eval  # noqa: E402

_register_eval(app)

# --- readers' own choices (issue 23; commands in flows/readers_cli.py and flows/web/) ----------------------
from flows.readers_cli import register as _register_readers  # noqa: E402

_register_readers(app)
from flows.web_cli import register as _register_web  # noqa: E402

_register_web(app)

# --- proposing and checking rules files (issue 20; commands in flows/rules_cli.py) ---------------------------
from flows.rules_cli import register as _register_rules  # noqa: E402  (digest rules init/check; issue 20)

_register_rules(app)

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
