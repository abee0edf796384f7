"""``digest eval``: score a drafter on labelled PRs, compare two scorings, or read the editors' corrections.

It calls the core (:mod:`prdigest.evaluation.evaluate`) directly, without Prefect: an evaluation is a
batch job a person watches in the terminal. The same calls run as the ``digest-evaluation`` flow
(``flows/evaluation.py``) for teams that evaluate from Prefect.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from flows.cli.options import flag, state_option
from flows.cli.terminal import print_error
from prdigest.kernel.errors import ConfigError, DigestError, first_problem

_err = Console(stderr=True, soft_wrap=True)


def _fail(message: str) -> typer.Exit:
    print_error(message, _err)
    return typer.Exit(2)


def eval_command(
    gold: Optional[Path] = typer.Option(None, "--gold", help="Labelled PRs: JSONL in the source format, each "
                                        "line with \"gold\": {\"subsystems\": [...], \"verdict\": ...}."),
    compare: Optional[tuple[Path, Path]] = typer.Option(
        None, "--compare", help="Compare two earlier evaluations A B (their --out folders or eval.json)."),
    from_reviews: bool = typer.Option(False, "--from-reviews", help="Score the recorded drafts against what "
                                      "editors decided in reviewed editions (from the state database)."),
    since: Optional[str] = typer.Option(None, "--since", help="With --from-reviews: editions approved from this "
                                        "UTC date or ISO time on."),
    drafter: str = typer.Option("offline", "--drafter", help="offline or openai."),
    llm_base_url: Optional[str] = typer.Option(None, "--llm-base-url", help="OpenAI-compatible base URL; or "
                                               "$DIGEST_LLM_BASE_URL. Key: $OPENAI_API_KEY."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM model name; or $DIGEST_MODEL."),
    language: Optional[str] = typer.Option(None, "--language", help="zh-CN (default), en, or a language of a "
                                           "catalog in $DIGEST_CATALOGS; or $DIGEST_LANGUAGE."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Subsystem rules YAML (default: shipped for the repo)."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME (inferred from the PR URLs)."),
    state: Optional[str] = state_option("draft cache, review record"),
    no_cache: bool = typer.Option(False, "--no-cache", help="Draft afresh instead of reusing cached LLM drafts."),
    no_calibration: bool = typer.Option(False, "--no-calibration", help="Score the drafter's verdicts alone (by "
                                        "default the repo's calibration is applied and both are reported)."),
    git: Optional[str] = typer.Option(None, "--git", help="The upstream's git clone (folder or URL), as digest run "
                                      "--git: code facts and hunks from it; or $DIGEST_GIT."),
    out: Path = typer.Option(Path("eval"), "--out", help="Output folder for the report files."),
) -> None:
    """Measure drafts: verdict agreement, deep-read precision/recall, subsystem P/R/F1, grounding failures,
    fallbacks, lengths, tokens, cost and latency; or compare two runs; or read the editors' corrections."""
    from prdigest.evaluation import evaluate as ev
    from prdigest.evaluation.results import EvalConfig
    from prdigest.kernel.config import load_settings

    modes = [gold is not None, bool(compare and all(compare)), from_reviews]
    if sum(modes) != 1:
        raise _fail("give exactly one of --gold FILE, --compare A B, --from-reviews")
    try:
        if compare and all(compare):
            outcome = ev.compare_runs(compare[0], compare[1], out)
            typer.echo("What differs: " + ("; ".join(outcome.figures["setup"]) or "nothing in the recorded "
                                                                                  "configuration"))
            _print_tests(outcome.figures["tests"])
        elif from_reviews:
            from prdigest.kernel.window import parse_instant

            settings = load_settings(state=state)
            outcome = ev.evaluate_reviews(settings, out, parse_instant(since, flag="--since") if since else None)
            typer.echo(f"{outcome.figures['entries']} reviewed entries in {outcome.figures['editions']} edition(s)")
        else:
            try:
                config = EvalConfig.model_validate({
                    "gold": str(gold), "drafter": drafter, "llm_base_url": llm_base_url, "model": model,
                    "language": language, "rules": str(rules) if rules else None, "repo": repo,
                    "state": str(state) if state else None, "no_cache": no_cache,
                    "git": git, "no_calibration": no_calibration})
            except ValidationError as exc:
                problem = first_problem(exc)
                raise ConfigError(f"{flag(problem.top)}: {problem.message}") from None
            settings = load_settings(**config.settings_overrides())
            with Progress(TextColumn("[bold]Drafting labelled PRs"), BarColumn(), MofNCompleteColumn(),
                          TimeElapsedColumn(), console=_err, transient=True) as bar:
                task = bar.add_task("draft", total=None)
                outcome = ev.evaluate(config, settings, out,
                                      lambda done, total: bar.update(task, completed=done, total=total))
            _print_figures(outcome.title, outcome.figures)
    except DigestError as exc:
        raise _fail(str(exc)) from None
    for path in outcome.paths:
        typer.echo(str(path))


def _print_figures(title: str, figures: dict[str, object]) -> None:
    """The report's headline figures as a terminal table."""
    from prdigest.evaluation.report import headline_rows

    table = Table(title=title)
    table.add_column("figure")
    table.add_column("value", justify="right")
    for name, value in headline_rows(figures):
        table.add_row(name, value)
    Console().print(table)


def _print_tests(tests: list[dict[str, object]]) -> None:
    table = Table(title="A vs B on the same PRs (McNemar exact)")
    for column in ("measure", "only A right", "only B right", "verdict"):
        table.add_column(column)
    for t in tests:
        table.add_row(str(t["measure"]), str(t["only_a"]), str(t["only_b"]), str(t["verdict"]))
    Console().print(table)

