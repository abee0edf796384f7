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
    """Seconds of the same steps without Prefect, in this process: classify, draft, render, outbox."""
    from prdigest.delivery.compose import compose_messages
    from prdigest.delivery.outbox import OutboxChannel
    from prdigest.drafting.offline import OfflineDrafter
    from prdigest.pipeline import auto_approve, deliver, draft_entries, new_edition
    from prdigest.readers import example_readers_path, load_readers
    from prdigest.sources import JsonlSource, sample_week_path
    from prdigest.subsystems import classifier_for
    from prdigest.variants import plan_variants
    from renderers.bundle import render_variants

    start = time.perf_counter()
    source = JsonlSource(sample_week_path())
    classifier = classifier_for(source.repo)
    drafter = OfflineDrafter(classifier.vocabulary)
    entries = draft_entries(source.collect(None), classifier.classify, drafter.draft, "zh-CN")
    edition = auto_approve(new_edition(source.repo, source.default_window(), "zh-CN", "offline", entries))
    variants, _ = plan_variants(edition, load_readers(example_readers_path()).readers)
    with tempfile.TemporaryDirectory() as tmp:
        outbox = OutboxChannel(Path(tmp))
        for item in render_variants(edition, variants):
            deliver(compose_messages(edition=edition, variant=item.variant.key, readers=item.variant.readers,
                                     subject=item.email.subject, preheader=item.email.preheader,
                                     html=item.email.html, text=item.email.text, slack=item.slack,
                                     sender="d <d@example.com>", unsubscribe_template=None),
                    {"email": outbox, "slack": outbox})
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
        "database) and stops it at the end: that is most of the wall time. The pipeline itself (58 PRs:\n"
        "classify, draft, render the variants, write the outbox) is the last row."
    ).format(runs=args.runs, med=statistics.median(times), lo=min(times), hi=max(times), peak=max(peaks),
             domain=domain)
    write_section("Demo", body)
    print(body)


if __name__ == "__main__":
    sys.exit(main())
