"""``digest rules init`` (propose a rules file from a repository) and ``digest rules check`` (how a rules
file classifies a week). Both call the core (:mod:`prdigest.classify.proposal`) directly, without Prefect."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError
from rich.console import Console, JustifyMethod
from rich.table import Table

from flows.cli.options import state_option
from flows.cli.terminal import print_error, safe, safe_table
from prdigest.kernel.errors import ConfigError, DigestError, first_problem

_err = Console(stderr=True, soft_wrap=True)
rules_app = typer.Typer(name="rules", help="Propose and check subsystem rules files.", no_args_is_help=True)


_REPO = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")  # as a run's --repo


def _repo(value: str) -> str:
    if not _REPO.match(value):
        raise ConfigError(f"--repo '{value}': use OWNER/NAME (e.g. --repo vllm-project/vllm)")
    return value


@rules_app.command("init")
def init_command(
    repo: str = typer.Option(..., "--repo", help="OWNER/NAME of the repository."),
    out: Path = typer.Option(..., "--out", help="The rules file to write (YAML)."),
    checkout: Optional[Path] = typer.Option(None, "--checkout", help="A local checkout to read (then nothing is "
                                            "fetched); default: the GitHub API ($GITHUB_TOKEN, --github-url)."),
    prs: Optional[Path] = typer.Option(None, "--prs", help="A JSONL file of the repo's PRs (source format): "
                                       "their labels and changed folders count too."),
    github_url: Optional[str] = typer.Option(None, "--github-url", help="GitHub API base URL; or "
                                             "$DIGEST_GITHUB_URL."),
    force: bool = typer.Option(False, "--force", help="Replace OUT if it exists."),
) -> None:
    """Propose a rules file from the repository's labeler, mergify and CODEOWNERS files, its folders and
    its recent PRs' labels; the file says where each subsystem came from and what to check."""
    from prdigest.classify.proposal.init import init_rules
    from prdigest.collect.sources import read_jsonl
    from prdigest.kernel.config import load_settings

    try:
        _repo(repo)
        if out.exists() and not force:
            raise ConfigError(f"--out {out} exists: pass --force to replace it")
        settings = None if checkout else load_settings(github_url=github_url)
        proposal = init_rules(repo, out, checkout=checkout, settings=settings,
                              prs=read_jsonl(prs) if prs else None)
    except DigestError as exc:
        print_error(exc, _err)
        raise typer.Exit(2) from None
    table = Table(title=f"{len(proposal.subsystems)} subsystems proposed for {repo}")
    for column in ("subsystem", "shown as", "from"):
        table.add_column(column)
    for p in proposal.subsystems:
        table.add_row(p.name, p.shown, p.area.origin)
    console = Console()
    console.print(safe_table(table))
    for note in proposal.notes:
        console.print(safe(f"note: {note}", "yellow"))
    console.print(safe(f"Wrote {out}; check it on a week with: digest rules check {out} --source ..."))


@rules_app.command("check")
def check_command(
    rules: Path = typer.Argument(..., help="The rules file to check."),
    source: str = typer.Option(..., "--source", help="jsonl:PATH, github, sample, or stored (the PRs the state "
                                                     "store holds for --repo from earlier collections)."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME (inferred from a JSONL file's URLs)."),
    since: Optional[str] = typer.Option(None, "--since", help="Window start, UTC date or ISO time (inclusive)."),
    until: Optional[str] = typer.Option(None, "--until", help="Window end, UTC date or ISO time (exclusive)."),
    state: Optional[str] = state_option(),
    github_url: Optional[str] = typer.Option(None, "--github-url", help="GitHub API base URL; or "
                                             "$DIGEST_GITHUB_URL."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Classify a week with a rules file: PRs per subsystem, the PRs in the catch-all, the largest share."""
    from prdigest.classify.proposal.check import check_rules
    from prdigest.classify.rulesfile import load_rules

    try:
        loaded = load_rules(rules)
        prs = _week(source, repo, since, until, state, github_url)
        report = check_rules(loaded, prs)
    except DigestError as exc:
        print_error(exc, _err)
        raise typer.Exit(2) from None
    console = Console()
    if as_json:
        typer.echo(json.dumps(report.as_json(), ensure_ascii=False, indent=2))
        return
    table = Table(title=f"{rules}: {report.prs} PRs")
    columns: tuple[tuple[str, JustifyMethod], ...] = (("subsystem", "left"), ("PRs", "right"), ("share", "right"),
                                                      ("primary", "right"))
    for column, justify in columns:
        table.add_column(column, justify=justify)
    for name, count in report.per_subsystem.items():
        table.add_row(name, str(count), f"{count / max(report.prs, 1):.0%}", str(report.primary.get(name, 0)))
    console.print(safe_table(table))
    name, share = report.largest
    console.print(safe(f"largest subsystem: {name or '-'} ({share:.0%} of the PRs); catch-all "
                       f"'{report.fallback}': {len(report.catch_all)} PRs ({report.catch_all_share:.0%})"))
    for number, title in report.catch_all:
        console.print(safe(f"  #{number} {title}", "dim"))
    for problem in report.problems():
        console.print(safe(problem, "yellow"))


def _week(source: str, repo: str | None, since: str | None, until: str | None, state: str | None,
          github_url: str | None):
    """The PRs of the week the flags name."""
    from prdigest.kernel.config import load_settings
    from prdigest.kernel.window import Window
    from prdigest.pipeline.compose import RunOptions, command, make_source

    settings = load_settings(state=state, github_url=github_url)
    window = Window.from_flags(since, until)
    if source == "stored":
        from prdigest.collect.github.cache import PullCache

        if not repo:
            raise ConfigError("--source stored needs --repo OWNER/NAME")
        with command(settings) as core:
            prs = PullCache(core.store(), _repo(repo)).stored()
        if not prs:
            raise ConfigError(f"the state store {settings.state} holds no PRs of {repo} collected from GitHub "
                              "(only digest run --source github keeps them; a JSONL run keeps none): run one first, "
                              "or check a file with --source jsonl:FILE, or the API with --source github")
        window = window or Window.last_full_week()
        return sorted((p for p in prs if p.merged_at in window), key=lambda p: (p.merged_at, p.number))
    try:
        options = RunOptions(source=source, repo=repo) if repo else RunOptions(source=source)
    except ValidationError as exc:
        problem = first_problem(exc)
        raise ConfigError(f"--{problem.top}: {problem.message}") from None
    with command(settings) as core:
        src = make_source(options, settings, core.store)
        return src.collect(window if window is not None else src.default_window())

