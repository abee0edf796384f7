"""One PR's details: files (with diff hunks within a budget), remarks, reviews and the issues it links, fetched
with as few requests as GitHub allows and conditionally when a stored copy exists."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from prdigest.collect.discussion import is_bot, linked_numbers
from prdigest.collect.github.cache import CachedPR
from prdigest.collect.github.client import Clients
from prdigest.collect.github.search import Hit
from prdigest.kernel.models import MAX_ISSUE_BODY, FileChange, LinkedIssue, PullRequest, Review, ReviewComment
from prdigest.kernel.prtext.pointing import ranked
from prdigest.kernel.surrogates import scrub

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
    #: The requests by route (``files``, ``reviews``, ``issue``, …), for the run's figures.
    routes: Counter[str] = field(default_factory=Counter)


def fetch_pr(clients: Clients, repo: str, hit: Hit, cached: CachedPR | None, *,
             patch_budget: int = DEFAULT_PATCH_BUDGET, discussion: bool = True, files: bool = True,
             merge_commit: str | None = None, prefetched: Mapping[str, list[dict[str, Any]]] | None = None,
             reuse: Collection[str] = ()) -> Fetched:
    """Fetch what the search hit lacks. Requests per PR: 1 for files (+1 per further 100; none when ``files`` is
    False: the upstream clone gives them), 1 for inline review
    comments; with the discussion (the default) also 1 for reviews, 1 for conversation comments only when the
    hit counts some, and 1 per issue the PR closes or names (at most
    :data:`~prdigest.collect.discussion.MAX_LINKED`). A list or issue whose stored copy still has the same ETag
    answers 304 and is reused (free on GitHub's limit). Bots' remarks are dropped here.

    A kind in ``prefetched`` (raw items from the week's batched listings, :mod:`.batch`) costs no request; a
    part in ``reuse`` (``files`` or a kind of remark) is taken as ``cached`` holds it, with no request either."""
    pulls = f"/repos/{repo}/pulls/{hit.number}"
    prior_etags = cached.etags if cached else {}
    prefetched = prefetched or {}
    reuse = set(reuse) if cached is not None else set()
    etags: dict[str, str] = {key: value for key, value in prior_etags.items()
                             if key in reuse or (key.startswith("issue:") and "linked_issues" in reuse)}
    routes: Counter[str] = Counter()
    calls = 0

    if "files" in reuse and cached is not None:
        raw_files, etag, single, n = None, prior_etags.get("files"), False, 0
    elif files:
        raw_files, etag, single, n = clients.get_all(f"{pulls}/files", etag=prior_etags.get("files"),
                                                     limit=FILES_CAP)
    else:  # the upstream clone gives the files (prdigest/collect/facts/step.py): no request for them
        raw_files, etag, single, n = [], None, False, 0
    calls += n
    routes["files"] += n
    if raw_files is None and cached is not None:
        listed, truncated = cached.pr.files, cached.pr.files_truncated
        additions, deletions = cached.pr.additions, cached.pr.deletions
    else:
        raw_files = (raw_files or [])[:FILES_CAP]
        listed = _files(raw_files, patch_budget, hit.title or "", hit.body or "")
        additions, deletions = sum(f.additions for f in listed), sum(f.deletions for f in listed)
        truncated = False
        if len(listed) >= FILES_CAP:
            # The listing stops at 3,000 files: ask the PR itself for the true totals.
            page = clients.get_page(pulls)
            calls += 1
            routes["pull"] += 1
            detail = page.items if isinstance(page.items, dict) else {}
            truncated = int(detail.get("changed_files", len(listed))) > len(listed)
            additions = int(detail.get("additions", additions))
            deletions = int(detail.get("deletions", deletions))
    if single and etag:
        etags["files"] = etag

    parts: dict[str, list[dict[str, Any]]] = {}
    lists = [("review_comments", f"{pulls}/comments", True),
             ("issue_comments", f"/repos/{repo}/issues/{hit.number}/comments", discussion and hit.comments > 0),
             ("reviews", f"{pulls}/reviews", discussion)]
    for kind, url, wanted in lists:
        if kind in reuse and cached is not None:
            parts[kind] = cached.parts.get(kind, [])
            continue
        if not wanted:
            parts[kind] = []
            continue
        if kind in prefetched:
            parts[kind] = [_remark(c, kind) for c in prefetched[kind] if _kept(c, kind)]
            continue
        items, etag, single, n = clients.get_all(url, etag=prior_etags.get(kind))
        calls += n
        routes[kind] += n
        if items is None and cached is not None:
            parts[kind] = cached.parts.get(kind, [])
        else:
            parts[kind] = [_remark(c, kind) for c in items or [] if _kept(c, kind)]
        if single and etag:
            etags[kind] = etag
    parts["linked_issues"] = []
    if "linked_issues" in reuse and cached is not None:
        parts["linked_issues"] = cached.parts.get("linked_issues", [])
    elif discussion and "linked_issues" in prefetched:
        parts["linked_issues"] = list(prefetched["linked_issues"])
    elif discussion:
        n = _linked_issues(clients, repo, hit, cached, prior_etags, etags, parts)
        calls += n
        routes["issue"] += n

    pr = build_pr(hit, listed, additions, deletions, truncated, parts)
    if merge_commit:
        pr = pr.model_copy(update={"merge_commit": merge_commit})
    return Fetched(pr, parts, etags, calls, routes)


def _linked_issues(clients: Clients, repo: str, hit: Hit, cached: CachedPR | None, prior: dict[str, str],
                   etags: dict[str, str], parts: dict[str, list[dict[str, Any]]]) -> int:
    """The issues the PR closes or names, into ``parts["linked_issues"]`` (a number that is a PR is left to the
    relations; one gone or hidden is skipped); returns the requests made."""
    stored = {i["number"]: i for i in (cached.parts.get("linked_issues", []) if cached else [])}
    calls = 0
    for number in linked_numbers(hit.title, hit.body, repo, hit.number):
        key = f"issue:{number}"
        page = clients.get_optional(f"/repos/{repo}/issues/{number}", etag=prior.get(key))
        calls += 1
        if page is None:
            continue  # deleted, transferred or not visible to the token
        if page.etag:
            etags[key] = page.etag
        if page.items is None:  # 304: unchanged since stored (a PR's number was stored as nothing)
            if number in stored:
                parts["linked_issues"].append(stored[number])
            continue
        item = page.items if isinstance(page.items, dict) else {}
        if "pull_request" in item or not item:
            continue
        parts["linked_issues"].append({"number": number, "title": item.get("title") or "",
                                       "body": (item.get("body") or "")[:MAX_ISSUE_BODY],
                                       "state": item.get("state") or "open"})
    return calls


def build_pr(hit: Hit, files: list[FileChange], additions: int, deletions: int, truncated: bool,
             parts: dict[str, list[dict[str, Any]]]) -> PullRequest:
    """The PR record: the hit's fields, the files, the inline review comments, the reviews with their state, the
    conversation and the linked issues, each list in the order it was made."""
    def ordered(kind: str) -> list[dict[str, Any]]:
        return sorted(parts.get(kind, []), key=lambda r: r.get("at") or "")

    # An account without a login is given as "": the models name it "ghost", as GitHub does.
    return PullRequest(
        number=hit.number, url=hit.url, title=hit.title, author=hit.author or "", created_at=hit.created_at,
        merged_at=hit.merged_at, updated_at=hit.updated_at, labels=list(hit.labels), body=hit.body,
        files=files, additions=additions, deletions=deletions, files_truncated=truncated,
        review_comments=[ReviewComment(author=r.get("author") or "", body=r.get("body") or "", path=r.get("path"))
                         for r in ordered("review_comments")],
        reviews=[Review(author=r.get("author") or "", state=r.get("state") or "COMMENTED", body=r.get("body") or "")
                 for r in ordered("reviews")],
        comments=[ReviewComment(author=r.get("author") or "", body=r.get("body") or "")
                  for r in ordered("issue_comments")],
        linked_issues=[LinkedIssue.model_validate(i) for i in parts.get("linked_issues", [])],
    )


def _kept(item: dict[str, Any], kind: str) -> bool:
    """False for a bot's remark, and for a review with neither a summary nor a verdict (the container GitHub
    makes for a batch of inline comments)."""
    user = item.get("user") or {}
    if is_bot(user.get("login"), user.get("type")):
        return False
    if kind == "reviews":
        return bool((item.get("body") or "").strip()) or item.get("state") in ("APPROVED", "CHANGES_REQUESTED")
    return True


def _remark(item: dict[str, Any], kind: str) -> dict[str, Any]:
    remark = {"author": (item.get("user") or {}).get("login"), "body": item.get("body") or "",
              "at": item.get("created_at") or item.get("submitted_at") or ""}
    if kind == "review_comments" and item.get("path"):
        remark["path"] = item["path"]
    if kind == "reviews":
        remark["state"] = item.get("state") or "COMMENTED"
    return remark


def _files(raw: list[dict[str, Any]], budget: int, title: str = "", body: str = "") -> list[FileChange]:
    """Files in GitHub's order; hunks kept while they fit in ``budget`` for the files the prompt shows first (the
    core code before tests, docs, CI, data and lock files, led by what the title and description name:
    prdigest/kernel/prtext/pointing.py), so a large version file or JSON table cannot crowd out the code."""
    files = [FileChange(path=f["filename"], additions=f.get("additions", 0), deletions=f.get("deletions", 0),
                        status=f.get("status", "modified"), previous_path=f.get("previous_filename")) for f in raw]
    at = {id(f): i for i, f in enumerate(files)}
    keep: set[int] = set()
    left = budget
    for f in ranked(files, title, body):
        i = at[id(f)]
        size = len(raw[i].get("patch") or "")
        if 0 < size <= left:
            keep.add(i)
            left -= size
    # model_copy skips the model's validators: the patch is scrubbed of lone surrogates here, as they would.
    return [f.model_copy(update={"patch": scrub(raw[i].get("patch") or "")}) if i in keep else f
            for i, f in enumerate(files)]
