"""One PR's details: files (with diff hunks within a budget) and remarks, fetched with as few requests as
GitHub allows and conditionally when a stored copy exists."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prdigest.collect.github.cache import CachedPR
from prdigest.collect.github.client import Clients
from prdigest.collect.github.search import Hit
from prdigest.kernel.models import FileChange, PullRequest, ReviewComment

#: GitHub lists at most this many files of a PR.
FILES_CAP = 3000
#: Characters of diff hunks kept per PR, given to the most changed files first.
DEFAULT_PATCH_BUDGET = 16_000


@dataclass(frozen=True)
class Fetched:
    """A PR built from its search hit and details, the raw remarks per endpoint, ETags, and requests made."""

    pr: PullRequest
    parts: dict[str, list[dict[str, Any]]]
    etags: dict[str, str]
    requests: int


def fetch_pr(clients: Clients, repo: str, hit: Hit, cached: CachedPR | None, *,
             patch_budget: int = DEFAULT_PATCH_BUDGET, reviews: bool = False) -> Fetched:
    """Fetch what the search hit lacks. Requests per PR: 1 for files (+1 per further 100), 1 for inline review
    comments, 1 for conversation comments only when the hit counts some, 1 for reviews when asked. A list
    whose stored single page still has the same ETag answers 304 and is reused (free on GitHub's limit)."""
    pulls = f"/repos/{repo}/pulls/{hit.number}"
    prior_etags = cached.etags if cached else {}
    etags: dict[str, str] = {}
    calls = 0

    raw_files, etag, single, n = clients.get_all(f"{pulls}/files", etag=prior_etags.get("files"), limit=FILES_CAP)
    calls += n
    if raw_files is None and cached is not None:
        files, truncated = cached.pr.files, cached.pr.files_truncated
        additions, deletions = cached.pr.additions, cached.pr.deletions
    else:
        raw_files = (raw_files or [])[:FILES_CAP]
        files = _files(raw_files, patch_budget)
        additions, deletions = sum(f.additions for f in files), sum(f.deletions for f in files)
        truncated = False
        if len(files) >= FILES_CAP:
            # The listing stops at 3,000 files: ask the PR itself for the true totals.
            page = clients.get_page(pulls)
            calls += 1
            detail = page.items if isinstance(page.items, dict) else {}
            truncated = int(detail.get("changed_files", len(files))) > len(files)
            additions = int(detail.get("additions", additions))
            deletions = int(detail.get("deletions", deletions))
    if single and etag:
        etags["files"] = etag

    parts: dict[str, list[dict[str, Any]]] = {}
    lists = [("review_comments", f"{pulls}/comments", True)]
    lists.append(("issue_comments", f"/repos/{repo}/issues/{hit.number}/comments", hit.comments > 0))
    lists.append(("reviews", f"{pulls}/reviews", reviews))
    for kind, url, wanted in lists:
        if not wanted:
            parts[kind] = []
            continue
        items, etag, single, n = clients.get_all(url, etag=prior_etags.get(kind))
        calls += n
        if items is None and cached is not None:
            parts[kind] = cached.parts.get(kind, [])
        else:
            parts[kind] = [_remark(c, kind) for c in items or [] if kind != "reviews" or (c.get("body") or "").strip()]
        if single and etag:
            etags[kind] = etag

    pr = build_pr(hit, files, additions, deletions, truncated, parts)
    return Fetched(pr, parts, etags, calls)


def build_pr(hit: Hit, files: list[FileChange], additions: int, deletions: int, truncated: bool,
             parts: dict[str, list[dict[str, Any]]]) -> PullRequest:
    """The PR record: the hit's fields, the files, and every remark in the order it was made."""
    remarks = sorted((r for kind in ("review_comments", "reviews", "issue_comments") for r in parts.get(kind, [])),
                     key=lambda r: r.get("at") or "")
    return PullRequest(
        number=hit.number, url=hit.url, title=hit.title, author=hit.author, created_at=hit.created_at,
        merged_at=hit.merged_at, updated_at=hit.updated_at, labels=list(hit.labels), body=hit.body,
        files=files, additions=additions, deletions=deletions, files_truncated=truncated,
        review_comments=[ReviewComment(author=r.get("author"), body=r.get("body") or "", path=r.get("path"))
                         for r in remarks],
    )


def _remark(item: dict[str, Any], kind: str) -> dict[str, Any]:
    remark = {"author": (item.get("user") or {}).get("login"), "body": item.get("body") or "",
              "at": item.get("created_at") or item.get("submitted_at") or ""}
    if kind == "review_comments" and item.get("path"):
        remark["path"] = item["path"]
    return remark


def _files(raw: list[dict[str, Any]], budget: int) -> list[FileChange]:
    """Files in GitHub's order; hunks kept for the most changed files while they fit in ``budget``."""
    keep: set[int] = set()
    left = budget
    for i in sorted(range(len(raw)), key=lambda i: -(raw[i].get("additions", 0) + raw[i].get("deletions", 0))):
        size = len(raw[i].get("patch") or "")
        if 0 < size <= left:
            keep.add(i)
            left -= size
    return [FileChange(path=f["filename"], additions=f.get("additions", 0), deletions=f.get("deletions", 0),
                       status=f.get("status", "modified"), previous_path=f.get("previous_filename"),
                       patch=f.get("patch") if i in keep else None)
            for i, f in enumerate(raw)]
