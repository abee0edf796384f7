"""The archive for a year of a busy repo: 52 editions × 300 entries, synthesised from the sample week.

    .venv/bin/python -m benchmarks.archive [--editions 52] [--entries 300] [--write]

Measures: recording the editions in the state store (SQLite) and loading them back; building the site
(every page, feed and the search index) and writing it; total size and the search index's size; and, in
headless Chromium against a local static server, the time to the first search result: cold (open
search.html?q=…: page, script, index download and parse, search) and warm (a new query on the open page).
``--write`` replaces this benchmark's section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Edition, Entry, Verdict
from prdigest.publish.site import write_site
from prdigest.state.history import editions as load_editions
from prdigest.state.history import record_edition
from prdigest.state.store import open_store
from renderers.site import build_site

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
#: The newest synthesised edition's week (Monday).
LATEST = datetime(2026, 11, 16, tzinfo=timezone.utc)
SITE_URL = "https://digest.example.com/vllm/"


def synthesise(n_editions: int, per_edition: int, language: str = "en") -> list[Edition]:
    """``n_editions`` weekly editions (newest first) of ``per_edition`` approved entries each, built from
    the sample week's PRs and their human labels (gold verdict, subsystems, "why"); numbers made unique."""
    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    out = []
    for w in range(n_editions):
        since = LATEST - timedelta(weeks=w)
        entries = []
        for i in range(per_edition):
            r = records[i % len(records)]
            number = 10_000_000 - w * 10_000 - i if (w or i >= len(records)) else r["number"]
            lines = [line.strip() for line in r["body"].splitlines() if line.strip()]
            entries.append(Entry(
                number=number, url=pr_link("vllm-project/vllm", number), title=r["title"],
                author=r["author"], merged_at=since + timedelta(hours=i % 160), subsystems=r["gold"]["subsystems"],
                verdict=Verdict(r["gold"]["verdict"]), headline=r["title"],
                rationale=r["gold"]["why"] + "\n\n" + " ".join(lines[:4]), focus=lines[4:7], followups=lines[7:8],
                additions=r["additions"], deletions=r["deletions"], files_changed=len(r["files"]),
                status="approved"))
        out.append(Edition(repo="vllm-project/vllm", since=since, until=since + timedelta(weeks=1),
                           language=language, approver="Ann Editor", approved_at=since + timedelta(days=7, hours=9),
                           generated_at=since + timedelta(days=7, hours=8), entries=entries))
    return out


def _seconds(fn):
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start


def first_result_ms(site: Path, query: str, runs: int) -> tuple[list[float], list[float]]:
    """Cold and warm milliseconds to the first search hit in headless Chromium (one fresh page per cold run)."""
    from playwright.sync_api import sync_playwright

    from tests.review_support import CHROMIUM, CHROMIUM_ARGS
    from tests.servers.static_site import StaticSite

    cold, warm = [], []
    with StaticSite(site) as server, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for _ in range(runs):
            context = browser.new_context(viewport={"width": 1000, "height": 900})  # empty cache each run
            page = context.new_page()
            start = time.perf_counter()
            page.goto(f"{server.url}search.html?q={query}")
            page.wait_for_selector("#results li", timeout=60_000)
            cold.append((time.perf_counter() - start) * 1000)
            page.fill("#q", "")
            page.wait_for_selector("#results li", state="detached")
            start = time.perf_counter()
            page.fill("#q", "kv cache")
            page.wait_for_selector("#results li", timeout=60_000)
            # The input waits 120 ms for more typing before it searches; what is left is the search itself.
            warm.append((time.perf_counter() - start) * 1000)
            context.close()
        browser.close()
    return cold, warm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--editions", type=int, default=52)
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5, help="browser runs (medians are reported)")
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args()

    eds = synthesise(args.editions, args.entries)
    n_entries = sum(len(e.entries) for e in eds)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        with open_store(out / "state.sqlite") as store:
            _, t_record = _seconds(lambda: [record_edition(store, e) for e in reversed(eds)])
            stored, t_load = _seconds(lambda: load_editions(store))
        assert len(stored) == args.editions
        files, t_build = _seconds(lambda: build_site(stored, site_url=SITE_URL))
        _, t_write = _seconds(lambda: write_site(files, out / "site"))
        _, t_rewrite = _seconds(lambda: write_site(files, out / "site"))  # nothing changed: compare only
        total = sum(len(b) for b in files.values())
        pages = sum(1 for p in files if p.endswith(".html"))
        feeds = sum(1 for p in files if p.endswith(".xml"))
        index = len(files["search-index.json"])
        edition_page = max(len(b) for p, b in files.items() if p.startswith("editions/"))
        biggest = max((p for p in files if p.startswith("subsystems/") and p.endswith(".html")),
                      key=lambda p: len(files[p]))
        cold, warm = first_result_ms(out / "site", "speculative", args.runs)
    import gzip
    index_gz = len(gzip.compress(files["search-index.json"], 6))

    rows = [
        ("editions × entries", f"{args.editions} × {args.entries} = {n_entries:,}"),
        ("record in history (SQLite), all editions", f"{t_record:.2f} s ({t_record / args.editions * 1000:.0f} ms/edition)"),
        ("load history back", f"{t_load:.2f} s"),
        ("build site (render every file)", f"{t_build:.2f} s"),
        ("write site (first time / unchanged rewrite)", f"{t_write:.2f} s / {t_rewrite:.2f} s"),
        ("files (HTML pages / Atom feeds)", f"{len(files):,} ({pages} / {feeds})"),
        ("total size", f"{total / 1e6:.1f} MB"),
        ("largest edition page / largest subsystem page", f"{edition_page / 1e3:.0f} KB / {len(files[biggest]) / 1e3:.0f} KB ({biggest})"),
        ("search index (raw / gzip)", f"{index / 1e6:.2f} MB / {index_gz / 1e6:.2f} MB"),
        ("first search result, cold (median of runs)", f"{statistics.median(cold):.0f} ms (min {min(cold):.0f}, max {max(cold):.0f})"),
        ("next query on the open page (incl. 120 ms typing debounce)", f"{statistics.median(warm):.0f} ms"),
    ]
    body = "\n".join([
        f"A year of a busy repo: {args.editions} weekly editions × {args.entries} entries synthesised from the sample "
        "week (gold labels, headline = title; distinct PR numbers). The site is built from the state store, as "
        "`digest site` does; the browser figures are headless Chromium against a local static server (loopback, no "
        "compression), a fresh browser context (empty cache) per cold run, query `speculative`. The synthetic "
        "year repeats the sample week's 58 PRs, so the gzip figure flatters real data (expect the index to compress "
        "to about a quarter, not a twentieth); sizes and times scale with the entries' text, not with its variety.",
        "",
        f"Command: `.venv/bin/python -m benchmarks.archive --editions {args.editions} --entries {args.entries} --write`",
        "",
        "| measure | value |",
        "| --- | ---: |",
        *[f"| {k} | {v} |" for k, v in rows],
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.1f} at the end (other sessions share the machine).",
    ])
    print(body)
    if args.write:
        from benchmarks.report import write_section
        write_section("Archive site", body)


if __name__ == "__main__":
    sys.exit(main())
