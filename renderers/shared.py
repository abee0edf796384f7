"""Fragments shared by the variants of one render step.

An entry's view, its wrapped text, its Slack blocks, its Feishu elements and its e-mail HTML are the same in
every variant that holds it. Inside :func:`sharing` (the media's render functions open it over
``RenderContext.shared``, one dictionary per render step) each is made once and reused; outside it, every call
makes its own. Thousands of distinct reader filters then cost one rendering of each entry per medium, plus
each variant's assembly, instead of variants × entries.

A fragment is keyed by the objects it is made from, by identity (the entry, the vocabulary, the view), and by
its plain arguments; each key holds its objects, so an id is never reused for another object while the
dictionary lives. Fragments are immutable (views, strings, tuples) or treated as such (Slack blocks and Feishu
elements, dictionaries no renderer changes after making them).

A fragment made from one variant (its connections) is reused only while that variant is rendered on its media
(the render step renders variant after variant): :func:`latest` keeps only the newest of its kind, so the step
holds one, not one per variant, and its memory stays flat in readers.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_STORE: ContextVar[dict[tuple[Hashable, ...], tuple[tuple[object, ...], Any]] | None] = ContextVar(
    "renderers_shared", default=None)


@contextmanager
def sharing(store: dict | None) -> Iterator[None]:
    """Share fragments through ``store`` (None: share nothing) while the block runs."""
    token = _STORE.set(store)
    try:
        yield
    finally:
        _STORE.reset(token)


def active() -> bool:
    """Whether fragments are shared here (inside :func:`sharing` with a store)."""
    return _STORE.get() is not None


def shared(kind: str, objects: tuple[object, ...], args: tuple[Hashable, ...], make: Callable[[], T]) -> T:
    """``make()`` once per ``kind``, ``objects`` (by identity) and ``args`` within :func:`sharing`."""
    store = _STORE.get()
    if store is None:
        return make()
    key = (kind, *map(id, objects), *args)
    hit = store.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], objects)):
        return hit[1]
    value = make()
    store[key] = (objects, value)
    return value


def latest(kind: str, objects: tuple[object, ...], args: tuple[Hashable, ...], make: Callable[[], T]) -> T:
    """Like :func:`shared`, but only the newest fragment of ``kind`` is kept: one made per variant, reused by
    the variant's media (rendered one after another) and dropped when the next variant's is made."""
    store = _STORE.get()
    if store is None:
        return make()
    slot = (kind,)
    key = (*map(id, objects), *args)
    hit = store.get(slot)
    if hit is not None and hit[1][0] == key and all(a is b for a, b in zip(hit[0], objects)):
        return hit[1][1]
    value = make()
    store[slot] = (objects, (key, value))  # replaces the previous variant's: it is not shown again
    return value
