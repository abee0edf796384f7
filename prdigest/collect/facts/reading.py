"""Which PR the facts being read belong to, so that a file skipped for its size or depth is named with its PR.

The readers deep in the facts code (a module's API, a ``setup.py``'s pins) see a file, not the PR: the week's
loop says which PR (or PRs: one merge commit can land several) it reads, and a notice asks :func:`named`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_READING: ContextVar[str] = ContextVar("prdigest_facts_reading", default="")


@contextmanager
def reading(numbers: Iterable[int]) -> Iterator[None]:
    """While the block runs, notices name the PRs ``numbers`` (``PR #12``, ``PRs #12, #14``)."""
    found = sorted(set(numbers))
    label = f"PR{'s' if len(found) > 1 else ''} {', '.join(f'#{n}' for n in found)}" if found else ""
    token = _READING.set(label)
    try:
        yield
    finally:
        _READING.reset(token)


def named(path: str) -> str:
    """``path`` with the PR being read (``PR #12 vllm/x.py``); the path alone outside a PR's facts."""
    label = _READING.get()
    return f"{label} {path}" if label else path
