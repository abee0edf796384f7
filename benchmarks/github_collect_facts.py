"""The GitHub collection benchmark's second part: a week collected with its full-file facts, as ``digest run
--source github`` does without ``--git`` (the merge commits, and each PR's changed files before and after through
the API), cold and warm, on a GitHub with GraphQL and on one without. Called by :mod:`benchmarks.github_collect`,
which owns the server process and writes the section."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from prdigest.collect.facts import FactsCache, Surface, week_facts
from prdigest.collect.github import GitHubSource
from prdigest.collect.github.client import default_retry
from prdigest.kernel.window import Window
from prdigest.state.store import LazyStore
from tests.servers.github_week_git import build_week_git

#: The routes the facts add to a collection (``pulls (closed)``: the merge commits' shas, first run only).
FILE_ROUTES = ("pulls (closed)", "graphql (merge commits)", "graphql (files)", "git/commits", "contents")


def week_files(records: list[dict[str, Any]], window: Window) -> tuple[int, int]:
    """The week's changed files, and the files at a commit its facts read (both sides of a modified file, one of
    an added one)."""
    files = [f for r in records if r.get("merged_at") and _merged_in(r["merged_at"], window) for f in r["files"]]
    return len(files), sum(1 if f.get("status") == "added" else 2 for f in files)


def _merged_in(merged_at: str, window: Window) -> bool:
    return datetime.fromisoformat(merged_at.replace("Z", "+00:00")) in window


def measure_facts(n: int, recs: list[dict[str, Any]], workdir: Path, concurrency: int, window: Window,
                  repo: str, token: str, server: Callable[[Path, Path, bool], Any]) -> dict[str, Any]:
    """Cold and warm runs of collect + facts for the week ``recs`` (merge commits added here), with GraphQL and
    without; ``server(jsonl, git_dir, graphql)`` starts the local GitHub server."""
    git_dir = workdir / f"week-{n}.git"
    build_week_git(recs, git_dir)
    data = workdir / f"facts-{n}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    changed, sides = week_files(recs, window)
    out: dict[str, Any] = {"n": n, "changed": changed, "sides": sides, "runs": []}
    facts: dict[bool, dict[int, list[Any]]] = {}
    for graphql in (True, False):
        srv = server(data, git_dir, graphql)
        try:
            state = workdir / f"facts-{n}-{int(graphql)}.sqlite"
            for label in ("cold", "warm"):
                srv.reset()
                with LazyStore(state) as lazy:
                    src = GitHubSource(repo, token=token, base_url=srv.url, state=lazy, concurrency=concurrency,
                                       retry=default_retry(backoff_factor=0.01))
                    started = time.perf_counter()
                    prs = src.collect(window)
                    readable = src.commit_reader(prs)
                    assert readable is not None
                    prs, reader = readable
                    collected = time.perf_counter()
                    reading = 0.0

                    def timed(shas: Any, read: Any = reader) -> Any:
                        nonlocal reading
                        began = time.perf_counter()
                        try:
                            return read(shas)
                        finally:
                            reading += time.perf_counter() - began
                    week = week_facts(prs, surface=Surface(), cache=FactsCache(lazy()), reader=timed)
                    seconds = time.perf_counter() - started
                served = srv.stats()["requests"]
                assert served == src.stats.requests, (served, src.stats.requests)  # every request counted
                assert len(prs) == n and set(week.source.values()) == {"git"}, set(week.source.values())
                facts.setdefault(graphql, {p: list(c) for p, c in week.changes.items()})
                out["runs"].append({
                    "label": f"{label}{'' if graphql else ', no GraphQL'}", "requests": src.stats.requests,
                    "files": src.stats.file_requests, "seconds": seconds,
                    "collect_s": collected - started, "read_s": reading, "computed": week.computed,
                    "cached": week.cached, "facts": sum(len(c) for c in week.changes.values()),
                    "routes": dict(src.stats.routes)})
        finally:
            srv.stop()
    # The same facts whichever way the files came (GraphQL, or a REST request per file).
    assert facts[True] == facts[False]
    return out


def facts_table(rows: list[dict[str, Any]], latency: float) -> str:
    """The section's facts part: requests per PR and the files' share, then the routes of each run."""
    lines = ["With full-file facts (`--source github` without `--git`: the files before and after each merge "
             "commit through the API):", "",
             "| PRs | run | requests (/PR) | of which the facts' (/PR) | facts' share | wall s (collect + files + "
             "facts) | commits computed / cached | facts |", "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        n = r["n"]
        for run in r["runs"]:
            lines.append(f"| {n} | {run['label']} | {run['requests']} ({run['requests'] / n:.3f}) "
                         f"| {run['files']} ({run['files'] / n:.3f}) | {run['files'] / run['requests']:.0%} "
                         f"| {run['seconds']:.2f} ({run['collect_s']:.2f} + {run['read_s']:.2f} + "
                         f"{run['seconds'] - run['collect_s'] - run['read_s']:.2f}) "
                         f"| {run['computed']} / {run['cached']} | {run['facts']} |")
    lines += ["", "Their requests by route (the collector's own count, equal to the server's):", "",
              "| PRs | run | repo | search | files | graphql | pulls/comments (repo-wide) | issues/comments (repo-wide) "
              "| reviews | issue | " + " | ".join(FILE_ROUTES) + " |",
              "| ---: | --- |" + " ---: |" * (8 + len(FILE_ROUTES))]
    for r in rows:
        for run in r["runs"]:
            keys = ("repo", "search", "files", "graphql", "pulls/comments (repo-wide)",
                    "issues/comments (repo-wide)", "reviews", "issue", *FILE_ROUTES)
            lines.append(f"| {r['n']} | {run['label']} | " + " | ".join(str(run["routes"].get(k, 0)) for k in keys)
                         + " |")
    first = rows[0]
    return "\n".join(lines) + (
        f"\n\nThe week's {first['n']} PRs change {first['changed']} Python files ({first['changed'] / first['n']:.1f} "
        f"per PR; {first['sides']} files at a commit to read, before and after; every synthetic file is Python, so "
        "every one is read). With GraphQL: the merge commits' shas from the closed-PR list "
        "(100 a page; kept in the state store after), their parents 100 a query, the files' text 50 a query. "
        "Without GraphQL (a GitHub Enterprise without it): a commit request per merge commit and a contents request "
        "per file at a commit, and the discussion PR by PR too. Warm: the facts are cached by merge commit and "
        "each PR's merge commit is kept, so no file, commit or list is asked. The facts of both cold runs are "
        f"equal (asserted). Server latency {1000 * latency:.0f} ms a request, as above.")
