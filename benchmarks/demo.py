"""`digest demo` end to end: wall time and peak memory, as a user runs it (a fresh process each time).

    .venv/bin/python -m benchmarks.demo [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import write_section

ROOT = Path(__file__).resolve().parents[1]


def one_run(out: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of one `digest demo` in a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    subprocess.run([str(ROOT / ".venv" / "bin" / "digest"), "demo", "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                   env={**os.environ, "PREFECT_LOGGING_LEVEL": "WARNING"})
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, max(peak, before) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    times, peaks = [], []
    for i in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            seconds, peak = one_run(Path(tmp) / "out")
        times.append(seconds)
        peaks.append(peak)
        print(f"run {i + 1}: {seconds:.1f} s, peak RSS {peak:.0f} MiB", flush=True)
    body = (
        "Command: `.venv/bin/python -m benchmarks.demo --runs {runs}`\n\n"
        "| what | value |\n| --- | --- |\n"
        "| `digest demo` wall time, median of {runs} (min–max) | {med:.1f} s ({lo:.1f}–{hi:.1f} s) |\n"
        "| peak RSS of the largest run | {peak:.0f} MiB |\n\n"
        "The run includes starting Prefect's ephemeral API server in the same process tree (most of the\n"
        "time); the pipeline itself (58 PRs: classify, draft, render 6 variants, write the outbox) is a\n"
        "small part of it."
    ).format(runs=args.runs, med=statistics.median(times), lo=min(times), hi=max(times), peak=max(peaks))
    write_section("Demo", body)
    print(body)


if __name__ == "__main__":
    sys.exit(main())
