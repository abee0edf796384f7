"""GitHub collection at scale: synthetic weeks of 250, 500 and 1,000 merged PRs served by the local GitHub
server (tests/servers/github_server.py) in its own process, collected by GitHubSource (cold, then warm) and
by the naive PyGithub loop, in the same run; then, for ``--facts-sizes``, the same week with its full-file facts
as ``digest run --source github`` reads them without ``--git``: each PR's merge commit and its changed files
before and after through the API, from a git repository of the week's merge commits the server serves (cold
and warm, with GraphQL and on a GitHub without it); and, for ``--git-sizes``, the week collected as
``digest run --source github --git`` does, with the discussion (cold and warm): the files come from a clone of
that repository, each PR's merge commit sha from the closed-PR list (then from the state store).

    .venv/bin/python -m benchmarks.github_collect [--sizes 250 500 1000] [--facts-sizes 300] [--git-sizes 300]
                                                  [--write]

Requests are counted by the server, which adds a fixed latency to each (``--latency``, a stand-in for the
network). Wall times are medians of three runs, without pacing (the source does not pace a loopback URL); peak
memory is tracemalloc's peak for a separate cold run (tracemalloc slows Python, so that run is not timed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from github import Auth, Github  # noqa: E402

from benchmarks.github_collect_facts import facts_table, measure_facts  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from prdigest.collect.git import open_clone  # noqa: E402
from prdigest.collect.github import GitHubSource  # noqa: E402
from prdigest.collect.github.client import default_retry  # noqa: E402
from prdigest.kernel.models import FileChange, PullRequest, ReviewComment  # noqa: E402
from prdigest.kernel.window import Window  # noqa: E402
from prdigest.state.store import LazyStore  # noqa: E402  # after the sys.path insert above
from tests.servers.github_server import iso, synthetic_week  # noqa: E402
from tests.servers.github_week_git import build_week_git  # noqa: E402

REPO = "acme/widgets"
ROUTES = ("repo", "search", "files", "graphql", "pulls/comments (repo-wide)", "issues/comments (repo-wide)",
          "review_comments", "issue_comments", "reviews", "issue", "pull")
TOKEN = "bench-token"
#: Issue 38's targets with ``--git`` and the discussion: requests per PR, cold and warm.
GIT_TARGETS = {"cold": 1.2, "warm": 0.02}
#: The routes of a ``--git`` collection (no file list: the clone gives the files).
GIT_ROUTES = ("repo", "search", "pulls (closed)", "files", "graphql", "pulls/comments (repo-wide)",
              "issues/comments (repo-wide)", "review_comments", "issue_comments", "reviews", "issue")
WEEK = Window(datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))


def records(n: int) -> list[dict[str, Any]]:
    """The week, plus what a real repo has around it: PRs merged the next days and closed-unmerged ones."""
    week = synthetic_week(n, repo=REPO, since=WEEK.since, seed=n)
    after = synthetic_week(n // 5, repo=REPO, since=WEEK.until, days=2, seed=n + 1, first_number=20_000 + n * 10)
    closed = synthetic_week(n // 10, repo=REPO, since=WEEK.since, seed=n + 2, first_number=30_000 + n * 10)
    for r in closed:
        r["closed_at"], r["merged_at"] = r["merged_at"], None
    for r in after:
        r["updated_at"] = iso(WEEK.until + timedelta(days=2, hours=1))
    return week + after + closed


class Server:
    """The local GitHub server in its own process, so its CPU and memory are not the collector's."""

    def __init__(self, data: Path, latency: float, git_dir: Path | None = None, graphql: bool = True) -> None:
        extra = (["--git-dir", str(git_dir)] if git_dir else []) + ([] if graphql else ["--no-graphql"])
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.github_server", "--jsonl", str(data), "--repo", REPO,
             "--token", TOKEN, "--latency", str(latency), *extra], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.url = self.proc.stdout.readline().strip()  # type: ignore[union-attr]

    def stats(self) -> dict[str, Any]:
        with urllib.request.urlopen(f"{self.url}/_test/stats") as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.url}/_test/reset", method="POST")).read()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def naive(url: str) -> list[PullRequest]:
    """The loop the issue compares against: list closed PRs, then files and both comment lists per PR."""
    gh = Github(base_url=url, auth=Auth.Token(TOKEN), per_page=100, retry=default_retry(backoff_factor=0.01),
                seconds_between_requests=None)
    prs = []
    for p in gh.get_repo(REPO).get_pulls(state="closed", sort="updated", direction="desc"):
        if p.updated_at < WEEK.since:
            break
        if p.merged_at is None or p.merged_at not in WEEK:
            continue
        files = [FileChange(path=f.filename, additions=f.additions, deletions=f.deletions, status=f.status)
                 for f in p.get_files()]
        remarks = [ReviewComment(author=c.user.login if c.user else None, body=c.body, path=c.path)
                   for c in p.get_review_comments()]
        remarks += [ReviewComment(author=c.user.login if c.user else None, body=c.body)
                    for c in p.get_issue_comments()]
        prs.append(PullRequest(number=p.number, url=p.html_url, title=p.title, author=p.user.login if p.user else None,
                               merged_at=p.merged_at, body=p.body or "", files=files, review_comments=remarks,
                               additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files)))
    gh.close()
    return prs


