"""The GitHub source: every PR merged into one repo in a window, via PyGithub, cached in the state store."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from urllib3 import Retry

from prdigest.collect.git import CommitDiff
from prdigest.collect.git.argv import sha_problem
from prdigest.collect.git.upstream import present_commits
from prdigest.collect.github.batch import WeekRemarks, week_remarks
from prdigest.collect.github.blobs import BlobReader
from prdigest.collect.github.cache import CachedPR, PullCache
from prdigest.collect.github.client import (
    DEFAULT_REQUESTS_PER_MINUTE,
    SEARCH_REQUESTS_PER_MINUTE,
    Clients,
    default_retry,
    github_errors,
    is_loopback,
)
from prdigest.collect.github.fetch import DEFAULT_PATCH_BUDGET, Fetched, fetch_pr
from prdigest.collect.github.merge_shas import MergeCommits
from prdigest.collect.github.search import Hit, search_merged
from prdigest.kernel.config import DEFAULT_GITHUB_URL
from prdigest.kernel.models import PullRequest
from prdigest.kernel.progress import report
from prdigest.kernel.storage import Store
from prdigest.kernel.window import Window

if TYPE_CHECKING:
    from prdigest.collect.facts.week import CommitReader
    from prdigest.collect.git import UpstreamClone

log = logging.getLogger(__name__)

#: Stored with each PR's ETags: the options it was collected with.
PROFILE_KEY = "_profile"


@dataclass
class CollectStats:
    """What the last ``collect`` did: how many PRs came from the store, how many were fetched, requests made."""

    merged: int = 0
    reused: int = 0
    fetched: int = 0
    search_requests: int = 0
    detail_requests: int = 0
    #: Pages of the closed-PR list read for merge commit shas (with an upstream clone only).
    list_requests: int = 0
    #: Pages of the repo-wide comment listings and GraphQL queries (the week's remarks, reviews and issues).
    batch_requests: int = 0
    seconds: float = 0.0
    per_pr: dict[int, int] = field(default_factory=dict)
    #: Every request by route (``search``, ``files``, ``pulls/comments (repo-wide)``, ``graphql``, …).
    routes: Counter[str] = field(default_factory=Counter)

    #: Requests the facts step made through :meth:`GitHubSource.commit_reader` (merge commits, files before and
    #: after; by route in :attr:`routes` too), counted after ``collect`` returned.
    file_requests: int = 0

    @property
    def requests(self) -> int:
        return (1 + self.search_requests + self.detail_requests + self.list_requests  # 1: the repository check
                + self.batch_requests + self.file_requests)


class GitHubSource:
    """PRs merged into ``repo`` on github.com or GitHub Enterprise (``base_url`` ends in ``/api/v3``).

    Contract (see :class:`prdigest.collect.sources.Source`): ``collect`` returns every PR merged in the window and
    nothing else, sorted by merge time then number; it raises :class:`SourceError` or :class:`ConfigError`
    with one line saying what to fix. Each fetched PR is stored in its own transaction as soon as it arrives,
    so a killed run resumes where it stopped; a PR whose ``updated_at`` matches the stored one costs nothing.

    Pacing: ``requests_per_minute`` (default 600, under GitHub's documented 900-points-a-minute secondary
    limit for REST) is shared by the ``concurrency`` workers by giving each PyGithub client a
    ``seconds_between_requests`` of ``concurrency * 60 / requests_per_minute``; search is paced at its own
    30-a-minute limit. ``None`` disables pacing (PyGithub's own default is 0.25 s per client); the default
    does so for a loopback URL, which is a local mirror or a test stand-in with no secondary limit.
    """

    def __init__(self, repo: str, *, token: str | None, base_url: str = DEFAULT_GITHUB_URL,
                 state: Store | Callable[[], Store], concurrency: int = 8,
                 retry: Retry | None = None, requests_per_minute: float | None | Literal["auto"] = "auto",
                 timeout: float = 30.0, patch_budget: int = DEFAULT_PATCH_BUDGET, discussion: bool = True,
                 upstream: "Callable[[], UpstreamClone | None] | None" = None) -> None:
        self.repo = repo
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._state = state
        self.concurrency = max(1, concurrency)
        self._retry = retry or default_retry()
        if requests_per_minute == "auto":
            requests_per_minute = None if is_loopback(self.base_url) else DEFAULT_REQUESTS_PER_MINUTE
        self.requests_per_minute: float | None = requests_per_minute
        self._timeout = timeout
        self.patch_budget = patch_budget
        #: Reviews, conversation comments and linked issues too (``--no-discussion``: False).
        self.discussion = discussion
        #: The run's ``--git`` clone: when it can be had, each PR's merge commit sha comes from the closed-PR
        #: list (one request per 100 PRs updated since the window opened; kept in the state store after, so a
        #: later run lists none while every PR's sha is kept) and a PR whose commit the clone has
        #: gets no file request (the files come from git); without it every PR's files are fetched.
        self._upstream = upstream
        self.git_files = upstream is not None
        self._merge_commits: dict[int, str] = {}
        self._in_clone: set[str] = set()
        self._window: Window | None = None
        #: False once this GitHub refused GraphQL (none, or none without a token): the file reads skip it.
        self._graphql = True
        self.stats = CollectStats()

    def _profile(self, parts: set[str]) -> str:
        """What a stored copy holds: its discussion, and its files (``git=1``: none, the clone gave them)."""
        return (f"discussion={int('discussion' in parts)};patch_budget={self.patch_budget};"
                f"git={int('files' not in parts)}")

    def _holds(self, cached: CachedPR) -> set[str]:
        """The parts a stored copy holds: ``discussion``, and ``files`` when listed with this hunk budget."""
        fields = dict(f.split("=", 1) for f in cached.etags.get(PROFILE_KEY, "").split(";") if "=" in f)
        held = {"discussion"} if fields.get("discussion") == "1" else set()
        if fields.get("git") == "0" and fields.get("patch_budget") == str(self.patch_budget):
            held.add("files")
        return held

    def _needs(self, hit: Hit) -> set[str]:
        """The parts this run wants of ``hit``: the discussion (unless ``--no-discussion``), and the files unless
        the clone has the PR's merge commit."""
        sha = self._merge_commits.get(hit.number)
        files = not (sha and sha.lower() in self._in_clone)
        return ({"discussion"} if self.discussion else set()) | ({"files"} if files else set())

    def __repr__(self) -> str:  # never shows the token
        return f"GitHubSource(repo={self.repo!r}, base_url={self.base_url!r}, concurrency={self.concurrency})"

    def default_window(self) -> Window:
        """The last full Monday-to-Monday week (UTC)."""
        return Window.last_full_week()

    def commit_reader(self, prs: Sequence[PullRequest]) -> "tuple[list[PullRequest], CommitReader] | None":
        """``prs`` (collected by the last ``collect``) with their merge commits (kept in the state store, else the
        closed-PR list: 1 request per 100 PRs), and a reader of those commits through the API: each changed file
        before and after (:mod:`.blobs`); None when the run's clone gives them. The facts step asks the reader
        only for commits whose facts are not cached; every request is counted in :attr:`stats`."""
        if self.git_files or self._window is None:
            return None
        stats = self.stats
        pause = None if self.requests_per_minute is None else self.concurrency * 60 / self.requests_per_minute

        def clients() -> Clients:
            return Clients(self.base_url, self._token, retry=self._retry, timeout=self._timeout,
                           seconds_between_requests=pause)

        found: dict[int, str] = {}
        lacking = [pr.number for pr in prs if not pr.merge_commit]
        if lacking:
            window = self._window

            def listed() -> tuple[dict[int, str], int]:
                listing = clients()
                try:
                    with github_errors(self.base_url, self.repo):
                        return merge_commits(listing, self.repo, window)
                finally:
                    listing.close()
            # Kept from an earlier run: a warm run lists no closed PR to find its cached facts.
            state = self._state
            found, pages = MergeCommits(state() if callable(state) else state, self.repo).find(lacking, listed)
            stats.file_requests += pages
            stats.routes["pulls (closed)"] += pages
        prs = [pr if pr.merge_commit or pr.number not in found else pr.model_copy(
            update={"merge_commit": found[pr.number]}) for pr in prs]
        known = {pr.merge_commit.lower(): pr for pr in prs if pr.merge_commit}

        def read(shas: Sequence[str]) -> tuple[dict[str, CommitDiff], list[str]]:
            reading = clients()
            reader = BlobReader(reading, self.repo, known, self.concurrency, graphql=self._graphql)
            try:
                with github_errors(self.base_url, self.repo):
                    diffs, missing = reader([s for s in shas if s in known])
            finally:
                self._graphql = self._graphql and reader.graphql
                stats.file_requests += reader.requests
                stats.routes.update(reader.routes)
                reading.close()
            return diffs, missing + [s for s in shas if s not in known]
        return list(prs), read

    def collect(self, window: Window | None) -> list[PullRequest]:
        """Every PR merged in ``window`` (default: the last full week), fetching only what changed."""
        window = window or self.default_window()
        self._window = window
        started = time.perf_counter()
        self.stats = stats = CollectStats()
        # The run's store: the composition root's LazyStore (opened here, on first use), or a Store.
        state = self._state
        conn = state() if callable(state) else state  # a Store is not callable, a LazyStore is
        hint = f" in {conn.location}"  # a StateLocation never prints a password
        cache = PullCache(conn, self.repo)
        pause = None if self.requests_per_minute is None else self.concurrency * 60 / self.requests_per_minute
        search_pause = None if self.requests_per_minute is None else 60 / SEARCH_REQUESTS_PER_MINUTE
        clients = Clients(self.base_url, self._token, retry=self._retry, timeout=self._timeout,
                          seconds_between_requests=pause)
        try:
            with github_errors(self.base_url, self.repo, state_hint=hint):
                search_client = clients.make(search_pause)
                clients.get_page(f"/repos/{self.repo}", gh=search_client)  # 404/401 here, before any work
                hits, stats.search_requests = search_merged(clients, search_client, self.repo, window)
                clone = self._upstream() if self._upstream is not None else None
                self.git_files = clone is not None  # a clone that cannot be had: the files from GitHub
                self._merge_commits, self._in_clone = {}, set()
                if clone is not None:
                    # Kept from an earlier run (a merged PR's sha never changes): a warm run lists no closed PR.
                    self._merge_commits, stats.list_requests = MergeCommits(conn, self.repo).find(
                        [h.number for h in hits], lambda: merge_commits(clients, self.repo, window))
                    self._in_clone = present_commits(clone, self._merge_commits.values())
                stats.routes.update({"repo": 1, "search": stats.search_requests, "pulls (closed)": stats.list_requests})
                prs = self._details(clients, cache, hits, stats)
        finally:
            clients.close()
        stats.seconds = time.perf_counter() - started
        log.info("collected %d PRs of %s (%d from the store, %d fetched) with %d requests in %.1f s",
                 stats.merged, self.repo, stats.reused, stats.fetched, stats.requests, stats.seconds)
        return sorted(prs, key=lambda pr: (pr.merged_at, pr.number))

    def _details(self, clients: Clients, cache: PullCache, hits: list[Hit], stats: CollectStats
                 ) -> list[PullRequest]:
        stats.merged = total = len(hits)
        stored = cache.get_many([h.number for h in hits])
        prs: list[PullRequest] = []
        todo: list[tuple[Hit, set[str]]] = []  # a hit and the parts of its stored copy to reuse
        for hit in hits:
            old = stored.get(hit.number)
            if old is None or old.updated_at != hit.updated_at:
                todo.append((hit, set()))
                continue
            held, needs = self._holds(old), self._needs(hit)
            if needs <= held:  # unchanged since stored, and it holds all this run wants: no request at all
                prs.append(old.pr if self.discussion else _without_discussion(old.pr))
            else:  # unchanged, but another --no-discussion / --git: only the missing part is asked for
                todo.append((hit, _reused(held)))
        stats.reused = len(prs)
        report("collect", len(prs), total)
        if not todo:
            return prs
        # The week's remarks, reviews and issues in a few requests, for the PRs that lack them.
        week = week_remarks(clients, self.repo, [h for h, keep in todo if "review_comments" not in keep],
                            [h for h, keep in todo if self.discussion and "reviews" not in keep])
        stats.batch_requests = sum(week.requests.values())
        self._graphql = week.graphql
        stats.routes.update(week.requests)
        pool = ThreadPoolExecutor(max_workers=min(self.concurrency, len(todo)), thread_name_prefix="github")
        pending: dict[Future[Fetched], tuple[Hit, set[str]]] = {}
        queue = iter(todo)
        try:
            # Keep at most 2 × concurrency PRs in flight so a kill abandons little work and memory stays flat.
            for hit, keep in queue:
                pending[pool.submit(self._fetch_one, clients, hit, stored.get(hit.number), week, keep)] = (hit, keep)
                if len(pending) >= 2 * self.concurrency:
                    break
            while pending:
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    hit, keep = pending.pop(future)
                    fetched = future.result()  # re-raises the worker's error, mapped by github_errors
                    held = {"discussion"} if self.discussion or "reviews" in keep else set()
                    if "files" in keep or "files" in self._needs(hit):
                        held.add("files")
                    etags = {**fetched.etags, PROFILE_KEY: self._profile(held)}
                    cache.put(hit.updated_at, fetched.pr, fetched.parts, etags)
                    prs.append(fetched.pr if self.discussion else _without_discussion(fetched.pr))
                    stats.fetched += 1
                    stats.detail_requests += fetched.requests
                    stats.routes.update(fetched.routes)
                    stats.per_pr[hit.number] = fetched.requests
                    report("collect", len(prs), total)
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[pool.submit(self._fetch_one, clients, nxt[0], stored.get(nxt[0].number), week,
                                            nxt[1])] = nxt
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return prs

    def _fetch_one(self, clients: Clients, hit: Hit, cached: CachedPR | None, week: WeekRemarks,
                   keep: set[str]) -> Fetched:
        sha = self._merge_commits.get(hit.number)
        # Files from git only for a PR whose merge commit the clone has; any other is listed by GitHub.
        # A stored copy's discussion is kept even by a --no-discussion run (shown without it), so that
        # switching back costs nothing.
        return fetch_pr(clients, self.repo, hit, cached, patch_budget=self.patch_budget,
                        discussion=self.discussion or "reviews" in keep,
                        files=not (sha and sha.lower() in self._in_clone), merge_commit=sha,
                        prefetched=week.of(hit.number), reuse=keep)


#: The remark kinds of the discussion (``--no-discussion`` leaves them out; inline comments stay).
_DISCUSSION = ("issue_comments", "reviews", "linked_issues")


def _reused(held: set[str]) -> set[str]:
    """The parts of a stored copy holding ``held`` that a fetch takes as they are (inline comments always)."""
    return {"review_comments"} | (set(_DISCUSSION) if "discussion" in held else set()) | (held & {"files"})


def _without_discussion(pr: PullRequest) -> PullRequest:
    """``pr`` as a ``--no-discussion`` run shows it: without reviews, conversation or linked issues."""
    if not (pr.reviews or pr.comments or pr.linked_issues):
        return pr
    return pr.model_copy(update={"reviews": [], "comments": [], "linked_issues": []})


def merge_commits(clients: Clients, repo: str, window: Window) -> tuple[dict[int, str], int]:
    """PR number → ``merge_commit_sha`` for every PR closed and updated since the window opened (a PR merged
    in the window was updated then or later), newest first; and the pages read."""
    found: dict[int, str] = {}
    page = clients.get_page(f"/repos/{repo}/pulls", {"state": "closed", "sort": "updated", "direction": "desc",
                                                    "per_page": 100})
    pages = 1
    while True:
        items = page.items if isinstance(page.items, list) else []
        for item in items:
            if item.get("merge_commit_sha") and item.get("merged_at"):
                sha = str(item["merge_commit_sha"])
                if sha_problem(sha):  # it would reach git: a PR whose sha is not one is read from its patches
                    log.warning("%s#%s: merge_commit_sha %s; its facts come from the REST patches", repo,
                                item.get("number"), sha_problem(sha))
                    continue
                found[int(item["number"])] = sha
        oldest = items[-1].get("updated_at") if items else None
        if not page.next_url or not oldest or datetime.fromisoformat(oldest.replace("Z", "+00:00")) < window.since:
            return found, pages
        page = clients.get_page(page.next_url)
        pages += 1
