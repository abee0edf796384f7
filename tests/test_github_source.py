"""The GitHub source: real PyGithub over real HTTP against the local GitHub server in tests/servers."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from prdigest.collect.github import GitHubSource
from prdigest.collect.github.client import Clients, default_retry
from prdigest.collect.github.search import search_merged
from prdigest.collect.sources import JsonlSource
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, SourceError
from prdigest.kernel.models import FileChange, PullRequest
from prdigest.kernel.progress import reporting
from prdigest.kernel.window import Window
from prdigest.pipeline.compose import RunOptions, make_source
from prdigest.state.store import LazyStore
from tests.conftest import SAMPLE
from tests.servers.github_data import patch_text
from tests.servers.github_server import (
    Faults,
    GitHubServer,
    GitHubState,
    PrimaryLimit,
    decoys,
    load_jsonl,
    make_state,
    synthetic_week,
)

REPO = "vllm-project/vllm"
TOKEN = "ghp_test-token-never-shown-0123456789"
WEEK = Window(datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc))


def fast_retry(**overrides: Any):
    """The production retry policy with waits scaled down to milliseconds."""
    kwargs = {"backoff_factor": 0.001, "secondary_rate_wait": 0.01, "max_rate_limit_wait": 5.0, "total": 8}
    return default_retry(**{**kwargs, **overrides})


@pytest.fixture
def serve() -> Iterator:
    """Start a GitHub server over the given records; every server started is stopped after the test."""
    servers: list[GitHubServer] = []

    def start(records: list[dict[str, Any]], repo: str = REPO, **kwargs: Any) -> GitHubServer:
        kwargs.setdefault("token", TOKEN)
        server = GitHubServer(make_state(records, repo, **kwargs)).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def fixture_records() -> list[dict[str, Any]]:
    return load_jsonl(SAMPLE) + decoys(REPO, WEEK.since, WEEK.until)


def source(server: GitHubServer, state: Path | sqlite3.Connection, **kwargs: Any) -> GitHubSource:
    kwargs.setdefault("token", TOKEN)
    kwargs.setdefault("retry", fast_retry())
    kwargs.setdefault("concurrency", 4)
    store = LazyStore(state) if isinstance(state, (str, Path)) else state
    return GitHubSource(kwargs.pop("repo", REPO), base_url=server.url, state=store, **kwargs)


def st(server: GitHubServer) -> GitHubState:
    return server.state


def _same_edition_view(pr: PullRequest) -> dict[str, Any]:
    """What an edition is made of, as both sources can supply it (the JSONL has no diff hunks)."""
    return {
        "number": pr.number, "url": pr.url, "title": pr.title, "author": pr.author, "body": pr.body,
        "labels": pr.labels, "created_at": pr.created_at, "merged_at": pr.merged_at,
        "additions": pr.additions, "deletions": pr.deletions,
        "files": [(f.path, f.additions, f.deletions, f.status) for f in pr.files],
        "comments": [(c.author, c.body) for c in pr.review_comments],
        "conversation": [(c.author, c.body) for c in pr.comments],
    }


# ---- completeness and equivalence ---------------------------------------------------------------------
@pytest.mark.slow  # among the slowest (pytest --durations)
def test_collects_every_fixture_pr_and_none_of_the_decoys(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    prs = source(server, tmp_path / "s.sqlite").collect(WEEK)
    expected = {r["number"] for r in load_jsonl(SAMPLE)}
    assert {pr.number for pr in prs} == expected
    assert [pr.number for pr in prs] == [pr.number for pr in sorted(prs, key=lambda p: (p.merged_at, p.number))]
    assert not {900_000, 900_001, 900_002} & st(server).numbers_fetched()


def test_github_source_yields_the_same_prs_as_the_jsonl_source(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    from_github = source(server, tmp_path / "s.sqlite").collect(WEEK)
    from_jsonl = JsonlSource(SAMPLE).collect(WEEK)
    assert [_same_edition_view(p) for p in from_github] == [_same_edition_view(p) for p in from_jsonl]


def test_cold_run_with_the_discussion_is_the_files_and_a_few_batched_requests(serve, fixture_records,
                                                                               tmp_path: Path) -> None:
    server = serve(fixture_records)
    src = source(server, tmp_path / "s.sqlite")
    prs = src.collect(WEEK)
    assert st(server).requests == src.stats.requests == sum(src.stats.routes.values())
    kinds = st(server).stats()["kinds"]
    # the files, one request a PR; reviews and linked issues in one GraphQL query per 50 PRs; the inline
    # comments from the repo-wide listing, except PRs whose remarks it does not reach (this fixture's server
    # dates a PR's remarks at its creation, up to 2.7 years before the merge: 14 PRs ask for their own)
    assert kinds["files"] == len(prs) and kinds["graphql"] == 2 and kinds["repo_review_comments"] == 1
    assert not {"reviews", "issue"} & set(kinds) and kinds.get("review_comments", 0) <= 14
    assert st(server).requests / len(prs) <= 1.4  # 4.97 before, on the same fixture 3.4
    assert src.stats.routes["graphql"] == 2 and src.stats.routes["pulls/comments (repo-wide)"] == 1


def test_no_discussion_asks_for_no_review_conversation_or_issue(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    src = source(server, tmp_path / "s.sqlite", discussion=False)
    prs = src.collect(WEEK)
    kinds = st(server).stats()["kinds"]
    assert st(server).requests == src.stats.requests <= 2 + 2 * len(prs)
    assert not {"reviews", "issue_comments", "repo_issue_comments", "graphql", "issue", "not_found"} & set(kinds)
    assert not any(pr.reviews or pr.comments or pr.linked_issues for pr in prs)


def test_switching_the_discussion_or_git_fetches_only_what_is_missing(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    state = tmp_path / "s.sqlite"
    without = source(server, state, discussion=False).collect(WEEK)
    st(server).reset_counters()
    with_discussion = source(server, state).collect(WEEK)  # the files and inline comments are kept
    assert st(server).stats()["kinds"] == {"repo": 1, "search": 1, "graphql": 2}
    st(server).reset_counters()
    assert source(server, state, discussion=False).collect(WEEK) == without and st(server).requests == 2
    assert source(server, tmp_path / "cold.sqlite").collect(WEEK) == with_discussion  # as a cold run has it


@pytest.mark.parametrize(("merged_at", "collected"), [
    (WEEK.since, True),                               # exactly at since: in
    (WEEK.since - timedelta(seconds=1), False),       # a second early: out
    (WEEK.until - timedelta(seconds=1), True),        # the last second: in
    (WEEK.until, False),                              # exactly at until: out
])
def test_window_is_half_open_to_the_second(serve, tmp_path: Path, merged_at: datetime, collected: bool) -> None:
    records = synthetic_week(3, repo=REPO, since=WEEK.since + timedelta(days=1), days=1)
    edge = {**records[0], "number": 1, "url": f"https://github.com/{REPO}/pull/1",
            "merged_at": merged_at.isoformat(), "updated_at": merged_at.isoformat()}
    server = serve(records + [edge])
    numbers = {pr.number for pr in source(server, tmp_path / "s.sqlite").collect(WEEK)}
    assert (1 in numbers) is collected
    assert {r["number"] for r in records} <= numbers


def test_sub_second_window_bounds_filter_exactly(serve, tmp_path: Path) -> None:
    records = synthetic_week(4, repo=REPO, since=WEEK.since, days=1)
    server = serve(records)
    merged = sorted(datetime.fromisoformat(r["merged_at"]) for r in records)
    window = Window(merged[1] - timedelta(microseconds=1), merged[2] + timedelta(microseconds=1))
    prs = source(server, tmp_path / "s.sqlite").collect(window)
    assert [pr.merged_at for pr in prs] == merged[1:3]


# ---- big PRs, big weeks ------------------------------------------------------------------------------
def test_pr_with_more_than_100_files_is_paged_completely(serve, tmp_path: Path) -> None:
    records = synthetic_week(2, repo=REPO, since=WEEK.since, big_files={0: 250})
    server = serve(records)
    prs = source(server, tmp_path / "s.sqlite").collect(WEEK)
    big = next(pr for pr in prs if pr.number == records[0]["number"])
    assert [f.path for f in big.files] == [f["path"] for f in records[0]["files"]]
    assert big.additions == sum(f["additions"] for f in records[0]["files"])
    assert not big.files_truncated
    assert st(server).stats()["kinds"]["files"] == 3 + 1


def test_a_description_and_comments_over_githubs_limit_are_capped_when_collected(serve, tmp_path: Path) -> None:
    # GitHub itself stores at most 65,536 characters; an Enterprise server, a proxy or a mirror may not.
    records = synthetic_week(1, repo=REPO, since=WEEK.since)
    records[0]["body"] = "x" * 3_000_000 + "TAIL"
    records[0]["review_comments"] = [{"author": "r", "body": "y" * 100_000}]
    (pr,) = source(serve(records), tmp_path / "s.sqlite").collect(WEEK)
    assert len(pr.body) == 65_536 and "TAIL" not in pr.body
    assert all(len(c.body) <= 65_536 for c in pr.review_comments)


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_pr_over_githubs_3000_file_limit_records_the_truncation(serve, tmp_path: Path) -> None:
    records = synthetic_week(1, repo=REPO, since=WEEK.since, big_files={0: 3100})
    server = serve(records)
    (pr,) = source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert len(pr.files) == 3000 and pr.files_truncated
    assert pr.additions == sum(f["additions"] for f in records[0]["files"])  # totals from /pulls/N, not the list


def test_diff_hunks_kept_for_the_most_telling_files_within_the_budget(serve, tmp_path: Path) -> None:
    from prdigest.kernel.prtext.pointing import ranked

    records = synthetic_week(1, repo=REPO, since=WEEK.since, big_files={0: 30})
    server = serve(records)
    (pr,) = source(server, tmp_path / "s.sqlite", patch_budget=2000).collect(WEEK)
    expected, left = set(), 2000
    # the prompt's order (code first, then what the title and body name, then the most changed), not size alone
    order = ranked([FileChange(path=f["path"], additions=f["additions"], deletions=f["deletions"])
                    for f in records[0]["files"]], records[0]["title"], records[0]["body"])
    for f in ({"path": c.path, "additions": c.additions, "deletions": c.deletions} for c in order):
        size = len(patch_text(f["additions"], f["deletions"]))
        if size <= left:
            expected.add(f["path"])
            left -= size
    kept = [f for f in pr.files if f.patch]
    assert {f.path for f in kept} == expected and 0 < sum(len(f.patch or "") for f in kept) <= 2000


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_window_over_the_1000_result_cap_is_split_until_complete(serve) -> None:
    records = synthetic_week(2300, repo=REPO, since=WEEK.since)
    server = serve(records)
    clients = Clients(server.url, TOKEN, retry=fast_retry(), timeout=10, seconds_between_requests=None)
    try:
        hits, requests = search_merged(clients, clients.make(None), REPO, WEEK)
    finally:
        clients.close()
    assert [h.number for h in hits] == [r["number"] for r in records]
    assert requests == st(server).stats()["kinds"]["search"] <= 2300 // 100 + 6


# ---- faults, limits, resume ----------------------------------------------------------------------
@pytest.mark.slow  # among the slowest (pytest --durations)
def test_fault_injected_run_still_collects_every_pr(serve, fixture_records, tmp_path: Path) -> None:
    clean = serve(fixture_records)
    expected = [_same_edition_view(p) for p in source(clean, tmp_path / "clean.sqlite").collect(WEEK)]
    # rates high enough that each fault is met in the ~80 requests a cold run of this week makes
    faulty = serve(fixture_records, faults=Faults(rate_502=0.15, rate_secondary=0.08, rate_429=0.05, seed=3))
    prs = source(faulty, tmp_path / "faulty.sqlite").collect(WEEK)
    assert [_same_edition_view(p) for p in prs] == expected
    statuses = st(faulty).stats()["statuses"]
    assert statuses.get(502, 0) >= 5 and statuses.get(403, 0) >= 2 and statuses.get(429, 0) >= 1


def test_persistent_outage_stops_with_one_line_and_keeps_what_was_stored(serve, fixture_records,
                                                                          tmp_path: Path) -> None:
    server = serve(fixture_records, faults=Faults(outage_after=40))
    state = tmp_path / "s.sqlite"
    with pytest.raises(SourceError) as caught:
        source(server, state, retry=fast_retry(total=2)).collect(WEEK)
    message = str(caught.value)
    assert "\n" not in message and "HTTP 502" in message and "re-run" in message
    stored = sqlite3.connect(state).execute("SELECT COUNT(*) FROM github_pulls").fetchone()[0]
    assert 5 <= stored < 58


def test_run_killed_midway_resumes_without_refetching_stored_prs(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    state = tmp_path / "s.sqlite"

    def kill_after_20(step: str, done: int, total: int) -> None:
        if done >= 20:
            raise KeyboardInterrupt  # what Ctrl-C or a killed worker looks like to the collector

    with reporting(kill_after_20), pytest.raises(KeyboardInterrupt):
        source(server, state).collect(WEEK)
    conn = sqlite3.connect(state)
    stored = {n for (n,) in conn.execute("SELECT number FROM github_pulls")}
    rows = conn.execute("SELECT pr_json FROM github_pulls").fetchall()
    assert len(stored) == 20 and all(PullRequest.model_validate_json(r[0]) for r in rows)

    st(server).reset_counters()
    src = source(server, state)
    prs = src.collect(WEEK)
    assert len(prs) == 58 and src.stats.reused == 20 and src.stats.fetched == 38
    assert not stored & st(server).numbers_fetched()


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_process_killed_with_sigkill_resumes_and_nothing_stored_is_half_written(serve, fixture_records,
                                                                               tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    server = serve(fixture_records, latency=0.03)
    state = tmp_path / "s.sqlite"
    script = ("import sys; from datetime import datetime, timezone; from pathlib import Path;"
              "from prdigest.collect.github import GitHubSource; from prdigest.kernel.window import Window;"
              "w = Window(datetime(2026, 11, 16, tzinfo=timezone.utc), datetime(2026, 11, 23, tzinfo=timezone.utc));"
              "from prdigest.state.store import LazyStore;"
              "GitHubSource(sys.argv[1], token=sys.argv[2], base_url=sys.argv[3], state=LazyStore(Path(sys.argv[4])),"
              " concurrency=2).collect(w)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "DIGEST_"))}
    proc = subprocess.Popen([sys.executable, "-c", script, REPO, TOKEN, server.url, str(state)],
                            cwd=Path(__file__).resolve().parents[1], env=env)
    stored = 0
    deadline = time.monotonic() + 30
    while stored < 10 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
        if state.exists():
            try:
                stored = sqlite3.connect(state).execute("SELECT COUNT(*) FROM github_pulls").fetchone()[0]
            except sqlite3.OperationalError:
                pass  # the table is not created yet
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert proc.returncode == -signal.SIGKILL, "the collector finished before it could be killed"

    rows = sqlite3.connect(state).execute("SELECT number, pr_json FROM github_pulls").fetchall()
    kept = {number for number, _ in rows}
    assert 10 <= len(kept) < 58
    assert all(PullRequest.model_validate_json(pr_json).number == number for number, pr_json in rows)
    st(server).reset_counters()
    src = source(server, state)
    assert len(src.collect(WEEK)) == 58 and src.stats.reused == len(kept)
    assert not kept & st(server).numbers_fetched()


def test_warm_rerun_makes_almost_no_requests(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    state = tmp_path / "s.sqlite"
    cold = source(server, state).collect(WEEK)
    st(server).reset_counters()
    warm = source(server, state).collect(WEEK)
    assert warm == cold
    assert st(server).requests / len(warm) <= 0.05
    assert st(server).stats()["kinds"] == {"repo": 1, "search": 1}


def test_changed_pr_is_refetched_with_conditional_requests(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    state = tmp_path / "s.sqlite"
    source(server, state).collect(WEEK)
    pr = st(server).prs[56269]
    pr.updated_at += timedelta(hours=1)
    pr.issue_comments.append({"author": "late-reviewer", "body": "a remark after the merge"})
    st(server).reset_counters()
    prs = source(server, state).collect(WEEK)
    changed = next(p for p in prs if p.number == 56269)
    assert changed.comments[-1].body == "a remark after the merge"
    log = st(server).stats()["log"]
    per_pr = [(path, status) for path, status in log if "/56269" in path]
    assert per_pr == [("/repos/vllm-project/vllm/pulls/56269/files?per_page=100", 304)]  # files unchanged: 304
    # the rest from the week's batched requests: GraphQL (reviews, issues, counts), the conversation listing
    assert st(server).stats()["kinds"] == {"repo": 1, "search": 1, "files": 1, "graphql": 1,
                                           "repo_issue_comments": 1}


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_prs_stored_with_another_hunk_budget_fetch_their_files_again_and_nothing_else(serve, fixture_records,
                                                                                      tmp_path: Path) -> None:
    server = serve(fixture_records)
    state = tmp_path / "s.sqlite"
    source(server, state).collect(WEEK)
    st(server).reset_counters()
    src = source(server, state, patch_budget=2_000)
    src.collect(WEEK)
    assert src.stats.fetched == 58 and st(server).stats()["kinds"] == {"repo": 1, "search": 1, "files": 58}


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_primary_rate_limit_with_a_short_reset_is_waited_out(serve, tmp_path: Path) -> None:
    records = synthetic_week(4, repo=REPO, since=WEEK.since)
    server = serve(records, primary=PrimaryLimit(limit=8, reset_in=1.0))
    prs = source(server, tmp_path / "s.sqlite", concurrency=1).collect(WEEK)
    assert len(prs) == 4
    assert st(server).stats()["kinds"].get("primary", 0) >= 1


def test_primary_rate_limit_far_off_stops_saying_when_to_retry(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records, primary=PrimaryLimit(limit=30, reset_in=3600))
    with pytest.raises(SourceError) as caught:
        source(server, tmp_path / "s.sqlite", retry=fast_retry(max_rate_limit_wait=2)).collect(WEEK)
    message = str(caught.value)
    assert "rate limit" in message and "retry after" in message and "UTC" in message and "\n" not in message


# ---- Enterprise, bad input, secrets --------------------------------------------------------------
@pytest.mark.slow  # among the slowest (pytest --durations)
def test_enterprise_base_url_with_api_v3_prefix(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records, prefix="/api/v3")
    assert server.url.endswith("/api/v3")
    prs = source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert len(prs) == 58
    # REST under /api/v3, GraphQL at /api/graphql, as GitHub Enterprise Server serves them
    assert all(path.startswith("/api/v3/") or path == "/api/graphql" for path in st(server).paths())
    assert "/api/graphql" in st(server).paths()


@pytest.mark.parametrize(("kwargs", "error", "words"), [
    ({"token": "ghp_wrong-token-0000"}, ConfigError, ["rejected the token", "GITHUB_TOKEN"]),
    ({"repo": "vllm-project/no-such-repo"}, ConfigError, ["vllm-project/no-such-repo", "not found", "--repo"]),
])
def test_bad_token_or_unknown_repo_stops_with_one_clear_line(serve, fixture_records, tmp_path: Path, caplog,
                                                              kwargs: dict[str, Any], error: type,
                                                              words: list[str]) -> None:
    server = serve(fixture_records)
    with caplog.at_level(logging.DEBUG), pytest.raises(error) as caught:
        source(server, tmp_path / "s.sqlite", **kwargs).collect(WEEK)
    message = str(caught.value)
    assert all(w in message for w in words) and "\n" not in message
    for secret in (TOKEN, "ghp_wrong-token-0000"):
        assert secret not in message and secret not in caplog.text


def test_unreachable_url_stops_with_one_clear_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    src = GitHubSource(REPO, token=TOKEN, base_url=f"http://127.0.0.1:{port}", state=LazyStore(tmp_path / "s.sqlite"),
                       retry=fast_retry(total=2))
    with pytest.raises(SourceError) as caught:
        src.collect(WEEK)
    assert "cannot reach GitHub" in str(caught.value) and "--github-url" in str(caught.value)
    assert TOKEN not in str(caught.value) and TOKEN not in repr(src)


def test_since_after_until_is_refused_before_any_request() -> None:
    with pytest.raises(ConfigError, match="must be before"):
        Window.from_flags("2026-11-23", "2026-11-16")


@pytest.mark.parametrize(("options", "env", "words"), [
    ({"source": "github"}, {"GITHUB_TOKEN": TOKEN}, "--repo"),
    ({"source": "github", "repo": REPO}, {}, "GITHUB_TOKEN"),
])
def test_make_source_names_what_is_missing(monkeypatch, options: dict[str, str], env: dict[str, str],
                                           words: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=words):
        make_source(RunOptions(**options), Settings())


def test_make_source_builds_the_github_source_from_settings(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    settings = Settings(github_url="https://ghe.example.com/api/v3", state=tmp_path / "s.sqlite",
                        github_concurrency=3)
    src = make_source(RunOptions(source="github", repo=REPO), settings, LazyStore(settings.state))
    assert isinstance(src, GitHubSource) and src.repo == REPO and src.concurrency == 3
    assert src.base_url == "https://ghe.example.com/api/v3" and src.requests_per_minute == 600
    assert TOKEN not in repr(src)


# ---- remarks ----------------------------------------------------------------------------------------
def test_inline_review_comments_reviews_and_ghost_authors(serve, tmp_path: Path) -> None:
    records = synthetic_week(1, repo=REPO, since=WEEK.since)
    path = records[0]["files"][0]["path"]
    records[0].update(author=None, review_comments=[], comments=[{"author": None, "body": "conversation"}],
                      inline_comments=[{"author": "rev", "body": "inline nit", "path": path}],
                      reviews=[{"author": "rev", "body": "LGTM with one nit", "state": "APPROVED"},
                               {"author": "rev2", "body": "", "state": "APPROVED"},
                               {"author": "rev3", "body": "", "state": "COMMENTED"}])
    server = serve(records)
    (pr,) = source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert pr.author == "ghost"
    assert [(c.author, c.body, c.path) for c in pr.review_comments] == [("rev", "inline nit", path)]
    assert [(c.author, c.body) for c in pr.comments] == [("ghost", "conversation")]
    # An approval without a summary is kept (it says who approved); an empty COMMENTED review is a container.
    assert [(r.author, r.state, r.body) for r in pr.reviews] == [("rev", "APPROVED", "LGTM with one nit"),
                                                                 ("rev2", "APPROVED", "")]
    assert st(server).stats()["kinds"]["graphql"] == 1 and "reviews" not in st(server).stats()["kinds"]


def test_bots_are_left_out_of_the_discussion(serve, tmp_path: Path) -> None:
    records = synthetic_week(1, repo=REPO, since=WEEK.since)
    records[0].update(comments=[{"author": "github-actions[bot]", "body": "CI report: all green"},
                                {"author": "mergify", "body": "This pull request is now in conflict"},
                                {"author": "alice", "body": "Why not reuse the existing pool?"}],
                      review_comments=[{"author": "sonarqubecloud", "body": "Quality gate passed", "path": "a.py"}],
                      reviews=[{"author": "coderabbitai[bot]", "body": "Walkthrough: …", "state": "COMMENTED"},
                               {"author": "bob", "body": "", "state": "APPROVED"}])
    server = serve(records)
    (pr,) = source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert [c.author for c in pr.comments] == ["alice"] and [r.author for r in pr.reviews] == ["bob"]
    assert pr.review_comments == []


def test_the_issues_a_pr_closes_or_names_are_collected_and_prs_among_them_left_to_relations(
        serve, tmp_path: Path) -> None:
    records = synthetic_week(3, repo=REPO, since=WEEK.since)
    other = records[1]["number"]
    records[0]["body"] = (f"Fixes #31913. Follows up #{other}; see also issue #31000 and "
                          f"https://github.com/{REPO}/issues/31001, not other/repo#5 nor `#31002` in code.")
    server = serve(records, issues={31913: {"title": "Crash on start", "body": "x" * 5000, "state": "open"},
                                    31001: {"title": "Docs gap", "body": "", "state": "closed"}})
    prs = source(server, tmp_path / "s.sqlite").collect(WEEK)
    pr = next(p for p in prs if p.number == records[0]["number"])
    assert [(i.number, i.state) for i in pr.linked_issues] == [(31913, "open"), (31001, "closed")]
    assert len(pr.linked_issues[0].body) == 1000  # the opening of the description
    # 31913, 31000 (gone: skipped), 31001, and the PR, which is no issue: all in the week's GraphQL query
    assert not [p for p in st(server).paths() if re.search(r"/issues/\d+(\?|$)", p)]
    assert st(server).stats()["kinds"]["graphql"] == 1
    st(server).reset_counters()
    again = source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert again == prs and st(server).requests == 2  # warm: the repo check and the search


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_progress_is_reported_per_pr(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    seen: list[tuple[str, int, int]] = []
    with reporting(lambda *args: seen.append(args)):
        source(server, tmp_path / "s.sqlite").collect(WEEK)
    assert seen[0] == ("collect", 0, 58) and seen[-1] == ("collect", 58, 58) and len(seen) == 59


def test_cache_schema_is_registered_in_the_state_store(serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    source(server, tmp_path / "s.sqlite").collect(WEEK)
    conn = sqlite3.connect(tmp_path / "s.sqlite")
    assert conn.execute("SELECT version FROM schema_versions WHERE component = 'github'").fetchone() == (1,)
    row = conn.execute("SELECT updated_at, etags_json FROM github_pulls WHERE number = 56269").fetchone()
    assert row[0].startswith("2026-11-16") and set(json.loads(row[1])) >= {"files", "_profile"}


# ---- the issue's "done when": the same edition from GitHub as from the JSONL --------------------------
@pytest.mark.prefect
def test_digest_run_from_github_is_the_same_edition_as_from_jsonl(prefect_api, serve, fixture_records,
                                                                  monkeypatch, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    server = serve(fixture_records)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    window = ["--since", "2026-11-16", "--until", "2026-11-23", "--language", "en"]
    runs = {
        "github": ["--source", "github", "--repo", REPO, "--github-url", server.url,
                   "--state", str(tmp_path / "state.sqlite")],
        "jsonl": ["--source", f"jsonl:{SAMPLE}"],
    }
    digests = {}
    for name, args in runs.items():
        out = tmp_path / name
        result = CliRunner().invoke(app, ["run", *args, *window, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert TOKEN not in result.output
        digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
        for volatile in ("generated_at", "approved_at"):
            digest.pop(volatile, None)
        digests[name] = (digest, sorted(p.name for p in (out / "email").glob("*")))
    assert digests["github"] == digests["jsonl"]
    assert len(digests["github"][0]["entries"]) == 58


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:s3cret@ghe.example.com/api/v3", "https://ghe.example.com/api/v3"),
    ("https://api.github.com", "https://api.github.com"),
    ("http://127.0.0.1:8080/api/v3", "http://127.0.0.1:8080/api/v3"),
])
def test_urls_in_messages_never_carry_credentials(url: str, shown: str) -> None:
    from prdigest.collect.github.client import redact_url

    assert redact_url(url) == shown


@pytest.mark.prefect
def test_digest_run_with_a_bad_token_stops_with_one_clear_line(prefect_api, serve, fixture_records, monkeypatch,
                                                               tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    server = serve(fixture_records)
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_revoked-token-1111")
    result = CliRunner().invoke(app, ["run", "--source", "github", "--repo", REPO, "--github-url", server.url,
                                      "--state", str(tmp_path / "s.sqlite"), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    flat = " ".join(result.output.split())  # the console wraps long lines
    assert "rejected the token" in flat and "GITHUB_TOKEN" in flat and "Traceback" not in result.output
    assert "ghp_revoked-token-1111" not in result.output and not (tmp_path / "o" / "outbox").exists()


@pytest.mark.prefect
def test_token_from_a_prefect_secret_block_and_never_in_the_runs_logs(prefect_api, serve, fixture_records,
                                                                      tmp_path: Path) -> None:
    import asyncio

    from prefect.blocks.system import Secret
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    from flows.edition import digest_edition

    server = serve(fixture_records)
    Secret(value=TOKEN).save("github-token", overwrite=True)
    try:
        state = digest_edition(source="github", repo=REPO, github_url=server.url, since="2026-11-16",
                               until="2026-11-23", out=str(tmp_path / "out"),
                               state=str(tmp_path / "state.sqlite"), return_state=True)
    finally:
        Secret(value="").save("github-token", overwrite=True)  # later tests see no usable block
    summary = state.result()
    assert summary.entries == 58  # GITHUB_TOKEN is unset (clean_env): the block's token got every PR

    async def logs() -> list[str]:
        await APILogHandler.aflush()  # logs are shipped in batches: read them only once all were sent
        async with get_client() as client:
            found = await client.read_logs(LogFilter(flow_run_id=LogFilterFlowRunId(any_=[state.state_details.flow_run_id])))
            return [log.message for log in found]

    messages = asyncio.run(logs())
    assert any("secrets from Prefect Secret blocks: github-token" in m for m in messages)
    assert not any(TOKEN in m for m in messages)


def test_a_github_without_graphql_gives_the_same_prs_with_reviews_and_issues_asked_pr_by_pr(
        serve, fixture_records, tmp_path: Path) -> None:
    server = serve(fixture_records)
    with_graphql = source(server, tmp_path / "a.sqlite").collect(WEEK)
    st(server).graphql = False
    st(server).reset_counters()
    src = source(server, tmp_path / "b.sqlite")
    without = src.collect(WEEK)
    assert without == with_graphql
    assert src.stats.routes["graphql"] == 1 and "/graphql" in st(server).paths()  # one try: 404
    assert st(server).stats()["kinds"]["reviews"] == len(without)  # then REST, PR by PR


def test_a_conversation_from_the_repo_wide_listing_is_each_prs_own(serve, tmp_path: Path) -> None:
    records = synthetic_week(40, repo=REPO, since=WEEK.since)
    server = serve(records)
    prs = source(server, tmp_path / "s.sqlite").collect(WEEK)
    by_number = {r["number"]: r for r in records}
    for pr in prs:
        assert [(c.author, c.body) for c in pr.comments] == [
            (c["author"], c["body"]) for c in by_number[pr.number].get("comments", [])]
        assert [(c.author, c.body) for c in pr.review_comments] == [
            (c["author"], c["body"]) for c in by_number[pr.number].get("inline_comments", [])]
    kinds = st(server).stats()["kinds"]
    assert kinds["repo_issue_comments"] + kinds["repo_review_comments"] <= 4
    assert not {"issue_comments", "review_comments", "reviews"} & set(kinds)


def test_switching_git_off_fetches_only_the_files_the_clone_gave(serve, tmp_path: Path) -> None:
    from prdigest.collect.git import open_clone
    from tests.git_support import build_upstream

    upstream = build_upstream(tmp_path / "up")
    records = [json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})) for pr in upstream.prs]
    server = serve(records)
    state = tmp_path / "s.sqlite"
    clone = open_clone(str(upstream.path), state_dir=tmp_path / "clones")
    with_git = source(server, state, upstream=lambda: clone).collect(WEEK)
    assert len(with_git) == len(records) and "files" not in st(server).stats()["kinds"]  # git gives the files
    st(server).reset_counters()
    without = source(server, state).collect(WEEK)
    assert st(server).stats()["kinds"] == {"repo": 1, "search": 1, "files": len(records)}  # nothing else again
    assert without == source(server, tmp_path / "cold.sqlite").collect(WEEK)  # as a cold run without --git


def test_without_a_token_graphql_refuses_and_reviews_and_issues_come_pr_by_pr_with_a_notice(
        serve, fixture_records, tmp_path: Path, caplog) -> None:
    with_token = source(serve(fixture_records), tmp_path / "a.sqlite").collect(WEEK)
    server = serve(fixture_records, token=None)  # REST answers without a token (GitHub: 60 requests an hour)
    st(server).graphql_needs_token = True  # GraphQL does not: 401
    src = source(server, tmp_path / "b.sqlite", token=None)
    with caplog.at_level(logging.WARNING, logger="prdigest.collect.github"):
        without = src.collect(WEEK)
    assert without == with_token  # the same reviews, conversation and linked issues
    kinds = st(server).stats()["kinds"]
    assert src.stats.routes["graphql"] == 1 and kinds["auth"] == 1  # one refused try, not one per batch
    assert kinds["reviews"] == len(without) and kinds["issue"] > 0  # then REST, PR by PR
    notice = [r.getMessage() for r in caplog.records if "GraphQL" in r.getMessage()]
    assert len(notice) == 1 and "401" in notice[0] and "GITHUB_TOKEN" in notice[0] and server.url in notice[0]


def test_a_warm_git_run_lists_no_closed_pr_for_the_merge_commits(serve, tmp_path: Path) -> None:
    from prdigest.collect.git import open_clone
    from tests.git_support import build_upstream

    upstream = build_upstream(tmp_path / "up")
    records = [json.loads(pr.model_dump_json(exclude={"changes", "facts_source"})) for pr in upstream.prs]
    server = serve(records)
    state = tmp_path / "s.sqlite"
    clone = open_clone(str(upstream.path), state_dir=tmp_path / "clones")
    cold_src = source(server, state, upstream=lambda: clone)
    cold = cold_src.collect(WEEK)
    assert cold_src.stats.routes["pulls (closed)"] == 1 and "files" not in st(server).stats()["kinds"]
    st(server).reset_counters()
    warm_src = source(server, state, upstream=lambda: clone)
    warm = warm_src.collect(WEEK)
    assert warm == cold and {pr.number: pr.merge_commit for pr in warm} == upstream.commits
    assert st(server).stats()["kinds"] == {"repo": 1, "search": 1} and warm_src.stats.requests == 2
    # a PR edited since: its discussion asked again, its files still from the clone, still no list
    edited = st(server).prs[upstream.prs[0].number]
    edited.updated_at += timedelta(hours=1)
    st(server).reset_counters()
    again = source(server, state, upstream=lambda: clone).collect(WEEK)
    assert [p.model_copy(update={"updated_at": None}) for p in again] == [
        p.model_copy(update={"updated_at": None}) for p in warm]
    assert not {"files", "pull_list"} & set(st(server).stats()["kinds"])