def measure(n: int, workdir: Path, concurrency: int, latency: float, naive_loop: bool = True) -> dict[str, Any]:
    data = workdir / f"week-{n}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in records(n)), encoding="utf-8")
    server = Server(data, latency)
    try:
        routes: dict[str, dict[str, int]] = {}

        def run(state: Path, discussion: bool = True, label: str = "") -> tuple[list[PullRequest], float, int]:
            server.reset()
            src = GitHubSource(REPO, token=TOKEN, base_url=server.url, state=LazyStore(state), concurrency=concurrency,
                               retry=default_retry(backoff_factor=0.01), discussion=discussion)
            started = time.perf_counter()
            prs = src.collect(WEEK)
            if label:
                routes[label] = dict(src.stats.routes)
            return prs, time.perf_counter() - started, server.stats()["requests"]

        # Median of three runs each: the machine is shared and noisy.
        colds = [run(workdir / f"state-{n}-{i}.sqlite", label="cold" if i == 0 else "") for i in range(3)]
        warms = [run(workdir / f"state-{n}-0.sqlite", label="warm") for _ in range(3)]
        _, _, bare_req = run(workdir / f"state-{n}-bare.sqlite", discussion=False, label="cold, --no-discussion")
        _, _, switched_req = run(workdir / f"state-{n}-bare.sqlite", label="then with the discussion")
        cold, _, cold_req = colds[0]
        assert len(cold) == n and all(w[0] == cold for w in warms), (len(cold), n)
        cold_s = statistics.median(c[1] for c in colds)
        warm_s, warm_req = statistics.median(w[1] for w in warms), max(w[2] for w in warms)

        tracemalloc.start()
        run(workdir / f"state-{n}-mem.sqlite")
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()

        naive_s, naive_req = float("nan"), 0
        if naive_loop:
            server.reset()
            started = time.perf_counter()
            naive_prs = naive(server.url)
            naive_s = time.perf_counter() - started
            naive_req = server.stats()["requests"]
            assert sorted(p.number for p in naive_prs) == sorted(p.number for p in cold)
    finally:
        server.stop()
    return {"n": n, "cold_s": cold_s, "cold_req": cold_req, "warm_s": warm_s, "warm_req": warm_req,
            "peak_mb": peak / 2**20, "naive_s": naive_s, "naive_req": naive_req, "bare_req": bare_req,
            "switched_req": switched_req, "routes": routes}


def measure_git(n: int, workdir: Path, concurrency: int, latency: float) -> dict[str, Any]:
    """A cold ``--git`` collection of the week (the discussion on), then three warm ones on the same state: the
    requests the server served (asserted equal to the collector's count), by route, and the wall time."""
    recs = records(n)
    git_dir = workdir / f"git-week-{n}.git"
    build_week_git(recs, git_dir)  # sets each merged record's merge_commit, served as merge_commit_sha
    data = workdir / f"git-week-{n}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    clone = open_clone(str(git_dir), state_dir=workdir / f"git-clones-{n}")
    server = Server(data, latency)
    runs: list[dict[str, Any]] = []
    try:
        state = workdir / f"git-state-{n}.sqlite"
        for label in ("cold", "warm", "warm", "warm"):
            server.reset()
            with LazyStore(state) as lazy:
                src = GitHubSource(REPO, token=TOKEN, base_url=server.url, state=lazy, concurrency=concurrency,
                                   retry=default_retry(backoff_factor=0.01), upstream=lambda: clone)
                started = time.perf_counter()
                prs = src.collect(WEEK)
                seconds = time.perf_counter() - started
            served = server.stats()["requests"]
            assert served == src.stats.requests, (served, src.stats.requests)  # every request counted
            # every PR's files from the clone: no file list asked
            assert len(prs) == n and all(pr.merge_commit for pr in prs) and not src.stats.routes["files"]
            assert not runs or prs == runs[0]["prs"]
            runs.append({"label": label, "requests": served, "seconds": seconds, "routes": dict(src.stats.routes),
                         "prs": prs})
    finally:
        server.stop()
    warm = runs[1:]
    return {"n": n, "runs": [
        {**runs[0], "prs": None},
        {"label": "warm", "requests": max(r["requests"] for r in warm),
         "seconds": statistics.median(r["seconds"] for r in warm), "routes": warm[0]["routes"], "prs": None}]}


