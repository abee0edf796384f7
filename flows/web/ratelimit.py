"""Request limits, in memory: one process's view only.

``digest web`` is one small process behind a reverse proxy, so the limits live in that process: they reset on
restart and are not shared between several ``digest web`` processes (nginx's ``limit_req`` in front adds a
limit it keeps itself, see README). The app keeps two (``flows/web/app.py``): one per client address, over
every request, and one per reader (a verified token's reader, whatever its purpose or spelling) or, for a
token that does not verify, per client again. So no key is ever made from what a request merely claims,
and a flood of forged tokens can neither grow a table nor push a real reader's bucket out of it; each table
still keeps only the most recent ``max_keys`` keys.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

MAX_KEYS = 10_000


class RateLimiter:
    """A token bucket per key: ``burst`` requests at once, refilled at ``per_minute`` a minute."""

    def __init__(self, per_minute: float = 30, burst: int = 20, clock=time.monotonic,
                 max_keys: int = MAX_KEYS) -> None:
        self.rate = per_minute / 60.0
        self.burst = burst
        self.max_keys = max_keys
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
            while len(self._buckets) > self.max_keys:
                self._buckets.popitem(last=False)
            return wait
