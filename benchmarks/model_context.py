"""What the model is given, and what it costs to collect: the sample week against the local GitHub server with the
discussion on (cold and warm) and off, the prompt's share of the budget per section, and the LLM calls of a warm
re-run of the whole edition.

    .venv/bin/python -m benchmarks.model_context [--budget 12000] [--weeks] [--write]

Everything real: PyGithub over HTTP against ``tests/servers/github_server.py`` serving the shipped week (its review
comments as review comments, one review per PR added here, and an issue for every number the bodies name that is
no PR of the week), the SQLite cache, the packing with the offline tokenizer, and a full ``EditionPipeline`` run
twice with the OpenAI drafter against ``tests/servers/openai_server.py``. ``--write`` replaces this benchmark's
section of BENCHMARKS.md. ``--weeks`` measures instead whether the model sees the code on real weeks (pytorch/ao and
vllm-project/vllm-ascend clones under /work/.mirror: ``benchmarks/code_in_prompt.py``), with and without ``--git``,
and writes its own section.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchmarks.report import write_section
from prdigest.collect.github import GitHubSource
from prdigest.draft.packing import SECTIONS, DraftContext, pack
from prdigest.kernel.models import PullRequest
from prdigest.kernel.window import Window
from tests.servers.github_server import GitHubServer, load_jsonl, make_state

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
REPO = "vllm-project/vllm"
TOKEN = "bench-token"
ALL = Window(datetime(2026, 1, 1, tzinfo=timezone.utc), datetime(2027, 1, 1, tzinfo=timezone.utc))


def _records() -> list[dict[str, Any]]:
    records = load_jsonl(SAMPLE)
    for i, r in enumerate(records):  # what GitHub has and the shipped file lacks: a review per PR
        r["reviews"] = [{"author": f"maintainer{i % 5}", "state": "APPROVED" if i % 4 else "CHANGES_REQUESTED",
                         "body": "" if i % 3 else "Please keep the old path behind a flag until the next release."}]
    return records


def _issues(records: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """An issue for every number a body closes or names that is no PR of the week (GitHub would have most)."""
    from prdigest.collect.discussion import linked_numbers

    prs = {r["number"] for r in records}
    named = {n for r in records for n in linked_numbers(r["title"], r["body"], REPO, r["number"])} - prs
    return {n: {"title": f"Issue {n}: a bug report", "body": "Steps to reproduce, logs and versions. " * 40,
                "state": "open" if n % 2 else "closed"} for n in named}


def collect(discussion: bool, state: Path) -> dict[str, Any]:
    """Cold and warm collection of the week; requests per PR and by endpoint."""
    records = _records()
    with GitHubServer(make_state(records, REPO, token=TOKEN, issues=_issues(records))) as server:
        source = GitHubSource(REPO, token=TOKEN, base_url=server.url, state=state, discussion=discussion)
        started = time.perf_counter()
        prs = source.collect(ALL)
        cold_s = time.perf_counter() - started
        cold, kinds = server.state.requests, dict(server.state.kinds)
        assert cold == source.stats.requests
        server.state.reset_counters()
        started = time.perf_counter()
        again = source.collect(ALL)
        warm_s = time.perf_counter() - started
        warm = server.state.requests
    assert again == prs
    return {"prs": prs, "cold": cold, "warm": warm, "kinds": kinds, "cold_s": cold_s, "warm_s": warm_s}


def shares(prs: list[PullRequest], budget: int, state: Path) -> dict[str, Any]:
    """Each section's share of the budget over the week (each PR given its relations from the reference pass run
    before drafting, as the pipeline does): mean and max, and how often a section was cut."""
    from prdigest.connect.step import known_relations
    from prdigest.state.store import open_store

    store = open_store(state)
    try:
        found = known_relations(REPO, ALL, prs, store)
    finally:
        store.close()
    packed = [pack(pr, budget, DraftContext(relations=tuple(found.get(pr.number, [])))) for pr in prs]
    per = {name: [p.shares().get(name, 0.0) for p in packed] for name in SECTIONS}
    cut = {name: sum(name in p.truncated for p in packed) for name in SECTIONS}
    total = [p.tokens / budget for p in packed]
    return {"per": per, "cut": cut, "total": total, "counter": packed[0].counter if packed else "",
            "comments": (sum(p.coverage.comments_seen for p in packed), sum(p.coverage.comments_total for p in packed)),
            "lines": (sum(p.coverage.lines_seen for p in packed), sum(p.coverage.lines_total for p in packed))}


def warm_rerun(tmp: Path) -> tuple[int, int]:
    """LLM calls of a full edition run (sample week, OpenAI drafter), then of the same run again."""
    from flows.media import default_media
    from prdigest.kernel.config import Settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline
    from tests.servers.openai_server import OpenAIServer

    calls = []
    with OpenAIServer(models=("bench-model",)) as server:
        for again in (False, True):
            options = RunOptions(source="sample", drafter="openai", out=str(tmp / "out"), language="zh-CN",
                                 resend_edition=again)
            settings = Settings(llm_base_url=server.base_url, OPENAI_API_KEY=server.api_key, model="bench-model",
                                state=tmp / "edition.sqlite", llm_rpm=60000)
            server.reset_counts()
            services = build_services(options, settings, default_media())
            try:
                EditionPipeline(services).run()
            finally:
                services.close()
            calls.append(server.chat_calls)
    return calls[0], calls[1]


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


#: Real weeks for ``--weeks``: (repo, clone, week, the code surface's package); vllm-ascend's history up to
#: 2026-05-31 only, and never its weeks 2026-W14 and 2026-W20 (held out for the lead's labels).
WEEKS = [("vllm-project/vllm-ascend", Path("/work/.mirror/vllm-project+vllm-ascend/repo"), "2026-W10", "vllm_ascend"),
         ("vllm-project/vllm-ascend", Path("/work/.mirror/vllm-project+vllm-ascend/repo"), "2026-W11", "vllm_ascend"),
         ("pytorch/ao", Path("/work/.mirror/pytorch+ao/repo"), "2026-W13", "torchao"),
         ("pytorch/ao", Path("/work/.mirror/pytorch+ao/repo"), "2026-W14", "torchao")]


def weeks(budget: int, write: bool) -> None:
    """The model sees the code: real weeks, with and without --git, before and after."""
    from benchmarks.code_in_prompt import measure_week
    from prdigest.collect.facts.surface import Surface

    started = time.perf_counter()
    results = [(repo, week, measure_week(clone, repo, week, Surface(packages=(package,)), budget))
               for repo, clone, week, package in WEEKS if clone.exists()]
    names = [k for k in results[0][2] if k not in ("prs", "coders")] if results else []
    table = ["| week | PRs | adding code | " + " | ".join(names) + " |", "| --- | ---: | ---: |" + " ---: |" * len(names)]
    totals = {name: 0 for name in names}
    coders = 0
    for repo, week, r in results:
        cells = []
        for name in names:
            seen = r[name]["seen"]  # type: ignore[index]
            totals[name] += seen
            cells.append(f"{seen} ({seen / r['coders']:.0%})" if r["coders"] else "n/a")  # type: ignore[operator]
        coders += r["coders"]  # type: ignore[operator]
        table.append(f"| {repo} {week} | {r['prs']} | {r['coders']} | " + " | ".join(cells) + " |")
    table.append("| **all** | | " + f"{coders} | " + " | ".join(
        f"**{totals[n]} ({totals[n] / coders:.0%})**" if coders else "n/a" for n in names) + " |")
    shares = ["| section | " + " | ".join(names[:1] + names[2:3]) + " |", "| --- | ---: | ---: |"]
    for section in SECTIONS:
        values = [statistics.fmean(r[name]["shares"][section] for _, _, r in results)  # type: ignore[index]
                  for name in names[:1] + names[2:3]]
        shares.append(f"| {section} | " + " | ".join(f"{v:.1%}" for v in values) + " |")
    fills = [statistics.fmean(r[name]["fill"] for _, _, r in results) for name in names[:1] + names[2:3]]  # type: ignore[index]
    shares.append("| **all** | " + " | ".join(f"{v:.1%}" for v in fills) + " |")
    body = f"""
