"""Two evaluation runs side by side (``digest eval --compare A B``): figures, significance, per-PR differences.

A and B are earlier runs (their ``eval.json``), so any two configurations compare: two models, two prompt
versions, two languages, a hosted and a self-hosted endpoint. They are paired on the PRs both scored,
which must carry the same gold labels.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from prdigest.evaluation.html import compare_html
from prdigest.evaluation.report import headline_rows
from prdigest.evaluation.results import EvalRow, EvalRun, RunInfo
from prdigest.evaluation.significance import PairedTest, paired_test
from prdigest.evaluation.summary import summarize
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Verdict
from prdigest.review import md


@dataclass(frozen=True)
class Difference:
    """One PR on which A and B disagree in verdict or subsystems."""

    a: EvalRow
    b: EvalRow

    @property
    def what(self) -> str:
        parts = []
        if self.a.verdict is not self.b.verdict:
            parts.append(f"verdict {self.a.verdict.value} → {self.b.verdict.value}")
        if set(self.a.subsystems) != set(self.b.subsystems):
            parts.append(f"subsystems {', '.join(self.a.subsystems)} → {', '.join(self.b.subsystems)}")
        return "; ".join(parts)

    @property
    def better(self) -> str:
        """"A" or "B" when exactly one has the gold verdict, else ""."""
        if self.a.verdict_right != self.b.verdict_right:
            return "A" if self.a.verdict_right else "B"
        return ""


@dataclass
class Comparison:
    """The paired result: figures per side, one test per measure, the differing PRs."""

    n: int
    figure_rows: list[tuple[str, str, str]]
    tests: list[PairedTest]
    differences: list[Difference]
    only_in_a: list[int] = field(default_factory=list)
    only_in_b: list[int] = field(default_factory=list)
    #: What differs between the two configurations: "model: a → b", "prompt version: …", "rules file: …".
    setup: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        """JSON form (``compare.json``)."""
        return {
            "n": self.n, "figures": [{"figure": f, "a": a, "b": b} for f, a, b in self.figure_rows],
            "tests": [t.as_dict() for t in self.tests],
            "differences": [{"number": d.a.number, "gold_verdict": d.a.gold_verdict.value,
                             "a_verdict": d.a.verdict.value, "b_verdict": d.b.verdict.value,
                             "a_subsystems": d.a.subsystems, "b_subsystems": d.b.subsystems,
                             "better": d.better, "what": d.what} for d in self.differences],
            "only_in_a": self.only_in_a, "only_in_b": self.only_in_b, "setup": self.setup,
        }


def _short(value: object) -> str:
    return "none" if value in (None, "") else str(value)


def setup_differences(a: RunInfo, b: RunInfo) -> list[str]:
    """What differs between the configurations of A and B, one phrase each (empty when nothing does)."""
    out = []
    for name, va, vb in (("drafter", a.drafter, b.drafter), ("model", a.model, b.model),
                         ("prompt version", a.prompt_version, b.prompt_version),
                         ("endpoint", a.llm_base_url, b.llm_base_url), ("language", a.language, b.language)):
        if va != vb:
            out.append(f"{name}: {_short(va)} → {_short(vb)}")
    if (a.rules, a.rules_sha256) != (b.rules, b.rules_sha256):
        ra = f"{_short(a.rules or 'shipped')} ({(a.rules_sha256 or 'unknown')[:12]})"
        rb = f"{_short(b.rules or 'shipped')} ({(b.rules_sha256 or 'unknown')[:12]})"
        out.append(f"rules file: {ra} → {rb}")
    return out


def _label(row: EvalRow) -> tuple[Verdict, list[str] | None]:
    return row.gold_verdict, None if row.gold_subsystems is None else sorted(row.gold_subsystems)


def compare(a: EvalRun, b: EvalRun) -> Comparison:
    """Pair two runs on their common PRs and test each right/wrong measure with McNemar's exact test."""
    rows_a, rows_b = {r.number: r for r in a.rows}, {r.number: r for r in b.rows}
    common = [r.number for r in a.rows if r.number in rows_b]
    if not common:
        raise ConfigError("--compare: the two evaluations share no PR; run both on the same labelled file")
    clash = [n for n in common if _label(rows_a[n]) != _label(rows_b[n])]
    if clash:
        raise ConfigError(f"--compare: the gold labels differ for PR {', '.join(f'#{n}' for n in clash[:10])}: "
                          "the runs used different labelled files; re-run both on the same one")
    pa, pb = [rows_a[n] for n in common], [rows_b[n] for n in common]
    fa = headline_rows(summarize(EvalRun(info=a.info, rows=pa)))
    fb = headline_rows(summarize(EvalRun(info=b.info, rows=pb)))
    deep = [i for i, r in enumerate(pa) if r.gold_verdict is Verdict.DEEP_READ]
    labelled = [i for i, r in enumerate(pa) if r.gold_subsystems is not None]
    tests = [
        paired_test("verdict", [r.verdict_right for r in pa], [r.verdict_right for r in pb]),
        paired_test("deep-read found (gold deep-read PRs)", [pa[i].verdict_right for i in deep],
                    [pb[i].verdict_right for i in deep]),
        paired_test("subsystems exactly right (labelled PRs)", [pa[i].subsystems_right is True for i in labelled],
                    [pb[i].subsystems_right is True for i in labelled]),
        paired_test("no grounding failure", [not r.grounding for r in pa], [not r.grounding for r in pb]),
    ]
    differences = [Difference(x, y) for x, y in zip(pa, pb)
                   if x.verdict is not y.verdict or set(x.subsystems) != set(y.subsystems)]
    differences.sort(key=lambda d: (d.better == "", d.a.number))  # where exactly one is right first
    return Comparison(
        n=len(common), figure_rows=[(name, va, vb) for (name, va), (_, vb) in zip(fa, fb)], tests=tests,
        differences=differences, only_in_a=[n for n in rows_a if n not in rows_b],
        only_in_b=[n for n in rows_b if n not in rows_a], setup=setup_differences(a.info, b.info))


