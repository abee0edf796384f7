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


def domain_only() -> float:
    """Seconds of the same steps without Prefect, in this process: the core pipeline's run (collect,
    classify, draft, auto-approve, render, digest.json, the outbox), as ``digest demo`` runs it in the flow."""
    from flows.media import default_media
    from prdigest.kernel.config import Settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline

    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        services = build_services(RunOptions(out=tmp), Settings(state=f"{tmp}/state.sqlite"), default_media())
        try:
            EditionPipeline(services).run()
        finally:
            services.close()
    return time.perf_counter() - start


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
    domain = statistics.median(domain_only() for _ in range(args.runs))
    body = (
        "Command: `.venv/bin/python -m benchmarks.demo --runs {runs}`\n\n"
        "| what | value |\n| --- | --- |\n"
        "| `digest demo` wall time, median of {runs} (min–max) | {med:.1f} s ({lo:.1f}–{hi:.1f} s) |\n"
        "| peak RSS of the largest run | {peak:.0f} MiB |\n"
        "| the same domain steps in one process, without Prefect (median) | {domain:.2f} s |\n\n"
        "A `digest demo` run starts Prefect's ephemeral API server (a subprocess with its own SQLite\n"
        "database) and stops it at the end: that is most of the wall time. The pipeline itself (58 PRs,\n"
        "`EditionPipeline.run`: classify, draft, render the variants, write digest.json and the outbox)\n"
        "is the last row."
    ).format(runs=args.runs, med=statistics.median(times), lo=min(times), hi=max(times), peak=max(peaks),
             domain=domain)
    write_section("Demo", body)
    print(body)


if __name__ == "__main__":
    sys.exit(main())
