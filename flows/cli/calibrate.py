"""``digest calibrate``: fit the repo's verdict calibration from labelled PRs or from the editors' decisions, and keep
it in the state store (prdigest/evaluation/calibrate.py); every later run of the repo applies the latest."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from pydantic import ValidationError

from flows.cli.options import flag, state_option
from flows.cli.terminal import fail
from prdigest.kernel.errors import ConfigError, DigestError, first_problem


def calibrate(
    gold: Optional[list[Path]] = typer.Option(None, "--gold", help="Labelled PRs: JSONL in the source format, each "
                                              "line with \"gold\": {\"verdict\": ...} (as digest eval --gold reads); "
                                              "repeat it for several files (a week, a labeller each), or give a "
                                              "folder of them."),
    from_reviews: bool = typer.Option(False, "--from-reviews", help="Learn from the editors' recorded decisions: "
                                      "each kept entry's final verdict is a label."),
    repo: Optional[str] = typer.Option(None, "--repo", help="OWNER/NAME (default: from the PR URLs, or the only "
                                       "repo reviewed)."),
    since: Optional[str] = typer.Option(None, "--since", help="With --from-reviews: editions approved from this "
                                        "UTC date or ISO time on."),
    drafter: str = typer.Option("offline", "--drafter", help="With --gold: the drafter whose verdicts are "
                                "calibrated (the one the runs use)."),
    llm_base_url: Optional[str] = typer.Option(None, "--llm-base-url", help="OpenAI-compatible base URL; or "
                                               "$DIGEST_LLM_BASE_URL."),
    model: Optional[str] = typer.Option(None, "--model", help="LLM model name; or $DIGEST_MODEL."),
    language: Optional[str] = typer.Option(None, "--language", help="zh-CN (default) or en; or $DIGEST_LANGUAGE."),
    rules: Optional[Path] = typer.Option(None, "--rules", help="Subsystem rules YAML (default: shipped for the repo)."),
    git: Optional[str] = typer.Option(None, "--git", help="The upstream's git clone, as digest run --git."),
    state: Optional[str] = state_option("the calibration, draft cache, review record"),
) -> None:
    """Fit the repo's verdict calibration (a small model kept in the state store) so that later runs' verdicts
    follow the team's labels; digest run --no-calibration and digest eval show the difference."""
    from prdigest.evaluation import calibrate as cal
    from prdigest.evaluation.results import EvalConfig
    from prdigest.kernel.config import load_settings

    try:
        paths = gold or []
        if bool(paths) == from_reviews:
            raise ConfigError("give exactly one of --gold FILE, --from-reviews")
        if from_reviews:
            from prdigest.kernel.window import parse_instant

            settings = load_settings(state=state)
            fitted = cal.from_reviews(settings, repo, parse_instant(since, flag="--since") if since else None)
        else:
            try:
                config = EvalConfig.model_validate({
                    "gold": str(paths[0]), "drafter": drafter, "llm_base_url": llm_base_url, "model": model,
                    "language": language, "rules": str(rules) if rules else None, "repo": repo,
                    "state": state, "git": git})
            except ValidationError as exc:
                problem = first_problem(exc)
                raise ConfigError(f"{flag(problem.top)}: {problem.message}") from None
            fitted = cal.from_gold(config, load_settings(**config.settings_overrides()), paths)
    except DigestError as exc:
        raise fail(exc) from None
    c = fitted.calibration
    typer.echo(f"{fitted.repo}: calibration fitted on {c.labels} labels ({c.source}; {fitted.disagreements} differ "
               f"from the drafter), kept in the state store at {c.created_at}")
    from prdigest.draft.calibration import DEEP_READ_AT, KEEP

    if c.strength == KEEP:
        typer.echo(f"cross-validated verdict agreement: nothing beat the drafter's own {c.cv_drafter:.1%}, so the "
                   "calibration keeps its verdicts; label more PRs, or PRs where your editors disagree with it")
    elif c.cv_calibrated is not None and c.cv_drafter is not None:
        typer.echo(f"cross-validated verdict agreement: {c.cv_calibrated:.1%} calibrated, {c.cv_drafter:.1%} the "
                   f"drafter's own (regularisation {c.strength:g})")
        if c.deep_read_at is not None:
            # the fit chose it by cross-validated deep-read F1 (prdigest.draft.calibration_threshold): say so, since
            # it decides how many entries a reader is told to read closely
            how = "the default" if c.deep_read_at == DEEP_READ_AT else "chosen by cross-validation"
            typer.echo(f"deep-read once its probability reaches {c.deep_read_at:.3g} ({how})")
