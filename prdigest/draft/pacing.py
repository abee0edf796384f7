"""The model endpoint's pace, as the endpoint states it: its rate-limit headers and its 429s.

OpenAI (and gateways in front of other providers) announce their limits on every answer:
``x-ratelimit-limit-requests`` / ``-remaining-requests`` / ``-reset-requests`` and the same for tokens, the
reset as a duration (``1s``, ``6m0s``, ``20ms``). A team's own vLLM server announces none, and then nothing
here waits: the drafts go as fast as the concurrency allows. A 429 pauses every request for its
``retry-after-ms`` / ``retry-after`` (the SDK retries the one that got it). ``rpm`` is an optional ceiling of
our own on top (``DIGEST_LLM_RPM``), for an endpoint that limits without saying so.

An answer's headers say what remained when the endpoint admitted the request, which is when it was sent, not
when the answer (a model's seconds later) arrives: what was sent since is taken off again, and an answer older
than one already read teaches nothing.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

#: One part of a reset duration: ``6m0s`` is 6 minutes and 0 seconds; a bare number is seconds.
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)?")
_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, None: 1.0}
#: The longest pause a 429 may impose on every request (the SDK honours no more than this either).
MAX_PAUSE = 120.0


def duration(text: str) -> float | None:
    """Seconds in a reset header (``1s``, ``6m0s``, ``20ms``, ``0.5``); None when it is not a duration."""
    text = text.strip().lower()
    parts = _DURATION.findall(text)
    if not text or "".join(number + unit for number, unit in parts) != text:
        return None
    return sum(float(number) * _UNIT[unit or None] for number, unit in parts)


def _number(headers: Mapping[str, str], key: str) -> float | None:
    try:
        return float(headers[key])
    except (KeyError, ValueError):
        return None


@dataclass
class _Bucket:
    """One limit (requests or tokens) as a bucket refilled at a steady rate, as the endpoint keeps it."""

    limit: float
    #: Units left as of ``at``: what the endpoint said remained, less what was taken since, plus the refill.
    level: float
    #: Units per second: (limit - remaining) refilled over the reset; limit per minute until one is seen.
    rate: float
    at: float

    def _refill(self, now: float) -> None:
        self.level = min(self.limit, self.level + (now - self.at) * self.rate)
        self.at = now

    def wait(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` units are available (0 when they are; capped by the bucket's size)."""
        self._refill(now)
        short = min(cost, self.limit) - self.level
        return short / self.rate if short > 0 else 0.0

    def take(self, cost: float, now: float) -> None:
        self._refill(now)
        self.level -= cost


@dataclass(frozen=True)
class Ticket:
    """One request's turn: when it went, how many requests and tokens had gone before it, the seconds it waited."""

    sent: float
    requests_before: int
    tokens_before: float
    waited: float