Command: `.venv/bin/python -m benchmarks.model_context --weeks --budget {budget}{' --write' if write else ''}` (load
average {_load()}; the clones: the search tool's fetch of each repo, history up to 2026-05-31; {time.perf_counter() - started:.0f} s)

PRs that add code (a core code file gains lines) whose prompt shows an added line of core code, at a
{budget:,}-token budget (`benchmarks/code_in_prompt.py`; target ≥ 90 %):

{chr(10).join(table)}

"--git before" is the prompt as it was: the GitHub source lists files without hunks when a clone gives them, and
nothing read hunks from the clone, so no prompt held a diff. "REST patches before" keeps the hunks of the largest
files first within the collector's 16,000 characters (version files, JSON tables and docs crowd out the code);
now the collector keeps them in the prompt's order (core code, then what the title and body name, then size).
Both REST rows are packed by today's prompt order and carry the clone's facts, so they differ by the collector's
choice of hunks alone.

Mean share of the budget per section over the PRs adding code (the prompt's fill per section; coverage records
files and lines seen per entry):

{chr(10).join(shares)}
"""
    print(body)
    if write:
        write_section("The model sees the code (real weeks, with and without --git)", body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=12_000)
    parser.add_argument("--weeks", action="store_true", help="measure the code in the prompts of real weeks")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if args.weeks:
        weeks(args.budget, args.write)
        return
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        on = collect(True, tmp / "on.sqlite")
        off = collect(False, tmp / "off.sqlite")
        week = shares(on["prs"], args.budget, tmp / "relations.sqlite")
        cold_calls, warm_calls = warm_rerun(tmp)
    n = len(on["prs"])
    kinds = ", ".join(f"{k} {v}" for k, v in sorted(on["kinds"].items()))
    rows = ["| discussion | PRs | cold requests (/PR) | cold s | warm requests (/PR) | warm s |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in (("on (default)", on), ("off (--no-discussion)", off)):
        rows.append(f"| {name} | {n} | {r['cold']} ({r['cold'] / n:.2f}) | {r['cold_s']:.2f} | "
                    f"{r['warm']} ({r['warm'] / n:.3f}) | {r['warm_s']:.2f} |")
    table = ["| section | mean share | max share | PRs cut |", "| --- | ---: | ---: | ---: |"]
    for name in SECTIONS:
        values = week["per"][name]
        table.append(f"| {name} | {statistics.fmean(values):.1%} | {max(values):.1%} | {week['cut'][name]} |")
    total = week["total"]
    table.append(f"| **all** | {statistics.fmean(total):.1%} | {max(total):.1%} | |")
    seen, remarks = week["comments"]
    lines_seen, lines_total = week["lines"]
    body = f"""
The shipped week served by the local GitHub server (`tests/servers/github_server.py`: the file's review comments
as review comments, one review per PR added, an issue of ~1,600 characters for every other number a body names),
collected by
`GitHubSource` with PyGithub, then packed for the model at a {args.budget:,}-token budget
(`prdigest/draft/packing.py`, counted with `{week['counter']}`, offline).

Command: `.venv/bin/python -m benchmarks.model_context --budget {args.budget} --write` (load average {_load()})

{chr(10).join(rows)}

With the discussion, cold requests by endpoint: {kinds}. Per PR: files, inline review comments, reviews, the
conversation when the search hit counts comments, and one look-up per issue the body closes or names (at most 4;
a number that is a PR, or is gone, costs its request and is dropped). Warm: the repository check and the search
only (every PR's `updated_at` matches the store).

Share of the budget per section over the {n} PRs (the sections in priority order):

{chr(10).join(table)}

The shipped week has no merge commits, so no code facts (`--git` gives them); relations are this edition's own
(an empty history). Coverage over the week: {seen} of {remarks} remarks and {lines_seen:,} of {lines_total:,} changed lines reached the
prompts (the server serves synthetic hunks of at most 40 + 40 lines per file; the collector keeps 16,000
characters of hunks per PR).

A full edition run of the sample week with the OpenAI drafter (`tests/servers/openai_server.py`): {cold_calls} LLM
calls cold (drafts, ledes, read-first), **{warm_calls} on the warm re-run** (`--resend-edition`: drafts, ledes and
the ranking come from the cache).
"""
    print(body)
    if args.write:
        write_section("What the model is given (discussion, packing)", body)


if __name__ == "__main__":
    main()
