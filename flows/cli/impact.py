"""``digest impact``: what one week of upstream PRs does to a downstream checkout, without a full run (for a
team's CI). Prints the "Affects your code" report; exit 1 when something breaks, 2 when it could not run."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from flows.cli.options import state_option
from flows.cli.terminal import print_error
from prdigest.kernel.errors import DigestError

_err = Console(stderr=True, soft_wrap=True)


def impact(
    downstream: Path = typer.Option(..., "--downstream", help="The downstream checkout to read (never imported)."),
    source: str = typer.Option("sample", "--source", help="jsonl:PATH, github, or sample: the week's PRs."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME of the upstream (inferred from a JSONL "
                                       "file's URLs)."),
    since: Optional[str] = typer.Option(None, "--since", help="Window start, UTC date or ISO time (inclusive)."),
    until: Optional[str] = typer.Option(None, "--until", help="Window end, UTC date or ISO time (exclusive)."),
    git: Optional[str] = typer.Option(None, "--git", help="The upstream as a local clone or a URL (kept in the "
                                      "state folder): facts from its merge commits; without it, from the PRs' "
                                      "patches (partial)."),
    package: list[str] = typer.Option([], "--package", help="A downstream import package to read (repeat; "
                                      "default: its top-level packages)."),
    upstream: list[str] = typer.Option([], "--upstream", help="An upstream import package (repeat; default: "
                                       "from the repository's name)."),
    name: Optional[str] = typer.Option(None, "--name", help="The downstream's name in the report (default: the "
                                       "folder's name)."),
    language: Optional[str] = typer.Option(None, "--language", help="zh-CN or en; or $DIGEST_LANGUAGE."),
    state: Optional[str] = state_option("index and facts caches"),
    accept: Optional[str] = typer.Option(None, "--accept", help="Not a break: keep the window's impacts on this "
                                         "upstream SYMBOL (with --file) cleared in later runs and alerts until "
                                         "the symbol changes again."),
    file: Optional[str] = typer.Option(None, "--file", help="The downstream file (as the report shows it) of "
                                       "--accept."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON: each PR's impacts, and the "
                                 "watch's alerts with their fixes and lead times (days)."),
) -> None:
    """Print which of the week's upstream PRs break or touch the downstream, and where; exit 1 when one breaks."""
    from prdigest.pipeline.impact_report import impact_report

    try:
        report = impact_report(downstream=downstream, source=source, repo=repo, since=since, until=until, git=git,
                               packages=tuple(package), upstream=tuple(upstream), name=name, language=language,
                               state=state, accept=accept, accept_file=file)
    except DigestError as exc:
        print_error(exc, _err)
        raise typer.Exit(2) from None
    from renderers.impact import impact_block
    from renderers.text import impact_lines

    for problem in report.problems:
        _err.print(problem, markup=False, highlight=False)
    if accept is not None:
        _err.print(f"cleared {report.cleared} impact(s) of {accept} in {file}: left out of later runs and alerts "
                   "until the symbol changes again", markup=False, highlight=False)
    if as_json:
        from prdigest.pipeline.impact_report import report_json

        typer.echo(report_json(report))
        raise typer.Exit(1 if report.breaks else 0)
    lines = impact_lines(impact_block(report.edition, report.edition.entries, report.name), report.edition.language)
    typer.echo(f"{report.edition.name}: {len(report.edition.entries)} PRs, {report.files} downstream files "
               f"({report.uses} uses) at {report.commit[:12]}")
    typer.echo("\n".join(line.rstrip() for line in lines[1:]))
    if report.breaks:
        raise typer.Exit(1)
