"""``digest review RUN`` and ``digest approve RUN``: review from a terminal (Prefect has no resume command).

Both talk to the Prefect API the environment names (PREFECT_API_URL, PREFECT_API_AUTH_STRING); the Prefect
calls are in :mod:`flows.cli.approval`. Without a configured API they say so at once, before importing
Prefect: a temporary server could never hold the run an editor is asked about; a configured API that does not
answer is said in one line too.
"""

from __future__ import annotations

import getpass
from typing import Optional
from uuid import UUID

import typer

from flows.cli.numbers import pr_numbers, verdict_changes
from flows.cli.prefect_env import api_url, quiet_prefect, unreachable
from flows.cli.terminal import err_console, fail
from prdigest.kernel.errors import DigestError, ReviewError
from prdigest.kernel.text import for_terminal

NO_API = ("no Prefect API configured: set PREFECT_API_URL to the server the run waits on (e.g. "
          "PREFECT_API_URL=http://127.0.0.1:4200/api), with PREFECT_API_AUTH_STRING if it asks for one")
DOWN = ("start it (`prefect server start`) or point PREFECT_API_URL at the server the run waits on; the run keeps "
        "waiting meanwhile")


def _connect(run_id: str) -> None:
    """Refuse at once a malformed run id, or a missing Prefect API; then make Prefect quiet."""
    try:
        UUID(run_id)
    except ValueError:
        raise ReviewError(f"'{run_id}' is not a flow run id (copy it from the run's page or the "
                          "notification)") from None
    url = api_url()
    if url is None:
        raise ReviewError(NO_API)
    problem = unreachable(url, advice=DOWN)
    if problem:  # else Prefect's client retries, then a 99-line traceback
        raise ReviewError(problem)
    quiet_prefect(False)


def review(
    run_id: str = typer.Argument(..., help="The flow run waiting for review (from the editors' notification)."),
) -> None:
    """Print the draft digest a run waits to have approved, as the Prefect UI shows it above the form.
    Talks to $PREFECT_API_URL (and $PREFECT_API_AUTH_STRING)."""
    try:
        _connect(run_id)
        from flows.cli.approval import review_text

        text = review_text(run_id)
    except DigestError as exc:
        raise fail(exc) from None
    typer.echo(for_terminal(text))


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
    nobreak: list[str] = typer.Option([], "--nobreak", help="PR numbers whose breaking mark to clear (they leave "
                                      "the Action required block), written like --reject."),
    set_verdicts: list[str] = typer.Option([], "--set", help="Change an entry's verdict, as the form's edits do: "
                                           "--set 41873=skim (repeat, or separate with commas); each change is a "
                                           "label digest calibrate --from-reviews learns from."),
) -> None:
    """Approve a run waiting for review and resume it (Prefect has no resume command). Checked like the
    UI form: unknown PR numbers or nothing left to send are refused and the run keeps waiting."""
    try:
        rejected, approved = pr_numbers(reject, "--reject"), pr_numbers(approve_numbers, "--approve")
        cleared = pr_numbers(nobreak, "--nobreak")
        verdicts = verdict_changes(set_verdicts)
        _connect(run_id)
        from flows.cli.approval import approve_run

        message = approve_run(run_id, all=all_entries, reject=rejected, approve=approved,
                              approver=approver or getpass.getuser(), note=note, include_flagged=include_flagged,
                              nobreak=cleared, verdicts=verdicts)
    except DigestError as exc:
        raise fail(exc) from None
    err_console.print(message, markup=False, highlight=False)
