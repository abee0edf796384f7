"""Progress reporting shared by the CLI (a rich progress bar) and the flow (Prefect logs).

Steps call :func:`report`; whoever drives the run installs a reporter with :func:`reporting`.
A process-wide hook rather than a parameter so flows stay JSON-parametrised and tasks stay pure.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reporter = Callable[[str, int, int], None]

_lock = threading.Lock()
_reporters: list[Reporter] = []


def report(step: str, done: int, total: int) -> None:
    """Tell every installed reporter that ``done`` of ``total`` items of ``step`` are finished."""
    with _lock:
        reporters = list(_reporters)
    for reporter in reporters:
        reporter(step, done, total)


@contextmanager
def reporting(reporter: Reporter) -> Iterator[None]:
    """Install ``reporter`` for the duration of the block."""
    with _lock:
        _reporters.append(reporter)
    try:
        yield
    finally:
        with _lock:
            _reporters.remove(reporter)
