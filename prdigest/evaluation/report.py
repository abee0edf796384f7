"""The evaluation report: ``eval.json`` (figures, configuration, rows), ``eval.md`` and ``eval.html``.

PR titles, gold notes and drafted text are untrusted: the markdown goes through the review's inert-markdown
escaping (:func:`prdigest.review.md`), the HTML through Jinja2 autoescaping (:mod:`prdigest.evaluation.html`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prdigest.evaluation.html import eval_html
from prdigest.evaluation.metrics import ORDER
from prdigest.evaluation.results import EvalRow, EvalRun
from prdigest.evaluation.summary import eval_json, summarize, worst_disagreements
from prdigest.review import md


def pct(value: float | None) -> str:
    """A ratio as a percentage with one decimal, or "n/a" when undefined."""
    return "n/a" if value is None else f"{value:.1%}"


def num(value: float | None, digits: int = 3) -> str:
    """A ratio with ``digits`` decimals, or "n/a" when undefined."""
    return "n/a" if value is None else f"{value:.{digits}f}"


def headline_rows(figures: dict[str, Any]) -> list[tuple[str, str]]:
    """The figures a reader compares first, as (name, shown value) pairs."""
    secs = figures["seconds_per_entry"]
    return [
        ("PRs", str(figures["n"])),
        ("verdict agreement (as shipped)", pct(figures["verdict_agreement"])),
        ("deep-read precision (as shipped)", num(figures["deep_read_precision"])),
        ("deep-read recall (as shipped)", num(figures["deep_read_recall"])),
        ("drafter's own: agreement / deep-read P / R", _drafter(figures)),
        ("verdicts changed by the connect step", str(figures.get("changed_by_connect", 0))),
        ("without the repo's calibration: agreement", _uncalibrated(figures)),
        ("subsystem precision (micro)", num(figures["subsystem_precision"])),
        ("subsystem recall (micro)", num(figures["subsystem_recall"])),
        ("subsystem F1 (micro)", num(figures["subsystem_f1"])),
        ("grounding failures", str(figures["grounding_failures"])),
        ("fallbacks", str(figures["fallbacks"])),
        ("tokens in / out per entry", f"{num(figures['tokens_in_per_entry'], 0)} / "
                                      f"{num(figures['tokens_out_per_entry'], 0)}"),
        ("cost (USD), per entry", f"{figures['cost_usd']:.4f}, {num(figures['cost_usd_per_entry'], 6)}"),
        ("seconds per entry, median / max",
         f"{secs['median']:.2f} / {secs['max']:.2f}" if secs["timed"] else "n/a (drafts from an edition's cache)"),
        ("from cache / drafted now", f"{figures['cached']} / {figures['fresh']}"),
        ("tokens spent by this run", f"{figures['spent_tokens_in']} in, {figures['spent_tokens_out']} out"),
    ]


def _uncalibrated(figures: dict[str, Any]) -> str:
    if not figures.get("calibration"):
        return "n/a (no calibration applied)"
    return (f"{pct(figures['uncalibrated_verdict_agreement'])} ({figures.get('changed_by_calibration', 0)} verdicts "
            f"changed by the calibration {figures['calibration']})")


def _drafter(figures: dict[str, Any]) -> str:
    if "drafter_verdict_agreement" not in figures:
        return "n/a"
    return (f"{pct(figures['drafter_verdict_agreement'])} / {num(figures['drafter_deep_read_precision'])} / "
            f"{num(figures['drafter_deep_read_recall'])}")


def _side(row: EvalRow) -> list[str]:
    lines = [f"  - drafted: *{md(row.shipped_label)}* · {md(', '.join(row.subsystems))} · "
             f"**{md(row.headline, 200)}**",
             f"    {md(row.rationale, 600)}"]
    lines += [f"    {i}. {md(point, 300)}" for i, point in enumerate(row.focus, 1)]
    return lines


def eval_markdown(run: EvalRun, figures: dict[str, Any] | None = None) -> str:
    """The report as markdown (``eval.md``, and the Prefect artifact)."""
    figures = figures or summarize(run)
    info = run.info
    lines = [f"# Evaluation: {md(info.label)}", "",
             f"{figures['n']} labelled PRs of {md(info.repo)} from `{Path(info.gold).name}` "
             f"(sha256 {info.gold_sha256[:12]}), {info.started_at:%Y-%m-%d %H:%M} UTC.", "",
             "| figure | value |", "| --- | ---: |"]
    lines += [f"| {name} | {value} |" for name, value in headline_rows(figures)]
    lines += ["", "Confusion matrix (rows: gold, columns: drafted):", "",
              "| gold \\ drafted | " + " | ".join(v.value for v in ORDER) + " |",
              "| --- |" + " ---: |" * len(ORDER)]
    lines += [f"| {g.value} | " + " | ".join(str(figures["confusion"][g.value][p.value]) for p in ORDER) + " |"
              for g in ORDER]
    lengths = figures["lengths"]
    lines += ["", "Field lengths in characters (median / max): " + ", ".join(
        f"{name} {int(lengths[name]['median'])} / {int(lengths[name]['max'])}"
        for name in ("headline", "rationale", "focus")) + " (focus: per point)."]
    lines += ["", "| subsystem | tp | fp | fn | precision | recall | F1 |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {md(name)} | {c['tp']} | {c['fp']} | {c['fn']} | {num(c['precision'], 2)} | {num(c['recall'], 2)} | "
              f"{num(c['f1'], 2)} |" for name, c in figures["per_subsystem"].items()]
    worst = worst_disagreements(run.rows)
    lines += ["", f"## Worst disagreements ({len(worst)})"]
    for row in worst:
        lines += ["", f"- **#{row.number}** {md(row.title, 160)}",
                  f"  - gold: *{row.gold_verdict.value}* · "
                  f"{md(', '.join(row.gold_subsystems or ['subsystems not labelled']))}"
                  + (f" — {md(row.gold_why, 400)}" if row.gold_why else "")]
        lines += _side(row)
    return "\n".join(lines) + "\n"


def write_reports(run: EvalRun, out: Path) -> list[Path]:
    """Write ``eval.json``, ``eval.md`` and ``eval.html`` into ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    figures = summarize(run)
    data = eval_json(run)
    paths = [out / "eval.json", out / "eval.md", out / "eval.html"]
    paths[0].write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(eval_markdown(run, figures), encoding="utf-8")
    paths[2].write_text(eval_html(run, figures, headline_rows(figures), worst_disagreements(run.rows)),
                        encoding="utf-8")
    return paths