def git_table(rows: list[dict[str, Any]], latency: float) -> str:
    """The section's ``--git`` part: requests per PR against issue 38's targets, then by route."""
    lines = ["With `--git` (the files and the prompt's hunks from a clone of the upstream, the discussion on; "
             "issue 38's targets: ≤ 1.2 requests per PR cold, ≤ 0.02 warm):", "",
             "| PRs | run | requests (/PR) | target (/PR) | met | wall s |", "| ---: | --- | ---: | ---: | :---: | ---: |"]
    for r in rows:
        n = r["n"]
        for run in r["runs"]:
            target = GIT_TARGETS[run["label"]]
            per_pr = run["requests"] / n
            lines.append(f"| {n} | {run['label']} | {run['requests']} ({per_pr:.3f}) | {target} "
                         f"| {'yes' if per_pr <= target else 'no'} | {run['seconds']:.2f} |")
    lines += ["", "Their requests by route (the collector's own count, equal to the server's):", "",
              "| PRs | run | " + " | ".join(GIT_ROUTES) + " |", "| ---: | --- |" + " ---: |" * len(GIT_ROUTES)]
    for r in rows:
        for run in r["runs"]:
            lines.append(f"| {r['n']} | {run['label']} | " + " | ".join(str(run["routes"].get(k, 0))
                                                                     for k in GIT_ROUTES) + " |")
    return "\n".join(lines) + (
        "\n\nThe same synthetic week (and the PRs merged after it and the closed-unmerged ones around it), its merge "
        "commits in a git repository given to `--git` as a folder (no fetch). Cold: the repository check, the search, "
        "the closed-PR list for each PR's merge commit sha (100 a page, back to the window's start; every PR's commit "
        "is in the clone, so no file list is asked), and the discussion as above (GraphQL 50 PRs a query, the "
        "repo-wide listings). Warm (the largest of three runs' requests, their median wall time): the repository "
        "check and the search pages only; each PR's merge commit sha is kept in the state store by the cold run, "
        "so the closed PRs are not listed again (before it was kept for `--git` too, every warm `--git` run listed "
        "them again: at 300 PRs 8 requests, 0.027 a PR, measured with this benchmark before the change). "
        f"Server latency {1000 * latency:.0f} ms a request, as above.")


