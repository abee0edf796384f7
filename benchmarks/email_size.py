"""Email HTML size against Gmail's ~102 KB clip, full vs compact, and render time, for 50/150/300 entries.

    .venv/bin/python -m benchmarks.email_size [--runs 5] [--write]

Entries are drafted from the sample week (headline = title, rationale = the gold "why" plus the body's
first lines, up to 3 focus points and a follow-up), cycled to reach the size. "full" forces every entry
in full (no budget); "sent" is what render_email produces with its budget (compact when needed).
``--write`` replaces this benchmark's section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Edition, Entry, Verdict
from renderers import render_email, render_slack, render_text
from renderers.email import BUDGET

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
WEEK = datetime(2026, 11, 16, tzinfo=timezone.utc)


def entries(n: int) -> list[Entry]:
    """``n`` approved entries built from the sample week (numbers made unique past the first 58)."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for i in range(n):
        r = records[i % len(records)]
        number = r["number"] + 100_000 * (i // len(records))
        lines = [line.strip() for line in r["body"].splitlines() if line.strip()]
        out.append(Entry(
            number=number, url=pr_link("vllm-project/vllm", number), title=r["title"],
            author=r["author"], merged_at=r["merged_at"], subsystems=r["gold"]["subsystems"],
            verdict=Verdict(r["gold"]["verdict"]), headline=r["title"],
            rationale=r["gold"]["why"] + "\n\n" + " ".join(lines[:4]), focus=lines[4:7],
            followups=lines[7:8], additions=r["additions"], deletions=r["deletions"],
            files_changed=len(r["files"]), status="approved"))
    return out


def timed(fn, runs: int) -> tuple[object, float]:
    """The result of ``fn()`` and its median wall time in milliseconds over ``runs`` calls."""
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return result, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()
    rows = []
    for n in (50, 150, 300):
        es = entries(n)
        ed = Edition(repo="vllm-project/vllm", since=WEEK, until=WEEK.replace(day=23), generated_at=WEEK,
                     entries=es)
        var = Variant(Filter(), ordered(es))
        deep = sum(e.verdict is Verdict.DEEP_READ for e in es)
        full, full_ms = timed(lambda ed=ed, var=var: render_email(ed, var, budget=10**9), args.runs)
        sent, sent_ms = timed(lambda ed=ed, var=var: render_email(ed, var), args.runs)
        _, slack_ms = timed(lambda ed=ed, var=var: render_slack(ed, var), args.runs)
        _, text_ms = timed(lambda ed=ed, var=var: render_text(ed, var), args.runs)
        shown = sent.html.count('class="e"')
        rows.append(f"| {n} ({deep} deep-read) | {full.size / 1000:.1f} KB | {full_ms:.0f} ms | "
                    f"{sent.size / 1000:.1f} KB | {'yes' if sent.compact else 'no'} ({shown} in full) | "
                    f"{sent_ms:.0f} ms | {slack_ms:.0f} ms | {text_ms:.0f} ms |")
        print(rows[-1], flush=True)
    body = (
        f"Command: `.venv/bin/python -m benchmarks.email_size --runs {args.runs}` (median times)\n\n"
        "| entries | HTML, all in full | render | HTML as sent | compact | render as sent | Slack | text |\n"
        "| --- | --- | --- | --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n\n"
        f"Budget {BUDGET:,} bytes (Gmail clips above ~102 KB). \"As sent\" keeps as many deep-read entries\n"
        "in full as fit and shows the others as one line (headline + link); it costs a few extra MJML\n"
        "compiles (binary search over the number of full entries)."
    )
    if args.write:
        from benchmarks.report import write_section

        write_section("Email size", body)
    print(body)


if __name__ == "__main__":
    sys.exit(main())