def compare_markdown(a: EvalRun, b: EvalRun, result: Comparison) -> str:
    """The comparison as markdown (``compare.md``, and the Prefect artifact)."""
    setup = "; ".join(md(d) for d in result.setup) or "nothing in the recorded configuration"
    lines = [f"# A/B: {md(a.info.label)} vs {md(b.info.label)}", "", f"What differs: {setup}.", "",
             f"{result.n} PRs scored by both.", "",
             "| figure | A | B |", "| --- | ---: | ---: |"]
    lines += [f"| {name} | {va} | {vb} |" for name, va, vb in result.figure_rows]
    lines += ["", "| measure | only A right | only B right | p | verdict |", "| --- | ---: | ---: | ---: | --- |"]
    lines += [f"| {t.measure} | {t.only_a} | {t.only_b} | {t.p_value:.3g} | {t.verdict} |" for t in result.tests]
    if result.only_in_a or result.only_in_b:
        lines += ["", f"Left out (scored by one side only): A {len(result.only_in_a)}, B {len(result.only_in_b)}."]
    lines += ["", f"## PRs where A and B differ ({len(result.differences)})"]
    for d in result.differences:
        mark = f" — **{d.better}** has the gold verdict" if d.better else ""
        lines += ["", f"- **#{d.a.number}** {md(d.a.title, 120)} (gold *{d.a.gold_verdict.value}*){mark}",
                  f"  - {md(d.what)}", f"  - A: {md(d.a.headline, 200)}", f"  - B: {md(d.b.headline, 200)}"]
    return "\n".join(lines) + "\n"


def write_comparison(a: EvalRun, b: EvalRun, out: Path) -> tuple[Comparison, list[Path]]:
    """Write ``compare.json``, ``compare.md`` and ``compare.html`` into ``out``."""
    result = compare(a, b)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "compare.json", out / "compare.md", out / "compare.html"]
    data = {**result.as_dict(), "a": a.info.model_dump(mode="json"), "b": b.info.model_dump(mode="json")}
    paths[0].write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(compare_markdown(a, b, result), encoding="utf-8")
    paths[2].write_text(compare_html(a, b, result), encoding="utf-8")
    return result, paths