def _bucket(headers: Mapping[str, str], kind: str, old: _Bucket | None, now: float) -> _Bucket | None:
    limit = _number(headers, f"x-ratelimit-limit-{kind}")
    remaining = _number(headers, f"x-ratelimit-remaining-{kind}")
    if limit is None or remaining is None or limit <= 0:
        return old
    reset = duration(headers.get(f"x-ratelimit-reset-{kind}", ""))
    if reset and limit > remaining:
        rate = (limit - remaining) / reset
    else:  # full, or no reset said: keep what was learnt, else OpenAI's convention (the limit is per minute)
        rate = old.rate if old is not None else limit / 60.0
    return _Bucket(limit=limit, level=max(0.0, remaining), rate=max(rate, 1e-6), at=now)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The pause a 429 asks for, in seconds (``retry-after-ms`` first, then ``retry-after``), capped."""
    ms = _number(headers, "retry-after-ms")
    seconds = ms / 1000 if ms is not None else _number(headers, "retry-after")
    return None if seconds is None or seconds < 0 else min(seconds, MAX_PAUSE)


class EndpointPacer:
    """Waits before each request only as the endpoint's own limits (or ``rpm``) require. Thread-safe."""

    def __init__(self, rpm: int | None = None) -> None:
        # our own ceiling allows bursts of a second's worth, as the endpoint's buckets do
        self._own = None if rpm is None else _Bucket(limit=max(1.0, rpm / 60), level=max(1.0, rpm / 60),
                                                     rate=rpm / 60.0, at=time.monotonic())
        self._requests: _Bucket | None = None
        self._tokens: _Bucket | None = None
        self._paused_until = 0.0
        self._lock = threading.Lock()
        #: What pacing did, for the run's figures: requests paced, seconds waited, 429s seen.
        self.waits = 0
        self.waited = 0.0
        self.throttled = 0
        self._sent, self._tokens_sent = 0, 0.0
        self._latest = -1  # the newest request whose answer has been read

    @property
    def announced(self) -> bool:
        """True once the endpoint has stated a limit."""
        return self._requests is not None or self._tokens is not None

    def delay(self, tokens: float = 0.0) -> float:
        """Seconds the next request (of about ``tokens`` tokens) must wait; 0 when it may go now."""
        with self._lock:
            return self._delay(tokens, time.monotonic())

    def _delay(self, tokens: float, now: float) -> float:
        delay = max(0.0, self._paused_until - now)
        for bucket, cost in ((self._own, 1.0), (self._requests, 1.0), (self._tokens, tokens)):
            if bucket is not None and cost:
                delay = max(delay, bucket.wait(cost, now))
        return delay

    def acquire(self, tokens: float = 0.0, *, until: float | None = None) -> Ticket:
        """Wait until a request of about ``tokens`` tokens may go and take its share; its :class:`Ticket`.

        With ``until`` (a ``time.monotonic()`` instant), raise :class:`TimeoutError` instead of waiting past it."""
        waited = 0.0
        while True:
            with self._lock:
                now = time.monotonic()
                delay = self._delay(tokens, now)
                if delay <= 0:
                    for bucket, cost in ((self._own, 1.0), (self._requests, 1.0), (self._tokens, tokens)):
                        if bucket is not None:
                            bucket.take(cost, now)
                    if waited:
                        self.waits += 1
                        self.waited += waited
                    ticket = Ticket(now, self._sent, self._tokens_sent, waited)
                    self._sent += 1
                    self._tokens_sent += tokens
                    return ticket
            if until is not None and now + delay > until:
                raise TimeoutError(f"the endpoint's rate limit asks for a {delay:.1f} s wait, past the deadline")
            # Sleep a little at most: another thread's answer may say more has been refilled meanwhile.
            step = min(delay, 1.0)
            time.sleep(step)
            waited += step

    def observe(self, status: int, headers: Mapping[str, str], ticket: Ticket | None = None) -> None:
        """Learn from the answer to ``ticket``'s request: the limits it states (as of when it was sent, less what
        went since) and, for a 429, the pause it asks of every request."""
        lowered = {k.lower(): v for k, v in headers.items()}
        with self._lock:
            now = time.monotonic()
            if ticket is None or ticket.requests_before > self._latest:  # None: an answer to nothing paced here
                sent = now if ticket is None else ticket.sent
                requests = _bucket(lowered, "requests", self._requests, sent)
                tokens = _bucket(lowered, "tokens", self._tokens, sent)
                if ticket is not None:
                    self._latest = ticket.requests_before
                    if requests is not self._requests and requests is not None:
                        requests.take(self._sent - ticket.requests_before - 1, now)
                    if tokens is not self._tokens and tokens is not None:
                        tokens.take(self._tokens_sent - ticket.tokens_before, now)
                self._requests, self._tokens = requests, tokens
            if status == 429:
                self.throttled += 1
                pause = retry_after(lowered)
                if pause is None:  # no pause said: wait for one request's refill, else a second
                    pause = 1.0 / self._requests.rate if self._requests is not None else 1.0
                self._paused_until = max(self._paused_until, now + min(pause, MAX_PAUSE))
