"""What the local GitHub server serves and counts: PRs in the source format, faults, limits, and builders
for synthetic weeks and decoys. The HTTP side is in :mod:`tests.servers.github_server`."""

from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from datetime import time as dtime
from pathlib import Path
from typing import Any

from tests.servers.github_git import ServedGit


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


@dataclass
class ServedPR:
    """One PR as the server knows it: the fixture's fields plus what GitHub has and the fixture lacks."""

    number: int
    html_url: str
    title: str
    body: str
    author: str | None
    created_at: datetime
    merged_at: datetime | None
    closed_at: datetime | None
    updated_at: datetime
    labels: list[str]
    files: list[dict[str, Any]]
    #: Conversation comments ({author, body}): the fixture's ``comments``.
    issue_comments: list[dict[str, Any]] = field(default_factory=list)
    #: Review comments ({author, body, path}): the fixture's ``review_comments`` and ``inline_comments``.
    inline_comments: list[dict[str, Any]] = field(default_factory=list)
    #: Reviews ({author, body, state}).
    reviews: list[dict[str, Any]] = field(default_factory=list)
    #: The sha of the commit the PR landed as (``merge_commit_sha``), when the record names one.
    merge_commit: str | None = None

    @classmethod
    def from_record(cls, rec: dict[str, Any]) -> "ServedPR":
        """A PR from one line of the source JSONL (merged) or a generator's record (may be unmerged)."""
        merged = parse_time(rec["merged_at"]) if rec.get("merged_at") else None
        created = parse_time(rec["created_at"]) if rec.get("created_at") else (merged or datetime.now(timezone.utc))
        closed = parse_time(rec["closed_at"]) if rec.get("closed_at") else merged
        updated = parse_time(rec["updated_at"]) if rec.get("updated_at") else (closed or created)
        return cls(
            number=rec["number"], html_url=rec["url"], title=rec.get("title") or "", body=rec.get("body") or "",
            author=rec.get("author") or None, created_at=created, merged_at=merged, closed_at=closed,
            updated_at=updated, labels=list(rec.get("labels") or []), files=list(rec.get("files") or []),
            issue_comments=list(rec.get("comments") or []),
            inline_comments=[*(rec.get("review_comments") or []), *(rec.get("inline_comments") or [])],
            reviews=list(rec.get("reviews") or []), merge_commit=rec.get("merge_commit") or None,
        )


@dataclass
class Faults:
    """Fault injection by rate (0..1, per API request), seeded so a run is reproducible."""

    rate_502: float = 0.0
    rate_secondary: float = 0.0
    rate_429: float = 0.0
    seed: int = 7
    #: After this many API requests, every request fails with 502 (a GitHub outage); None = never.
    outage_after: int | None = None


@dataclass
class PrimaryLimit:
    """The core bucket: ``limit`` requests, refilled ``reset_in`` seconds after the first use."""

    limit: int
    reset_in: float


