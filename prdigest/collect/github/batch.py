"""The week's remarks, reviews and linked issues in a few requests instead of three or four per PR.

Inline review comments and conversation comments come from GitHub's repo-wide listings
(``/repos/{o}/{r}/pulls/comments`` and ``/issues/comments``), newest first, 100 a page. A PR's remarks are all
there once the listing holds as many as the PR has (the search hit counts its conversation; GraphQL its
reviews' inline comments), or has gone back past the PR's creation (none can be older). The listing is read
back only while that stays cheaper than asking PR by PR: a PR whose remarks it has not all reached keeps its
own request.
Reviews and the issues PRs close or name come from GraphQL, ~50 PRs a query, where the server has it; a
GitHub without it, one that answers GraphQL only with a token (401: a run without one), or a PR with over 100
reviews keeps the per-PR REST requests. Everything is shaped as
the REST endpoints answer, so :mod:`~prdigest.collect.github.fetch` filters and stores it the same way.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from github import GithubException

from prdigest.collect.discussion import linked_numbers
from prdigest.collect.github.client import Clients
from prdigest.collect.github.search import Hit
from prdigest.kernel.models import MAX_ISSUE_BODY
from prdigest.kernel.text import redact_url

log = logging.getLogger(__name__)

#: PRs per GraphQL query (each asks for up to 100 reviews and the PR's linked issues).
GRAPHQL_BATCH = 50
#: Pages of a repo-wide listing read per PR it saves a request for, at most: a page of 100 remarks replaces
#: one request per PR it completes, and more than one page per four PRs costs more than it saves.
PAGES_PER_PR = 0.25
#: No listing goes back further than this before the window (a PR open longer keeps its own requests).
MAX_LOOKBACK = timedelta(days=90)

_ISSUE_NUMBER = "/issues/"
_PULL_NUMBER = "/pulls/"


@dataclass
class WeekRemarks:
    """Raw remarks by PR and kind (REST-shaped), which kinds are complete for which PR, and requests by route."""

    items: dict[int, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    complete: dict[int, set[str]] = field(default_factory=dict)
    requests: Counter[str] = field(default_factory=Counter)
    #: False once GraphQL was refused (404/410: none here; 401: not without a token): later readers skip it.
    graphql: bool = True

    def of(self, number: int) -> dict[str, list[dict[str, Any]]]:
        """The complete kinds of PR ``number`` (``review_comments``, ``issue_comments``, ``reviews``,
        ``linked_issues``) and their items; a kind not here is asked PR by PR."""
        kinds = self.complete.get(number, set())
        found = self.items.get(number, {})
        return {kind: found.get(kind, []) for kind in kinds}

    def _add(self, number: int, kind: str, item: dict[str, Any]) -> None:
        self.items.setdefault(number, {}).setdefault(kind, []).append(item)

    def _done(self, number: int, kind: str) -> None:
        self.complete.setdefault(number, set()).add(kind)


def week_remarks(clients: Clients, repo: str, remarked: Sequence[Hit], discussed: Sequence[Hit]) -> WeekRemarks:
    """What the repo-wide listings and GraphQL give: the inline review comments of ``remarked``, and the
    conversation, reviews and linked issues of ``discussed``."""
    week = WeekRemarks()
    inline: dict[int, int] = {}  # inline review comments per PR, as GraphQL counts them
    if discussed:
        inline = _graphql(clients, repo, discussed, week)
        talked = [h for h in discussed if h.comments > 0]
        for hit in discussed:  # a PR whose search hit counts no conversation comment has none: nothing to ask
            if hit.comments == 0:
                week._done(hit.number, "issue_comments")
                week.items.setdefault(hit.number, {}).setdefault("issue_comments", [])
        _listing(clients, repo, talked, week, "issue_comments", "issues/comments", _ISSUE_NUMBER, "issue_url",
                 {h.number: h.comments for h in talked})
    for hit in remarked:
        if inline.get(hit.number) == 0:  # counted: none to list
            week._done(hit.number, "review_comments")
            week.items.setdefault(hit.number, {}).setdefault("review_comments", [])
    _listing(clients, repo, [h for h in remarked if inline.get(h.number) != 0], week, "review_comments",
             "pulls/comments", _PULL_NUMBER, "pull_request_url", inline)
    return week


def _listing(clients: Clients, repo: str, hits: Sequence[Hit], week: WeekRemarks, kind: str, route: str,
             marker: str, link: str, counts: dict[int, int]) -> None:
    """Read ``/repos/{repo}/{route}`` newest first while PRs are left whose remarks it has not all reached, within
    a budget of pages; mark complete for ``kind`` each PR whose remarks it listed as many as ``counts`` says,
    or that was created after the oldest remark read."""
    if not hits:
        return
    wanted = {h.number for h in hits}
    created = sorted((h.created_at for h in hits if h.created_at is not None), reverse=True)
    if not created:
        return
    listed: Counter[int] = Counter()

    def counted(hit: Hit) -> bool:
        return hit.number in counts and listed[hit.number] >= counts[hit.number]

    # never further back than the oldest PR's creation, nor than MAX_LOOKBACK before the window
    floor = max(created[-1], min(h.merged_at for h in hits) - MAX_LOOKBACK)
    budget = max(1, int(len(hits) * PAGES_PER_PR))
    page = clients.get_page(f"/repos/{repo}/{route}", {"since": _iso(floor), "sort": "updated",
                                                      "direction": "desc", "per_page": 100})
    pages, seen = 1, set()
    while True:
        items = page.items if isinstance(page.items, list) else []
        for item in items:
            ident = item.get("id")
            if ident in seen:  # a remark edited while we read moves up a page: counted once
                continue
            seen.add(ident)
            number = _number_in(str(item.get(link) or ""), marker)
            if number in wanted:
                week._add(number, kind, item)
                listed[number] += 1
        oldest = _time(items[-1].get("updated_at")) if items else None
        if not page.next_url or oldest is None:
            # (both variants bind their bound as a default: one signature for mypy, no loop variable for B023)
            def complete(created_at: datetime, bound: datetime = floor) -> bool:  # exhausted: all since the floor
                return created_at >= bound
            break
        # PRs this listing has not completed yet: created before its oldest remark, and short of their count
        left = sum(1 for h in hits if not counted(h) and (h.created_at is None or h.created_at <= oldest))
        if pages >= budget or left == 0:
            def complete(created_at: datetime, bound: datetime = oldest) -> bool:
                # a PR created after the oldest remark read has every remark among those read (a remark of
                # that very second may be on the next page: not complete)
                return created_at > bound
            break
        page = clients.get_page(page.next_url)
        pages += 1
    week.requests[f"{route} (repo-wide)"] += pages
    for hit in hits:
        if counted(hit) or (hit.created_at is not None and complete(hit.created_at)):
            week._done(hit.number, kind)
            week.items.setdefault(hit.number, {}).setdefault(kind, [])


_QUERY_PR = ("pr{n}: pullRequest(number: {n}) {{ number comments {{ totalCount }} reviews(first: 100) {{ nodes {{ "
             "author {{ __typename login }} state body submittedAt comments {{ totalCount }} }} "
             "pageInfo {{ hasNextPage }} }} }}")
_QUERY_ISSUE = ("i{n}: issueOrPullRequest(number: {n}) {{ __typename ... on Issue {{ number title body state }} "
                "... on PullRequest {{ number }} }}")


def _graphql(clients: Clients, repo: str, hits: Sequence[Hit], week: WeekRemarks) -> dict[int, int]:
    """Reviews and linked issues of ``hits``, ``GRAPHQL_BATCH`` PRs a query, and each PR's count of inline
    review comments (its reviews'); on a server without GraphQL, nothing (the per-PR requests stay)."""
    owner, name = repo.split("/", 1)
    inline: dict[int, int] = {}
    for start in range(0, len(hits), GRAPHQL_BATCH):
        batch = hits[start:start + GRAPHQL_BATCH]
        linked = {h.number: linked_numbers(h.title, h.body, repo, h.number) for h in batch}
        issues = sorted({n for numbers in linked.values() for n in numbers})
        # Only numbers (ints) are written into the query; the repository's name goes in as variables.
        fields = [_QUERY_PR.format(n=h.number) for h in batch] + [_QUERY_ISSUE.format(n=n) for n in issues]
        query = ("query($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { "
                 + " ".join(fields) + " } }")
        gh = clients.get()
        try:
            _, answer = gh.requester.requestJsonAndCheck(
                "POST", gh.requester.graphql_url, input={"query": query, "variables": {"owner": owner, "name": name}})
        except GithubException as exc:
            if exc.status in (404, 410):  # no GraphQL here: reviews and issues PR by PR, as before
                log.info("no GraphQL at %s: reviews and linked issues are asked PR by PR", clients.base_url)
                week.requests["graphql"] += 1
                week.graphql = False
                return inline
            if exc.status == 401:
                # GitHub's GraphQL needs a token where REST does not (a run without GITHUB_TOKEN): the repository
                # check already passed through REST, so this is no bad token; the per-PR REST requests stay.
                log.warning("GitHub at %s answers GraphQL only with a token (401): the reviews and linked issues "
                            "of %d PRs of %s are asked PR by PR through REST (a reviews request a PR and one an "
                            "issue); set GITHUB_TOKEN to batch them", redact_url(clients.base_url), len(hits), repo)
                week.requests["graphql"] += 1
                week.graphql = False
                return inline
            raise
        week.requests["graphql"] += 1
        data = ((answer or {}).get("data") or {}).get("repository") or {}
        found: dict[int, dict[str, Any] | None] = {}
        for n in issues:
            node = data.get(f"i{n}")
            found[n] = None if not node or node.get("__typename") != "Issue" else {
                "number": n, "title": node.get("title") or "", "body": (node.get("body") or "")[:MAX_ISSUE_BODY],
                "state": str(node.get("state") or "open").lower()}
        for hit in batch:
            node = data.get(f"pr{hit.number}")
            if not node or (node.get("reviews") or {}).get("pageInfo", {}).get("hasNextPage"):
                continue  # missing, or over 100 reviews: its reviews and issues are asked PR by PR
            reviews = (node.get("reviews") or {}).get("nodes") or []
            inline[hit.number] = sum(int((r.get("comments") or {}).get("totalCount") or 0) for r in reviews)
            for review in reviews:
                week._add(hit.number, "reviews", _rest_review(review))
            week.items.setdefault(hit.number, {}).setdefault("reviews", [])
            week._done(hit.number, "reviews")
            week.items[hit.number]["linked_issues"] = [i for n in linked[hit.number] if (i := found.get(n))]
            week._done(hit.number, "linked_issues")
    return inline


def _rest_review(node: dict[str, Any]) -> dict[str, Any]:
    """A GraphQL review as ``/pulls/{n}/reviews`` lists it (an app's login as REST spells it: ``name[bot]``)."""
    author = node.get("author")
    user = None
    if author:
        bot = author.get("__typename") == "Bot"
        login = str(author.get("login") or "")
        user = {"login": f"{login}[bot]" if bot and not login.endswith("[bot]") else login,
                "type": "Bot" if bot else "User"}
    return {"user": user, "state": node.get("state") or "COMMENTED", "body": node.get("body") or "",
            "submitted_at": node.get("submittedAt") or ""}


def _number_in(url: str, marker: str) -> int | None:
    """The PR number at the end of ``…/pulls/123`` or ``…/issues/123``."""
    head, _, tail = url.rpartition(marker)
    return int(tail) if head and tail.isdigit() else None


def _time(text: Any) -> datetime | None:
    if not text:
        return None
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")
