"""The PyGithub client as the collector uses it: retry policy, request pacing, paging, and error mapping.

PyGithub's high-level objects complete themselves lazily (reading a field the payload lacks costs a hidden
GET), so the collector reads raw JSON through ``Github.requester`` (PyGithub's documented escape hatch for
endpoints it does not wrap the way we need) and keeps PyGithub's auth, retry and pacing. That also lets list
endpoints send ``If-None-Match``, which ``PaginatedList`` never does.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

import requests
from github import Auth, Github, GithubException, GithubRetry
from github.GithubException import (
    BadCredentialsException,
    RateLimitExceededExceedsMaxWait,
    RateLimitExceededException,
    UnknownObjectException,
)
from urllib3 import Retry

from prdigest.kernel.errors import ConfigError, SourceError
from prdigest.kernel.text import redact_url

#: GitHub's documented ceiling for REST is 900 points a minute (a GET costs 1) before secondary limits
#: start; search has its own bucket of 30 requests a minute. We stay well under both.
DEFAULT_REQUESTS_PER_MINUTE = 600.0
SEARCH_REQUESTS_PER_MINUTE = 30.0
PER_PAGE = 100

_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


def default_retry(*, max_rate_limit_wait: float = 300.0, secondary_rate_wait: float = 60.0,
                  backoff_factor: float = 1.0, total: int = 6) -> Retry:
    """Retries for a weekly batch job: 5xx, 429 and connection errors with exponential backoff and jitter;
    secondary limits wait ``secondary_rate_wait`` (or ``Retry-After``); the primary limit is waited out only
    when it resets within ``max_rate_limit_wait`` seconds, otherwise PyGithub raises and we stop."""
    return GithubRetry(
        # connect=3: an unreachable --github-url fails within seconds instead of after every retry.
        total=total, connect=min(3, total), backoff_factor=backoff_factor, backoff_jitter=backoff_factor,
        backoff_max=60,
        secondary_rate_wait=secondary_rate_wait, max_rate_limit_wait=max_rate_limit_wait,
        status_forcelist=[429, *range(500, 600)],
    )


def is_loopback(url: str) -> bool:
    """True for a server on this machine (a local mirror or a test stand-in)."""
    return (urlsplit(url).hostname or "") in ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Page:
    """One page of a list endpoint: its items, ETag and the next page's URL; ``items is None`` on 304."""

    items: list[dict[str, Any]] | dict[str, Any] | None
    etag: str | None
    next_url: str | None


class Clients:
    """One PyGithub ``Github`` per thread (its connection object is not safe to share across threads),
    all with the same token, base URL, retry policy and pacing."""

    def __init__(self, base_url: str, token: str | None, *, retry: Retry, timeout: float,
                 seconds_between_requests: float | None) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        self._retry = retry
        self._timeout = timeout
        self._pause = seconds_between_requests
        self._local = threading.local()
        self._all: list[Github] = []
        self._lock = threading.Lock()

    def make(self, seconds_between_requests: float | None) -> Github:
        auth = Auth.Token(self._token) if self._token else None
        # The collector's only POST is a GraphQL query, a read: paced as reads, not as PyGithub's writes (1 s).
        gh = Github(base_url=self.base_url, auth=auth, timeout=int(self._timeout), per_page=PER_PAGE,
                    retry=self._retry, seconds_between_requests=seconds_between_requests,
                    seconds_between_writes=seconds_between_requests)
        with self._lock:
            self._all.append(gh)
        return gh

    def get(self) -> Github:
        """This thread's client."""
        gh = getattr(self._local, "gh", None)
        if gh is None:
            gh = self._local.gh = self.make(self._pause)
        return gh

    def close(self) -> None:
        with self._lock:
            clients, self._all = self._all, []
        for gh in clients:
            gh.close()

    def get_page(self, url: str, params: dict[str, Any] | None = None, etag: str | None = None,
                 gh: Github | None = None) -> Page:
        """GET one page (conditionally when ``etag`` is given); PyGithub retries and paces it."""
        headers = {"If-None-Match": etag} if etag else None
        resp_headers, data = (gh or self.get()).requester.requestJsonAndCheck("GET", url, params, headers)
        found = _NEXT.search(resp_headers.get("link", ""))
        if data is None and etag:
            return Page(None, etag, None)  # 304 Not Modified: free against the primary limit
        return Page(data, resp_headers.get("etag"), found.group(1) if found else None)

    def get_optional(self, url: str, etag: str | None = None) -> Page | None:
        """:meth:`get_page`, or None when the object is gone (404, 410): an issue deleted, transferred or hidden
        from the token is nothing to collect, not a failure of the run."""
        try:
            return self.get_page(url, etag=etag)
        except GithubException as exc:
            if exc.status in (404, 410):
                return None
            raise

    def get_all(self, url: str, params: dict[str, Any] | None = None, etag: str | None = None,
                limit: int | None = None) -> tuple[list[dict[str, Any]] | None, str | None, bool, int]:
        """Every item of a list endpoint, following ``Link: rel="next"``.

        Returns ``(items, first_page_etag, single_page, requests)``; ``items is None`` when the first page
        answered 304 to ``etag``. Stops after ``limit`` items when given.
        """
        first = self.get_page(url, {"per_page": PER_PAGE, **(params or {})}, etag)
        if first.items is None:
            return None, etag, True, 1
        # Page.items is a list on a list endpoint (an object only on search): not checked, hence the ignores
        items: list[dict[str, Any]] = list(first.items)  # type: ignore[arg-type]
        next_url, calls = first.next_url, 1
        while next_url and (limit is None or len(items) < limit):
            page = self.get_page(next_url)
            items.extend(page.items or [])  # type: ignore[arg-type]
            next_url, calls = page.next_url, calls + 1
        return items, first.etag, first.next_url is None, calls


