"""The evaluation flow: ``digest eval`` as a Prefect run, for a team to start when a prompt or model changes.

Thin: one task per mode calls :mod:`prdigest.evaluation.evaluate`; the report is published as a markdown
artifact (key ``evaluation``), so the figures and the worst disagreements are in the run's Artifacts tab.
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.context import FlowRunContext

from flows.secrets import StateParameter, refuse_secret_state, with_secret_blocks
from prdigest.evaluation import evaluate as ev
from prdigest.evaluation.results import EvalConfig
from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Language
from prdigest.kernel.window import parse_instant

#: Artifacts keep at most this much markdown; the files in ``out`` hold the whole report.
ARTIFACT_LIMIT = 60_000


@task(name="evaluate")
def evaluate_task(config: EvalConfig, out: str) -> ev.Outcome:
    """Draft and score the labelled PRs with one configuration (secrets from the environment or blocks)."""
    settings, _ = with_secret_blocks(load_settings(**config.settings_overrides()))
    return ev.evaluate(config, settings, Path(out))


@task(name="compare")
def compare_task(a: str, b: str, out: str) -> ev.Outcome:
    """Compare two earlier evaluations."""
    return ev.compare_runs(Path(a), Path(b), Path(out))


@task(name="editor-corrections")
def reviews_task(state: str | None, since: str | None, out: str) -> ev.Outcome:
    """Score the recorded drafts against the editors' decisions."""
    settings = load_settings(state=state)
    return ev.evaluate_reviews(settings, Path(out), parse_instant(since, flag="since") if since else None)


def check_out(out: str, *, deployed: bool) -> None:
    """Refuse a relative ``out`` in a deployment's run: it would land in the run's temporary clone of the
    repository (prefect.yaml's git_clone step), which is deleted when the run ends, report and all."""
    if deployed and not Path(out).is_absolute():
        raise ConfigError(f"parameter 'out' ({out}) is relative: in a deployment it lands in the run's temporary "
                          "clone, deleted when the run ends; give an absolute folder "
                          "(e.g. /var/lib/pr-digest/out/eval)")


@flow(name="digest-evaluation", log_prints=False)
def digest_evaluation(
    gold: str | None = None,
    drafter: str = "offline",  # any name in the pr_digest.drafters group (EvalConfig checks it)
    llm_base_url: str | None = None,
    model: str | None = None,
    language: Language | None = None,
    rules: str | None = None,
    repo: str | None = None,
    state: StateParameter | None = None,
    no_cache: bool = False,
    no_calibration: bool = False,
    compare: list[str] | None = None,
    from_reviews: bool = False,
    since: str | None = None,
    out: str = "eval",
) -> dict[str, object]:
    """Score a drafter on labelled PRs (``gold``), compare two runs (``compare: [A, B]``), or read the
    editors' corrections (``from_reviews``); the report becomes the ``evaluation`` artifact."""
    logger = get_run_logger()
    context = FlowRunContext.get()
    check_out(out, deployed=bool(context and context.flow_run and context.flow_run.deployment_id))
    refuse_secret_state(state)  # a password in a parameter would sit in Prefect's database: DIGEST_STATE instead
    if sum([gold is not None, bool(compare), from_reviews]) != 1:
        raise ConfigError("give exactly one of gold, compare (two paths) or from_reviews")
    if compare:
        if len(compare) != 2:
            raise ConfigError(f"compare takes two evaluation folders (A and B), got {len(compare)}")
        outcome = compare_task(compare[0], compare[1], out)
    elif from_reviews:
        outcome = reviews_task(state, since, out)
    else:
        config = EvalConfig(gold=str(gold), drafter=drafter, llm_base_url=llm_base_url, model=model,
                            language=language, rules=rules, repo=repo, state=state, no_cache=no_cache,
                            no_calibration=no_calibration)
        outcome = evaluate_task(config, out)
    text = outcome.markdown
    if len(text) > ARTIFACT_LIMIT:
        text = text[:ARTIFACT_LIMIT] + f"\n\n… cut here; the whole report is in {out}.\n"
    create_markdown_artifact(text, key="evaluation", description=outcome.title[:200])
    logger.info("%s: report written to %s", outcome.title, ", ".join(str(p) for p in outcome.paths))
    return {"title": outcome.title, "paths": [str(p) for p in outcome.paths],
            **{k: v for k, v in outcome.figures.items() if not isinstance(v, (dict, list))}}
