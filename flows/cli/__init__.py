"""The ``digest`` command line: the outermost shell, above the flows. Every command is one module of this
package and one registration line below; a module imports Prefect, the flows and the renderers lazily,
so ``digest --help`` and a refused flag stay fast."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

import typer

from flows.cli import (
    calibrate,
    edition,
    evaluate,
    impact,
    readers,
    resend,
    review,
    rules,
    screenshot,
    site,
    status,
    watch,
    web,
)
from flows.cli.numbers import NumbersCommand

app = typer.Typer(
    name="digest",
    help="pr-digest: a weekly, triaged digest of the pull requests merged into an upstream repository.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # every command and group: -h is --help
)


def _version(asked: bool) -> None:
    if asked:
        try:
            shown = version("pr-digest")
        except PackageNotFoundError:  # pragma: no cover - run from a tree that was never installed
            shown = "unknown (not installed)"
        typer.echo(f"digest (pr-digest) {shown}")
        raise typer.Exit()


@app.callback()
def _root(show_version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                            help="Print the version and exit.")) -> None:
    """pr-digest: a weekly, triaged digest of the pull requests merged into an upstream repository."""

app.command("demo")(edition.demo)
app.command("run")(edition.run)
app.command("review")(review.review)
app.command("approve", cls=NumbersCommand)(review.approve)
app.command("screenshot")(screenshot.screenshot)
app.command("status")(status.status)
app.command("resend")(resend.resend)
app.command("site")(site.site)
app.command("serve")(site.serve)
app.command("eval")(evaluate.eval_command)
app.command("calibrate")(calibrate.calibrate)
app.command("readers")(readers.readers)
app.command("impact")(impact.impact)
app.command("watch")(watch.watch)
app.command("web")(web.web)
app.add_typer(rules.rules_app, name="rules")


def main() -> None:  # pragma: no cover - console entry point
    """``digest``'s entry point."""
    app()
