"""The figures of one evaluation run (the top of ``eval.json``), computed from its rows."""

from __future__ import annotations

from typing import Any

from prdigest.evaluation.metrics import (
    ORDER,
    Spread,
    agreement,
    confusion,
    jaccard_distance,
    mean,
    subsystem_prf,
    verdict_distance,
    verdict_prf,
)
from prdigest.evaluation.results import EvalRow, EvalRun

#: Disagreements listed with both sides' text.
WORST = 10


def _spread(values: list[float]) -> dict[str, float]:
    s = Spread.of(values)
    return {"median": s.median, "max": s.max}


def worst_disagreements(rows: list[EvalRow], limit: int = WORST) -> list[EvalRow]:
    """Rows where drafter and gold differ, worst first: verdict steps apart, then subsystem overlap, then PR."""
    wrong = [r for r in rows if not r.verdict_right or r.subsystems_right is False]
    wrong.sort(key=lambda r: (-verdict_distance(r.verdict, r.gold_verdict),
                              -jaccard_distance(r.subsystems, r.gold_subsystems or r.subsystems), r.number))
    return wrong[:limit]


def summarize(run: EvalRun) -> dict[str, Any]:
    """Every figure of the run, JSON-ready; ratios with no denominator are None."""
    rows = run.rows
    matrix = confusion((r.gold_verdict, r.verdict) for r in rows)
    deep = verdict_prf(matrix)
    micro, per_subsystem = subsystem_prf((r.gold_subsystems, r.subsystems) for r in rows
                                         if r.gold_subsystems is not None)
    drafted = confusion((r.gold_verdict, r.drafted) for r in rows)
    drafted_deep = verdict_prf(drafted)
    fresh = [r for r in rows if not r.cached and r.seconds is not None]
    timed = [r.seconds for r in rows if r.seconds is not None]
    tokens_in, tokens_out = sum(r.tokens_in for r in rows), sum(r.tokens_out for r in rows)
    cost = sum(r.cost_usd for r in rows)
    n = len(rows)
    return {
        "n": n,
        "verdict_agreement": agreement(matrix),
        "confusion": {g.value: {p.value: matrix[g][p] for p in ORDER} for g in ORDER},
        "deep_read_precision": deep.precision,
        "deep_read_recall": deep.recall,
        # The drafter's own verdicts, before the connect step: beside what ships, the connect step's effect.
        "drafter_verdict_agreement": agreement(drafted),
        "drafter_deep_read_precision": drafted_deep.precision,
        "drafter_deep_read_recall": drafted_deep.recall,
        "changed_by_connect": sum(1 for r in rows if r.drafted is not r.verdict),
        # Without the repo's calibration (digest calibrate), beside the calibrated verdicts that ship: both figures.
        "calibration": run.info.calibration,
        "uncalibrated_verdict_agreement": (agreement(confusion((r.gold_verdict, r.uncalibrated_verdict or r.verdict)
                                                               for r in rows)) if run.info.calibration else None),
        "changed_by_calibration": sum(1 for r in rows if r.uncalibrated_verdict not in (None, r.verdict)),
        "subsystem_precision": micro.precision,
        "subsystem_recall": micro.recall,
        "subsystem_f1": micro.f1,
        "subsystem_counts": {"tp": micro.tp, "fp": micro.fp, "fn": micro.fn},
        "subsystems_labelled": sum(1 for r in rows if r.gold_subsystems is not None),
        "per_subsystem": {name: {"tp": c.tp, "fp": c.fp, "fn": c.fn, "precision": c.precision,
                                 "recall": c.recall, "f1": c.f1} for name, c in per_subsystem.items()},
        "grounding_failures": sum(1 for r in rows if r.grounding),
        "fallbacks": sum(1 for r in rows if r.fallback),
        "needs_editing": sum(1 for r in rows if r.needs_editing),
        "lengths": {
            "headline": _spread([len(r.headline) for r in rows]),
            "rationale": _spread([len(r.rationale) for r in rows]),
            "focus": _spread([len(p) for r in rows for p in r.focus]),
            "focus_points": _spread([len(r.focus) for r in rows]),
        },
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "tokens_in_per_entry": tokens_in / n if n else None,
        "tokens_out_per_entry": tokens_out / n if n else None,
        "cost_usd": round(cost, 6),
        "cost_usd_per_entry": round(cost / n, 8) if n else None,
        "seconds_per_entry": {**_spread(timed), "mean": mean(timed), "timed": len(timed)},
        "cached": sum(1 for r in rows if r.cached),
        "fresh": len(fresh),
        "spent_tokens_in": sum(r.spent_in for r in rows),
        "spent_tokens_out": sum(r.spent_out for r in rows),
        "worst_disagreements": [r.number for r in worst_disagreements(rows)],
    }


def eval_json(run: EvalRun) -> dict[str, Any]:
    """The whole ``eval.json``: the figures, the configuration, and every row (for ``--compare``)."""
    return {**summarize(run), "config": run.info.model_dump(mode="json"),
            "entries": [r.model_dump(mode="json") for r in run.rows]}