@contextmanager
def github_errors(base_url: str, repo: str, *, state_hint: str = "") -> Iterator[None]:
    """Translate PyGithub/requests failures into one-line user errors; the token never appears in them."""
    where = redact_url(base_url)
    kept = f" (PRs collected so far are kept{state_hint}; a re-run resumes)"
    try:
        yield
    except RateLimitExceededExceedsMaxWait as exc:
        raise SourceError(f"GitHub rate limit for {where} is exhausted; {_reset_hint(exc)}{kept}") from None
    except RateLimitExceededException as exc:
        raise SourceError(f"GitHub rate limit for {where} is exhausted; {_reset_hint(exc)}{kept}") from None
    except BadCredentialsException:
        raise ConfigError(f"GitHub at {where} rejected the token (401 Bad credentials): set GITHUB_TOKEN to a "
                          f"valid token that can read {repo}") from None
    except UnknownObjectException:
        raise ConfigError(f"repository {repo} not found at {where} (or the token cannot see it): check --repo "
                          "and --github-url") from None
    except GithubException as exc:
        if exc.status == 401:
            raise ConfigError(f"GitHub at {where} rejected the token (401): set GITHUB_TOKEN to a valid token "
                              f"that can read {repo}") from None
        if exc.status == 403:
            raise ConfigError(f"GitHub at {where} refused access to {repo} (403: {_message(exc)}): check the "
                              "token's permissions") from None
        raise SourceError(f"GitHub at {where} answered HTTP {exc.status} for {repo}: {_message(exc)}") from None
    except requests.exceptions.RetryError as exc:
        raise SourceError(f"GitHub at {where} kept failing ({_retry_reason(exc)}) after every retry; try again "
                          f"later{kept}") from None
    except (requests.exceptions.ConnectionError, requests.exceptions.Timeout) as exc:
        raise SourceError(f"cannot reach GitHub at {where} ({type(exc).__name__}): check --github-url / "
                          f"DIGEST_GITHUB_URL and the network{kept}") from None


def _message(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    text = str(data.get("message") or exc.message or "no message")
    return text.splitlines()[0][:200]


def _retry_reason(exc: requests.exceptions.RetryError) -> str:
    match = re.search(r"too many (\d+) error responses", str(exc))
    return f"HTTP {match.group(1)}" if match else "repeated errors"


def _reset_hint(exc: GithubException) -> str:
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    reset = headers.get("x-ratelimit-reset")
    if reset and str(reset).isdigit():
        when = datetime.fromtimestamp(int(reset), timezone.utc)
        minutes = max(0, round((when - datetime.now(timezone.utc)).total_seconds() / 60))
        return f"retry after {when:%Y-%m-%d %H:%M} UTC (in about {minutes} min)"
    retry_after = headers.get("retry-after")
    if retry_after:
        return f"retry in {retry_after} s or later"
    return "retry in an hour"