class GitHubState:
    """Everything the server serves and counts; shared by the handler threads under one lock."""

    def __init__(self, repo: str, prs: list[ServedPR], *, token: str | None = None, prefix: str = "",
                 faults: Faults | None = None, primary: PrimaryLimit | None = None, latency: float = 0.0,
                 files: dict[str, bytes] | None = None, issues: dict[int, dict[str, Any]] | None = None,
                 git_dir: Path | None = None) -> None:
        self.repo = repo
        #: A real git repository whose commits and files at a commit are served (``/git/commits``, ``/contents``
        #: with a ``ref``), as GitHub serves the repository's own.
        self.git_dir = git_dir
        self.git = ServedGit(git_dir) if git_dir is not None else None
        #: Bytes of a blob's ``text`` GraphQL gives before it says ``isTruncated`` (GitHub states no figure; the
        #: stand-in's, settable so a test can truncate a small file).
        self.blob_text_limit = 512 * 1024
        #: ``object(expression:)`` values GraphQL fails on: ``null`` and an error naming the alias, as GitHub
        #: answers a field that timed out.
        self.failing_objects: set[str] = set()
        #: A query of more ``object`` selections than this is refused as GitHub refuses one that timed out
        #: (``data`` null, one error); None: no limit.
        self.graphql_max_objects: int | None = None
        #: The text of every GraphQL query received (to check what a client writes into it).
        self.graphql_queries: list[str] = []
        #: Issues by number ({title, body, state}), served by ``/issues/{n}`` (a PR's number answers as a PR).
        self.issues = dict(issues or {})
        #: The default branch's files (path → content), served by the git-trees and contents endpoints.
        self.files = dict(files or {})
        #: Seconds each API request takes before it is answered (a stand-in for the network and GitHub).
        self.latency = latency
        self.prs = {pr.number: pr for pr in prs}
        #: Whether ``POST /graphql`` is served (a GitHub Enterprise without it answers 404).
        self.graphql = True
        #: GitHub answers GraphQL without a token 401 (REST answers it, within 60 requests an hour); off by
        #: default, as the stand-in's other tests run without a token.
        self.graphql_needs_token = False
        self.token = token
        self.prefix = prefix.rstrip("/")
        self.faults = faults or Faults()
        self.primary = primary
        self.lock = threading.Lock()
        self.rng = random.Random(self.faults.seed)
        self.log: list[tuple[str, int]] = []
        self.kinds: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.api_requests = 0
        self._primary_used = 0
        self._primary_reset = 0.0

    def reset_counters(self) -> None:
        with self.lock:
            self.log.clear()
            self.kinds.clear()
            self.statuses.clear()
            self.graphql_queries.clear()
            self.api_requests = 0

    def stats(self) -> dict[str, Any]:
        with self.lock:
            return {"requests": len(self.log), "kinds": dict(self.kinds), "statuses": dict(self.statuses),
                    "log": list(self.log)}

    @property
    def requests(self) -> int:
        return len(self.log)

    def paths(self) -> list[str]:
        """The path of every API request served so far (any status)."""
        with self.lock:
            return [p for p, _ in self.log]

    def numbers_fetched(self) -> set[int]:
        """PR numbers whose per-PR endpoints were requested (``/issues/N`` alone is a linked issue's look-up)."""
        found = set()
        for path in self.paths():
            m = re.search(r"/pulls/(\d+)|/issues/(\d+)/", path)
            if m:
                found.add(int(m.group(1) or m.group(2)))
        return found


