"""``digest run`` and ``digest demo``: one edition, with the configuration checked before anything starts.

Flags, settings, the rules and readers files and the source are checked first, in this process, without
Prefect: a typo is one line naming ``file:line`` within a second. Then, when nothing needs Prefect (no
Prefect API configured and ``--approve auto``), the core loop runs directly (:func:`run_core`: no server,
Prefect not even imported); otherwise the ``digest-edition`` flow runs the same loop with each step as a
task, talking to the configured API.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from flows.cli.options import options_command
from flows.cli.prefect_env import api_url, quiet_prefect, unreachable
from flows.cli.summary import print_summary
from flows.cli.terminal import err_console, fail, safe
from prdigest.kernel import progress as progress_hook
from prdigest.kernel.errors import ConfigError, DigestError
from prdigest.kernel.location import DEFAULT_STATE
from prdigest.kernel.options import RunOptions

if TYPE_CHECKING:
    from prdigest.kernel.config import Settings
    from prdigest.pipeline.compose import Services
    from prdigest.pipeline.edition import EditionSummary

STEPS = {"collect": "Collecting PRs", "draft": "Classifying and drafting",
         "review": "Waiting for an editor (Prefect UI or digest approve)", "render": "Rendering variants",
         "deliver": "Delivering"}
UI_NEEDS_SERVER = ("--approve ui needs a Prefect server editors can reach: run `prefect server start` and set "
                   "PREFECT_API_URL=http://127.0.0.1:4200/api (see README, Deploying)")


def needs_prefect(options: RunOptions) -> bool:
    """Whether the run goes through the Prefect flow: a Prefect API is configured, or an editor approves in it."""
    return options.approve == "ui" or api_url() is not None


def build(options: RunOptions, settings: Settings) -> Services:
    """The run's services (source, rules, readers, media, channels): every file and flag checked, no Prefect.

    The source, rules and readers are checked and built first, before the renderers and the channels' clients
    are even imported (a typo is refused at once), and the run uses those same objects: built once."""
    from prdigest.pipeline.compose import configure

    configured = configure(options, settings)
    try:
        from flows.media import default_media
        from prdigest.pipeline.compose import build_services
        from renderers.site import build_site

        return build_services(options, settings, default_media(), site=build_site, configured=configured)
    except BaseException:
        configured.close()
        raise


def check_files(options: RunOptions, settings: Settings) -> None:
    """The checks that need no secret (the flow may still fill secrets from Prefect Secret blocks) and no
    renderer: the window, the source file, the rules and readers files. Fast, so a typo is refused at once.
    Only for a run through the Prefect flow, which builds its services in the flow run; the core path checks
    by building the run's services once (:func:`build`)."""
    from prdigest.kernel.window import Window
    from prdigest.pipeline.compose import checked_downstreams, make_classifier, make_readers, make_source

    Window.from_flags(options.since, options.until)
    if options.source == "github":
        if not options.repo:
            raise ConfigError("--source github needs --repo OWNER/NAME (e.g. --repo vllm-project/vllm)")
        repo = options.repo
    else:
        repo = make_source(options, settings).repo
    readers = make_readers(options, make_classifier(options, repo, settings))  # a kept proposal, never a new one
    checked_downstreams(options, readers, repo, settings, None)  # a typo'd packages: is refused before Prefect


def run_core(services: Services) -> EditionSummary:
    """The one loop, run directly: no Prefect server, no Prefect import."""
    from prdigest.pipeline.edition import EditionPipeline

    return EditionPipeline(services).run()


def run_flow(options: RunOptions) -> EditionSummary:
    """The same loop as the ``digest-edition`` flow, against the configured Prefect API (or for ``--approve ui``)."""
    from flows.edition import digest_edition, flow_parameters
    from prdigest.pipeline.edition import Undelivered

    try:
        return digest_edition(**flow_parameters(options))
    except Undelivered as exc:  # the flow run ended Failed with messages pending: its summary is still printed
        return exc.summary


def _settings(options: RunOptions) -> Settings:
    from prdigest.kernel.config import load_settings

    return load_settings(**options.settings_overrides())


#: Files in a state folder that look like state databases (a mistyped --state is told about them).
_STATE_FILES = ("*.sqlite", "*.sqlite3", "*.db")


def new_state_note(settings: Settings) -> str | None:
    """One line when the run would start a new SQLite state database (a mistyped ``--state`` would otherwise
    silently begin a fresh ledger: no earlier editions, nothing already sent), naming the other state files
    beside it; None for an existing file or PostgreSQL."""
    path = settings.state.path
    if settings.state.is_postgres or path is None or path.exists():
        return None
    folder = path.parent
    others = sorted({p.name for pattern in _STATE_FILES for p in folder.glob(pattern) if p != path}) \
        if folder.is_dir() else []
    note = (f"note: no state database at {path} yet: this run starts a new one (no earlier editions, ledger or "
            "readers' choices)")
    if others:
        shown = ", ".join(others[:5]) + (" …" if len(others) > 5 else "")
        note += f"; beside it: {shown} (pass --state with one of them if you meant it)"
    return note


