"""The editors' decisions as labels (``digest eval --from-reviews``): how often editors changed a drafted
verdict, rejected an entry or rewrote it, per drafter configuration and per edition over time.

It reads the review record (``review_editions``, ``review_entries``, written by
:func:`prdigest.review.record_review`) with plain SQL and never writes it. Columns the record may gain
later (``subsystems``, ``draft_headline``/``final_headline``, ``model``, ``prompt_version``) are used when
present; without them the figures that need them say "not recorded".
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from prdigest.evaluation.metrics import ORDER, agreement, confusion, verdict_prf
from prdigest.kernel.models import Verdict
from prdigest.review import md
from prdigest.state.store import Store

#: The columns every review record has (prdigest/review record, migration 1).
BASE = ("edition", "number", "status", "draft_verdict", "final_verdict", "edit_distance", "drafter")
#: Columns used when the record has them.
OPTIONAL = ("subsystems", "draft_headline", "final_headline", "model", "prompt_version")


@dataclass(frozen=True)
class Reviewed:
    """One reviewed entry: what was drafted and what the editor made of it."""

    edition: str
    approved_at: str
    number: int
    status: str
    draft_verdict: Verdict
    final_verdict: Verdict
    edit_distance: int | None
    drafter: str
    subsystems: tuple[str, ...] | None = None
    draft_headline: str | None = None
    final_headline: str | None = None
    model: str | None = None
    prompt_version: str | None = None

    @property
    def rejected(self) -> bool:
        return self.status == "rejected"

    @property
    def configuration(self) -> str:
        """Model (or drafter) and prompt version, as far as the record tells."""
        model = self.model or self.drafter
        return f"{model} · prompt {self.prompt_version or 'not recorded'}"


def table_columns(conn: Store, table: str) -> set[str]:
    """The columns of ``table`` in the state store (SQLite or PostgreSQL); empty when there is no such table."""
    if conn.dialect == "postgresql":
        rows = conn.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                            (table,)).fetchall()
        return {r[0] for r in rows}
    return {r[1] for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}


def kept_edits(conn: Store) -> int:
    """How many editors' edits are kept per PR (prdigest/review/edits.py), read without writing; 0 without the table."""
    if not table_columns(conn, "entry_edits"):
        return 0
    row = conn.fetchone("SELECT COUNT(*) FROM entry_edits")
    return int(row[0]) if row else 0


def read_reviews(conn: Store, since: datetime | None = None) -> list[Reviewed]:
    """Every reviewed entry (approved at or after ``since``), oldest edition first; [] without a review record."""
    have = table_columns(conn, "review_entries")
    if not have or not table_columns(conn, "review_editions"):
        return []
    extra = [c for c in OPTIONAL if c in have]
    cols = ", ".join([*(f"e.{c}" for c in BASE), "r.approved_at", *(f"e.{c}" for c in extra)])
    sql = (f"SELECT {cols} FROM review_entries e JOIN review_editions r ON r.edition = e.edition"
           + (" WHERE r.approved_at >= ?" if since else "") + " ORDER BY r.approved_at, e.edition, e.number")
    rows = conn.execute(sql, (since.isoformat(),) if since else ()).fetchall()
    out = []
    for row in rows:
        values = dict(zip([*BASE, "approved_at", *extra], row))
        subs = values.pop("subsystems", None)
        out.append(Reviewed(
            edition=values["edition"], approved_at=values["approved_at"], number=int(values["number"]),
            status=values["status"], draft_verdict=Verdict(values["draft_verdict"]),
            final_verdict=Verdict(values["final_verdict"]), edit_distance=values["edit_distance"],
            drafter=values["drafter"], subsystems=tuple(json.loads(subs)) if subs else None,
            draft_headline=values.get("draft_headline"), final_headline=values.get("final_headline"),
            model=values.get("model"), prompt_version=values.get("prompt_version")))
    return out


