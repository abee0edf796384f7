"""Drafting an edition's PRs: one path, sequential (concurrency 1) or fanned out over a thread pool bounded
by ``llm_concurrency``, with a requests-per-minute limiter for model-backed drafters.

Threads, not asyncio: the OpenAI client is synchronous and thread-safe, drafting is I/O-bound, and the
core stays free of Prefect so it is testable alone. (Prefect owns the edition's task retries and
caching; this is the fan-out inside the draft task.) One slow or failing PR never blocks the edition:
each PR's failure becomes a placeholder entry, and an optional ``deadline`` gives up on stragglers.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

from prdigest.kernel import progress as progress_hooks
from prdigest.kernel.actions import actions
from prdigest.kernel.models import DraftEntry, Entry, Language, PullRequest, Verdict

log = logging.getLogger(__name__)


class RateLimiter:
    """A token bucket: at most ``rpm`` acquisitions per minute, bursts of up to ``burst``. Thread-safe."""

    def __init__(self, rpm: int, burst: int | None = None) -> None:
        self.rate = rpm / 60.0
        self.capacity = float(burst if burst is not None else max(1, rpm // 60))
        self._tokens = self.capacity
        self._last = time.monotonic()
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Take one token, sleeping until one is available; returns the seconds waited."""
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
            self._last = now
            self._tokens -= 1  # may go negative: the debt is this caller's wait, so callers queue in order
            wait_for = -self._tokens / self.rate if self._tokens < 0 else 0.0
        if wait_for:
            time.sleep(wait_for)
        return wait_for


DraftFn = Callable[[PullRequest, list[str], Language], DraftEntry]


def placeholder_draft(pr: PullRequest, reason: str) -> DraftEntry:
    """A minimal entry for a PR no drafter could handle, marked for the editor."""
    return DraftEntry(
        number=pr.number, headline=pr.title or f"PR #{pr.number}", verdict=Verdict.SKIM,
        rationale=reason, drafter="placeholder", needs_editing=True, warnings=[reason],
    )


def draft_entries(
    prs: list[PullRequest],
    classify: Callable[[PullRequest], list[str]],
    draft: DraftFn,
    language: Language,
    progress: Callable[[int, int], None] | None = None,
    *,
    concurrency: int = 1,
    deadline: float | None = None,
) -> list[Entry]:
    """Classify and draft every PR with up to ``concurrency`` in flight; entries come back in PR order.

    Every PR gets an entry: a drafter exception becomes a placeholder marked needs-editing; with
    ``deadline`` (seconds for the whole step), PRs still unfinished by then get one too and their
    threads are abandoned.
    """
    report = progress or (lambda done, total: progress_hooks.report("draft", done, total))
    subsystems = [classify(pr) for pr in prs]
    drafts: list[DraftEntry | None] = [None] * len(prs)
    total = len(prs)
    report(0, total)
    if not prs:
        return []

    def one(i: int) -> DraftEntry:
        return draft(prs[i], subsystems[i], language)

    pool = ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="draft")
    futures: dict[Future[DraftEntry], int] = {pool.submit(one, i): i for i in range(total)}
    end = None if deadline is None else time.monotonic() + deadline
    done_count = 0
    pending = set(futures)
    try:
        while pending:
            timeout = None if end is None else max(0.0, end - time.monotonic())
            finished, pending = wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)
            if not finished:  # the deadline passed
                break
            for future in finished:
                i = futures[future]
                try:
                    drafts[i] = future.result()
                except Exception as exc:  # one bad PR must not sink the edition; the editor sees why
                    log.exception("drafting PR #%s failed", prs[i].number)
                    drafts[i] = placeholder_draft(prs[i], f"drafting failed: {type(exc).__name__}: {exc}"[:300])
                done_count += 1
                report(done_count, total)
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)
    for future in pending:
        i = futures[future]
        drafts[i] = placeholder_draft(prs[i], f"drafting did not finish within the {deadline:.0f} s deadline")
        done_count += 1
        report(done_count, total)
    return [Entry.from_draft(pr, subs, d).model_copy(update={"action": actions(pr.changes, language)})
            for pr, subs, d in zip(prs, subsystems, drafts) if d is not None]