def missing_state_folder(settings: Settings, out: Path) -> str | None:
    """Why the run must not create its SQLite state folder (one line), or None. Only the default folder
    (``.digest/``) is created, and only by a first run: one whose output folder holds no earlier edition's
    ``digest.json``. A mistyped or unmounted folder would otherwise start an empty ledger and send every reader
    the week again."""
    path = settings.state.path
    if settings.state.is_postgres or path is None or path.parent.is_dir():
        return None
    earlier = out / "digest.json"
    if path == DEFAULT_STATE and not earlier.exists():
        return None
    why = (f"{earlier} is from an earlier run, whose state is elsewhere" if earlier.exists()
           else "only the default .digest/ is created by a first run")
    return (f"the state folder {path.parent} does not exist ({why}): pass --state (or DIGEST_STATE) with the state "
            f"database of the earlier runs, or create the folder (mkdir -p {path.parent}) to start a new one; "
            "nothing was collected or sent")


def run_edition(options: RunOptions, verbose: bool, *, fresh_state: bool = False) -> EditionSummary:
    """Check the configuration, then run the edition with a progress bar; user-facing errors become one line.

    ``fresh_state``: the caller starts a new state database on purpose (the demo), so it is not pointed out."""
    started = time.perf_counter()
    prefect = needs_prefect(options)
    try:
        if options.approve == "ui" and api_url() is None:
            raise ConfigError(UI_NEEDS_SERVER)
        settings = _settings(options)
        problem = None if fresh_state else missing_state_folder(settings, Path(options.out))
        if problem:
            raise ConfigError(problem)
        note = None if fresh_state else new_state_note(settings)  # before anything opens the state store
        services = None
        if prefect:  # the flow builds the services itself (secrets may come from Prefect Secret blocks)
            check_files(options, settings)  # here, before Prefect is imported: a typo is refused at once
            from flows.media import default_media

            default_media().for_deliver(options.deliver)
            url = api_url()
            problem = unreachable(url) if url else None
            if problem:  # else Prefect's client fails deep inside the flow, with a 140-line traceback
                raise ConfigError(problem)
        else:
            services = build(options, settings)  # the configuration check and the run's services: built once
        from prdigest.pipeline.compose import delivery_notices

        for notice in delivery_notices(options, settings):  # once here, and again in the summary
            err_console.print(safe(notice, "yellow"))
        if note:
            err_console.print(safe(note, "yellow"))
        if prefect:
            quiet_prefect(verbose)
        elif verbose:  # the core's own log lines (there is no Prefect to show)
            logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    except DigestError as exc:
        raise fail(exc) from None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, transient=False) as bar:
        bar_tasks: dict[str, TaskID] = {}
        starting = bar.add_task("Starting Prefect and collecting PRs" if prefect else "Collecting PRs", total=None)

        def on_progress(step: str, done: int, total: int) -> None:
            if not bar.tasks[0].finished:
                bar.update(starting, total=1, completed=1)
            if step not in bar_tasks:
                bar_tasks[step] = bar.add_task(STEPS.get(step, step), total=total)
            bar.update(bar_tasks[step], completed=done, total=total)

        try:
            with progress_hook.reporting(on_progress):
                if services is None:
                    summary = run_flow(options)
                else:
                    try:
                        summary = run_core(services)
                    finally:
                        services.close()
        except DigestError as exc:
            bar.stop()
            raise fail(exc) from None
        bar.update(starting, total=1, completed=1)
    print_summary(summary, time.perf_counter() - started)
    if summary.pending:  # some readers did not get it, after every retry: not a success
        from prdigest.pipeline.edition import Undelivered

        err_console.print(safe(str(Undelivered(summary)), "red"))
        raise typer.Exit(1)
    return summary


def _run(options: RunOptions, verbose: bool) -> None:
    run_edition(options, verbose)


run = options_command(_run, required=("source",), doc="Run one edition: collect, classify, draft, review, render "
                      "and deliver.")
def _demo(options: RunOptions, verbose: bool) -> None:
    """The demo shows the whole pipeline every time: its own state database in the output folder, started afresh
    (in a lasting state the second run would find the week delivered and, rightly, do nothing)."""
    state = Path(options.out) / ".demo-state.sqlite"
    for stale in (state, state.with_name(state.name + "-journal"), state.with_name(state.name + "-wal")):
        stale.unlink(missing_ok=True)
    run_edition(options.model_copy(update={"state": str(state)}), verbose, fresh_state=True)


demo = options_command(_demo, only=("out", "language"), fixed={"source": "sample"}, doc=(
    "Run the whole pipeline on the shipped sample week of vLLM PRs: offline drafter, automatic approval, outbox "
    "delivery. Needs no network and no server."))