def table(rows: list[dict[str, Any]], concurrency: int, latency: float) -> str:
    lines = [
        "| PRs | cold requests (/PR) | cold wall s (ms/PR) | warm requests (/PR) | warm wall s | peak MB (cold) "
        "| cold `--no-discussion` (/PR) | then with the discussion (/PR) "
        "| naive requests (/PR) | naive wall s | naive/ours requests, cold | naive/ours wall, cold "
        "| naive/ours requests, re-run |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        n = r["n"]
        naive = (f"| {r['naive_req']} ({r['naive_req'] / n:.2f}) | {r['naive_s']:.2f} "
                 f"| {r['naive_req'] / r['cold_req']:.2f}× | {r['naive_s'] / r['cold_s']:.1f}× "
                 f"| {r['naive_req'] / max(r['warm_req'], 1):.0f}× |") if r["naive_req"] else "| – | – | – | – | – |"
        lines.append(
            f"| {n} | {r['cold_req']} ({r['cold_req'] / n:.2f}) | {r['cold_s']:.2f} ({1000 * r['cold_s'] / n:.1f}) "
            f"| {r['warm_req']} ({r['warm_req'] / n:.3f}) | {r['warm_s']:.2f} | {r['peak_mb']:.1f} "
            f"| {r['bare_req']} ({r['bare_req'] / n:.2f}) | {r['switched_req']} ({r['switched_req'] / n:.3f}) "
            + naive)
    lines += ["", "Requests by route (the collector's own count, equal to the server's):", "",
              "| PRs | run | " + " | ".join(ROUTES) + " |", "| ---: | --- |" + " ---: |" * len(ROUTES)]
    for r in rows:
        for label, counts in r["routes"].items():
            lines.append(f"| {r['n']} | {label} | " + " | ".join(str(counts.get(k, 0)) for k in ROUTES) + " |")
    first, last = rows[0], rows[-1]
    scale = (last["cold_s"] / last["n"]) / (first["cold_s"] / first["n"])
    return "\n".join(lines) + (
        f"\n\nScaling: ms per PR at {last['n']} PRs is {scale:.2f}× that at {first['n']} (1.00 = linear). "
        f"Concurrency {concurrency} workers, each with its own PyGithub client; no pacing on loopback; "
        f"the server adds {1000 * latency:.0f} ms to every request (a stand-in for the network)."
        "\nCold requests = 1 repository check + search pages (100 per page) + per PR: files (1 per 100 files); "
        "for the week: GraphQL queries (reviews, linked issues and each PR's count of inline comments, 50 PRs a "
        "query) and the repo-wide listings of inline review comments and conversation comments (100 a page, "
        "newest first, read back while they complete PRs, within a page per 4 PRs); a PR the listings do not "
        "complete asks for its own. "
        "Warm = repository check + search pages only: every PR's `updated_at` matches the store. "
        "\"Then with the discussion\": the same state after a `--no-discussion` run; only the discussion is asked."
        "\nThe naive loop (`get_pulls(state=\"closed\", sort=\"updated\")`, then `get_files()`, "
        "`get_review_comments()`, `get_issue_comments()` per PR) also walks the PRs merged after the week and "
        "the closed-unmerged ones, and has no cache: its warm run costs what its cold run does."
        "\nWith production pacing (600 requests/min across workers, search 30/min) a cold 1,000-PR week needs "
        f"at least {last['cold_req'] / 10:.0f} s of pacing"
        + (f"; PyGithub's default 0.25 s per request would make the naive loop at least "
           f"{last['naive_req'] * 0.25:.0f} s." if last["naive_req"] else "."))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=0.01,
                        help="seconds the server adds to each request (api.github.com: ~0.1-0.3)")
    parser.add_argument("--no-naive", action="store_true", help="skip the naive PyGithub loop")
    parser.add_argument("--facts-sizes", type=int, nargs="*", default=[300],
                        help="weeks also collected with their full-file facts (none: skip)")
    parser.add_argument("--git-sizes", type=int, nargs="*", default=[300],
                        help="weeks also collected with --git and the discussion, cold and warm (none: skip)")
    parser.add_argument("--write", action="store_true", help="replace the GitHub collection section of BENCHMARKS.md")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        measure(20, Path(tmp), args.concurrency, args.latency, False)  # warm-up: imports, first connections
        if args.facts_sizes:  # and the facts engine's
            measure_facts(20, records(20), Path(tmp), args.concurrency, WEEK, REPO, TOKEN,
                          lambda data, git_dir, graphql: Server(data, args.latency, git_dir, graphql))
        rows = [measure(n, Path(tmp), args.concurrency, args.latency, not args.no_naive) for n in args.sizes]
        facts = [measure_facts(n, records(n), Path(tmp), args.concurrency, WEEK, REPO, TOKEN,
                               lambda data, git_dir, graphql: Server(data, args.latency, git_dir, graphql))
                 for n in args.facts_sizes]
        gits = [measure_git(n, Path(tmp), args.concurrency, args.latency) for n in args.git_sizes]
    command = ".venv/bin/python -m benchmarks.github_collect " + " ".join(sys.argv[1:])
    body = (f"Command: `{command.strip()}` (load average {load:.1f} before, {os.getloadavg()[0]:.1f} after, "
            f"{os.cpu_count()} CPUs)\n\n{table(rows, args.concurrency, args.latency)}"
            + (f"\n\n{facts_table(facts, args.latency)}" if facts else "")
            + (f"\n\n{git_table(gits, args.latency)}" if gits else ""))
    print(body)
    if args.write:
        write_section("GitHub collection", body)


if __name__ == "__main__":
    main()
