"""Run one function in several threads at once, as workers racing on one state store would: each calls the
``ready`` it is given where the race starts (after opening its connection, say) and a barrier releases them
together there; any exception in a thread fails the test, and a thread that fails releases the others."""

from __future__ import annotations

import threading
from collections.abc import Callable


def race(work: Callable[[Callable[[], None]], None], threads: int = 4, timeout: float = 120.0) -> None:
    """Call ``work(ready)`` in ``threads`` threads, released together at ``ready()``; assert every call returned
    and none raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def ready() -> None:
        start.wait(timeout=60)

    def one() -> None:
        try:
            work(ready)
        except BaseException as exc:  # asserted below
            errors.append(exc)
            start.abort()  # the others stop waiting for a worker that will never arrive: a failure, not a hang

    running = [threading.Thread(target=one) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join(timeout)
    assert not any(t.is_alive() for t in running)
    assert [e for e in errors if not isinstance(e, threading.BrokenBarrierError)] == []
    assert errors == []