def _rate(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def corrections(entries: list[Reviewed]) -> dict[str, Any]:
    """The editors' corrections of a group of entries: rejections, verdict changes, rewrites, agreement."""
    kept = [e for e in entries if not e.rejected]
    changed = [e for e in kept if e.draft_verdict is not e.final_verdict]
    distances = [e.edit_distance for e in kept if e.edit_distance is not None]
    headlines = [e for e in kept if e.draft_headline is not None and e.final_headline is not None]
    matrix = confusion((e.final_verdict, e.draft_verdict) for e in kept)
    deep = verdict_prf(matrix)
    edited = [e for e in kept if e.status == "edited"]
    return {
        "entries": len(entries), "rejected": len(entries) - len(kept),
        # The editors' edit rate (entries kept but changed: verdict or text) and the characters they changed per
        # kept entry: the drafter's quality as its editors measure it.
        "edit_rate": _rate(len(edited), len(kept)),
        "edit_distance_per_entry": statistics.fmean(distances) if distances else None,
        "rejected_rate": _rate(len(entries) - len(kept), len(entries)),
        "verdict_changed": len(changed), "verdict_changed_rate": _rate(len(changed), len(kept)),
        "rewritten": sum(1 for d in distances if d), "rewritten_rate": _rate(sum(1 for d in distances if d), len(kept)),
        "edit_distance_median": statistics.median(distances) if distances else None,
        "edit_distance_max": max(distances) if distances else None,
        "headline_rewritten": sum(1 for e in headlines if e.draft_headline != e.final_headline) if headlines else None,
        # The drafter scored against the editors: the final verdict is the label, rejected entries left out.
        "verdict_agreement": agreement(matrix),
        "deep_read_precision": deep.precision, "deep_read_recall": deep.recall,
        "confusion": {g.value: {p.value: matrix[g][p] for p in ORDER} for g in ORDER},
    }


def corrections_by_subsystem(entries: list[Reviewed]) -> dict[str, dict[str, int]] | None:
    """Per subsystem: entries, rejections and verdict changes, most corrected first; None when not recorded."""
    if not any(e.subsystems for e in entries):
        return None
    counts: dict[str, Counter[str]] = {}
    for e in entries:
        for name in e.subsystems or ():
            c = counts.setdefault(name, Counter())
            c["entries"] += 1
            c["rejected"] += e.rejected
            c["verdict_changed"] += (not e.rejected) and e.draft_verdict is not e.final_verdict
            c["rewritten"] += (not e.rejected) and bool(e.edit_distance)
    order = sorted(counts, key=lambda n: (-(counts[n]["rejected"] + counts[n]["verdict_changed"]
                                             + counts[n]["rewritten"]), n))
    return {n: dict(counts[n]) for n in order}


def reviews_report(entries: list[Reviewed]) -> dict[str, Any]:
    """Corrections overall, per configuration, per edition (oldest first) and per subsystem (JSON-ready)."""
    configs: dict[str, list[Reviewed]] = {}
    editions: dict[str, list[Reviewed]] = {}
    for e in entries:
        configs.setdefault(e.configuration, []).append(e)
        editions.setdefault(e.edition, []).append(e)
    missing = [c for c in OPTIONAL if all(getattr(e, c) is None for e in entries)]
    return {
        "editions": len(editions), **corrections(entries),
        "per_configuration": {k: corrections(v) for k, v in configs.items()},
        "per_edition": [{"edition": k, "approved_at": v[0].approved_at, **corrections(v)} for k, v in editions.items()],
        "per_subsystem": corrections_by_subsystem(entries),
        "not_recorded": missing if entries else [],
    }


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _row(name: str, c: dict[str, Any]) -> str:
    median = "n/a" if c["edit_distance_median"] is None else c["edit_distance_median"]
    return (f"| {name} | {c['entries']} | {_pct(c['rejected_rate'])} | {_pct(c['verdict_changed_rate'])} | "
            f"{_pct(c['rewritten_rate'])} | {median} | {_pct(c['verdict_agreement'])} |")


def _quality(report: dict[str, Any]) -> str:
    per_entry = report.get("edit_distance_per_entry")
    distance = "n/a" if per_entry is None else f"{per_entry:.1f} characters"
    kept = report.get("kept_edits")
    again = f"; {kept} editor's edit(s) kept per PR, applied again to later drafts" if kept else ""
    return (f"**Edit rate: {_pct(report.get('edit_rate'))}** of the kept entries were edited; **edit distance per "
            f"entry: {distance}**{again}.")


def reviews_markdown(report: dict[str, Any], since: datetime | None = None, labels: Path | None = None) -> str:
    """The editors' corrections as markdown (``reviews.md``, and the Prefect artifact)."""
    scope = f" since {since:%Y-%m-%d}" if since else ""
    if not report["entries"]:
        return (f"# Editors' corrections{scope}\n\nNo reviewed edition in the state store{scope}: editions approved "
                "with `--approve ui` (the Prefect form or `digest approve`) are recorded.\n")
    head = ("| | entries | rejected | verdict changed | rewritten | median edit distance | agreement with editors |\n"
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    lines = [f"# Editors' corrections{scope}", "",
             f"{report['entries']} reviewed entries in {report['editions']} edition(s). *Verdict changed*, "
             "*rewritten* and *agreement* count the entries editors kept; *agreement* is the drafted verdict "
             "scored against the editor's final one.", "", _quality(report), "", head, _row("all", report), "",
             "## Per configuration (model or drafter, prompt version)", "", head]
    lines += [_row(md(name), c) for name, c in report["per_configuration"].items()]
    lines += ["", "## Per edition, oldest first", "", head]
    lines += [_row(md(e["edition"]), e) for e in report["per_edition"]]
    subsystems = report["per_subsystem"]
    lines += ["", "## Subsystems where editors correct most", ""]
    if subsystems is None:
        lines.append("Not recorded: the review record has no subsystems per entry.")
    else:
        lines += ["| subsystem | entries | rejected | verdict changed | rewritten |",
                  "| --- | ---: | ---: | ---: | ---: |"]
        lines += [f"| {md(n)} | {c['entries']} | {c['rejected']} | {c['verdict_changed']} | {c['rewritten']} |"
                  for n, c in list(subsystems.items())[:15]]
    if labels is not None:
        lines += ["", f"{report['labels']} kept entries whose PR the collector cached are labelled with the editor's "
                      f"verdict in `{labels.name}`: `digest eval --gold {labels} --drafter …` scores any drafter "
                      "against your editors."]
    if report["not_recorded"]:
        lines += ["", "Not in the review record yet: " + ", ".join(report["not_recorded"])
                  + " (headline rewrites, per-model and per-prompt figures and subsystems need them)."]
    return "\n".join(lines) + "\n"
