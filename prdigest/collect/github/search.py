"""Finding every PR merged in a window with the search API, splitting the window past its 1,000-result cap."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from github import Github

from prdigest.collect.github.client import Clients
from prdigest.kernel.errors import SourceError
from prdigest.kernel.window import Window

log = logging.getLogger(__name__)

#: GitHub returns at most this many results per search query, whatever the page size.
SEARCH_CAP = 1000
#: When a range is over the cap, split it into parts expected to hold this many (slack for uneven weeks).
_TARGET_PER_PART = 700
_SECOND = timedelta(seconds=1)


@dataclass(frozen=True)
class Hit:
    """A merged PR as one search result lists it: everything but files and comments, at no extra request."""

    number: int
    url: str
    title: str
    body: str
    author: str | None
    labels: tuple[str, ...]
    created_at: datetime | None
    updated_at: datetime
    merged_at: datetime
    #: Conversation comments; 0 means /issues/N/comments need not be asked.
    comments: int

    @classmethod
    def from_item(cls, item: dict[str, Any]) -> "Hit | None":
        """The hit, or None when the item is not a merged PR (search is trusted for nothing else)."""
        pull = item.get("pull_request") or {}
        if not pull.get("merged_at"):
            return None
        merged_at, updated_at = _time(pull["merged_at"]), _time(item.get("updated_at"))
        if merged_at is None or updated_at is None:  # merged_at was checked just above
            raise SourceError(f"search hit #{item.get('number')}: no updated_at")
        return cls(
            number=int(item["number"]), url=item.get("html_url") or pull.get("html_url") or "",
            title=item.get("title") or "", body=item.get("body") or "",
            author=(item.get("user") or {}).get("login"),
            labels=tuple(label["name"] for label in item.get("labels") or [] if label.get("name")),
            created_at=_time(item.get("created_at")), updated_at=updated_at,
            merged_at=merged_at, comments=int(item.get("comments") or 0),
        )


def _time(text: str | None) -> datetime | None:
    if text:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)
    return None


def _fmt(instant: datetime) -> str:
    # The form GitHub documents for times in search qualifiers ("understanding the search syntax").
    return instant.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def _seconds(window: Window) -> tuple[datetime, datetime]:
    """The inclusive, whole-second range of merge times the window can contain (search is per second)."""
    lo = window.since.replace(microsecond=0)
    hi = window.until.replace(microsecond=0)
    if hi == window.until:
        hi -= _SECOND  # until is exclusive; merged_at has whole seconds
    return lo, hi


def search_merged(clients: Clients, gh: Github, repo: str, window: Window) -> tuple[list[Hit], int]:
    """Every PR merged in ``window`` (exactly, half-open) and the number of search requests made.

    Queries ``is:pr is:merged merged:A..B repo:R`` with whole-second bounds (inclusive), sorted by creation
    time ascending so that PRs updated while we page cannot shift between pages; a range reporting more
    than 1,000 results (or incomplete results) is split and each part searched again.
    """
    found: dict[int, Hit] = {}
    requests = 0
    ranges = [_seconds(window)]
    while ranges:
        lo, hi = ranges.pop()
        query = f"is:pr is:merged merged:{_fmt(lo)}..{_fmt(hi)} repo:{repo}"
        params = {"q": query, "sort": "created", "order": "asc", "per_page": 100}
        page = clients.get_page("/search/issues", params, gh=gh)
        requests += 1
        body = page.items if isinstance(page.items, dict) else {}
        total = int(body.get("total_count", 0))
        if total > SEARCH_CAP or body.get("incomplete_results"):
            if hi <= lo:
                raise SourceError(f"{repo}: more than {SEARCH_CAP} PRs merged within the second {_fmt(lo)}; "
                                  "GitHub search cannot list them all")
            parts = max(2, math.ceil(total / _TARGET_PER_PART))
            log.info("search %s..%s reports %d PRs (incomplete=%s): splitting in %d", _fmt(lo), _fmt(hi), total,
                     bool(body.get("incomplete_results")), parts)
            ranges.extend(_split(lo, hi, parts))
            continue
        items = list(body.get("items") or [])
        next_url = page.next_url
        while next_url:
            more = clients.get_page(next_url, gh=gh)
            requests += 1
            # a search page is an object (Page.items' dict case): not checked, hence the ignore
            items.extend((more.items or {}).get("items") or [])  # type: ignore[union-attr]
            next_url = more.next_url
        for item in items:
            hit = Hit.from_item(item)
            if hit is not None and hit.merged_at in window:
                found[hit.number] = hit
    return sorted(found.values(), key=lambda h: (h.merged_at, h.number)), requests


def _split(lo: datetime, hi: datetime, parts: int) -> list[tuple[datetime, datetime]]:
    """``parts`` consecutive, non-overlapping inclusive whole-second ranges covering ``[lo, hi]``."""
    span = int((hi - lo).total_seconds()) + 1
    parts = min(parts, span)
    edges = [lo + timedelta(seconds=span * i // parts) for i in range(parts + 1)]
    return [(edges[i], edges[i + 1] - _SECOND) for i in range(parts)]