# ---- data builders ----------------------------------------------------------------------------------
def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """Records of a source JSONL file (the fixture format)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def decoys(repo: str, since: datetime, until: datetime, start_number: int = 900_000) -> list[dict[str, Any]]:
    """PRs that must never be collected: closed unmerged in the window, merged 1 s before / exactly at the end."""
    url = f"https://github.com/{repo}/pull/"
    mid = since + (until - since) / 2
    base = {"title": "decoy", "body": "", "author": "decoy-bot", "labels": [], "review_comments": [],
            "files": [{"path": "decoy.txt", "additions": 1, "deletions": 0, "status": "added"}]}
    return [
        {**base, "number": start_number, "url": f"{url}{start_number}", "title": "closed without merging",
         "created_at": iso(since - timedelta(days=2)), "merged_at": None, "closed_at": iso(mid)},
        {**base, "number": start_number + 1, "url": f"{url}{start_number + 1}", "title": "merged 1 s early",
         "created_at": iso(since - timedelta(days=2)), "merged_at": iso(since - timedelta(seconds=1))},
        {**base, "number": start_number + 2, "url": f"{url}{start_number + 2}", "title": "merged at until",
         "created_at": iso(since - timedelta(days=2)), "merged_at": iso(until)},
    ]


def synthetic_week(n: int, *, repo: str = "acme/widgets", since: datetime | None = None, days: float = 7,
                   seed: int = 1, first_number: int = 10_000, big_files: dict[int, int] | None = None
                   ) -> list[dict[str, Any]]:
    """``n`` merged PRs spread over the window, shaped like a busy repo's week.

    About 55 % have conversation comments, 45 % inline review comments, and every PR one approving review;
    ``big_files`` maps an index to a file count (e.g. ``{0: 3500}``) for PRs that touch very many files.
    """
    rng = random.Random(seed)
    since = since or datetime(2026, 11, 16, tzinfo=timezone.utc)
    span = days * 86400
    out = []
    for i in range(n):
        number = first_number + i
        merged = since + timedelta(seconds=int(span * (i + 0.5) / n))
        nfiles = (big_files or {}).get(i) or rng.choice([1, 1, 2, 2, 3, 4, 6, 9, 14, 25])
        dirs = ["vllm/model_executor", "vllm/v1/core", "csrc/attention", "docs", "tests/kernels"]
        files = [{"path": f"{rng.choice(dirs)}/f{number}_{k}.py", "additions": rng.randint(0, 120),
                  "deletions": rng.randint(0, 60), "status": rng.choice(["modified", "modified", "added"])}
                 for k in range(nfiles)]
        out.append({
            "number": number, "url": f"https://github.com/{repo}/pull/{number}",
            "title": f"[Synthetic] change {number}", "body": f"Body of PR {number}.\n" * rng.randint(1, 8),
            "author": None if i % 97 == 5 else f"dev{rng.randint(1, 300)}",
            "created_at": iso(merged - timedelta(days=rng.randint(1, 30))), "merged_at": iso(merged),
            "updated_at": iso(merged + timedelta(minutes=rng.randint(0, 120))),
            "labels": rng.sample(["ready", "v1", "documentation", "ci/build", "performance"], rng.randint(0, 2)),
            "files": files,
            "comments": [{"author": f"dev{rng.randint(1, 300)}", "body": f"comment {k} on {number}"}
                                for k in range(rng.choice([0, 0, 0, 0, 1, 2, 3, 5, 8]))],
            "inline_comments": [{"author": f"rev{rng.randint(1, 40)}", "body": f"nit {k}",
                                 "path": files[k % nfiles]["path"]}
                                for k in range(rng.choice([0, 0, 0, 0, 0, 1, 2, 4, 7]))],
            "reviews": [{"author": f"rev{rng.randint(1, 40)}", "body": rng.choice(["", "", "LGTM"]),
                         "state": "APPROVED"}],
        })
    return out


def make_state(records: list[dict[str, Any]], repo: str, **kwargs: Any) -> GitHubState:
    """Server state from source records (fixture lines, synthetic PRs, decoys)."""
    issues = {int(i["number"]): i for r in records for i in r.get("linked_issues") or []}
    issues.update(kwargs.pop("issues", None) or {})
    return GitHubState(repo, [ServedPR.from_record(r) for r in records], issues=issues, **kwargs)


def user_json(login: str | None) -> dict[str, Any] | None:
    if not login:
        return None  # a deleted account: GitHub sends "user": null
    return {"login": login, "id": int(hashlib.md5(login.encode("utf-8", "surrogatepass")).hexdigest()[:7], 16), "type": "User",
            "url": f"https://api.github.com/users/{login}", "html_url": f"https://github.com/{login}"}


def patch_text(additions: int, deletions: int) -> str:
    lines = [f"@@ -1,{deletions} +1,{additions} @@"]
    # Comment lines: a synthetic hunk must not read as code or a pin to the facts engine.
    lines += [f"-# old line {i}" for i in range(min(deletions, 40))]
    lines += [f"+# new line {i}" for i in range(min(additions, 40))]
    return "\n".join(lines)


def search_bound(text: str, *, upper: bool) -> datetime:
    """A search date bound: a bare date covers the whole day (inclusive), a time is exact to the second."""
    if len(text) == 10:
        day = datetime.combine(date.fromisoformat(text), dtime(0), tzinfo=timezone.utc)
        return day + timedelta(days=1, seconds=-1) if upper else day
    return parse_time(text)
