"""A per-token request limit, in memory: one process's view only.

``digest web`` is one small process behind a reverse proxy, so the limit lives in that process: it resets on
restart and is not shared between several ``digest web`` processes (put nginx's ``limit_req`` in front for
a limit per client address, see README). Keys are the token as sent, forged ones included; the table keeps
the most recent :data:`MAX_KEYS` keys so a flood of random tokens cannot grow it without bound.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

MAX_KEYS = 10_000


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, refilled at ``per_minute`` a minute."""

    def __init__(self, per_minute: float = 30, burst: int = 20, clock=time.monotonic) -> None:  # noqa: ANN001
        self.rate = per_minute / 60.0
        self.burst = burst
        self._clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def allow(self, key: str) -> float:
        """0 when a request for ``key`` may go ahead now, else the seconds until one may."""
        now = self._clock()
        with self._lock:
            tokens, seen = self._buckets.pop(key, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - seen) * self.rate)
            wait = 0.0 if tokens >= 1 else (1 - tokens) / self.rate
            self._buckets[key] = (tokens - 1 if not wait else tokens, now)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
            return wait
