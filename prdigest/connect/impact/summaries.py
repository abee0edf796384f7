"""Every file's :class:`~prdigest.connect.impact.index.FileSummary` for one index, the cold path's bulk: each
distinct content parsed and walked once (a tree that vendors or copies a package holds the same bytes under two
paths; every empty ``__init__.py`` is one) or read back from the state store when an earlier index parsed it
(prdigest/connect/impact/summary_cache.py), with the cyclic garbage collector paused while the trees are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields, replace

from prdigest.connect.impact.index import FileSummary, module_name, summarize
from prdigest.connect.impact.summary_cache import SummaryCache, content_key, decode, encode


def summarize_files(files: Iterable[tuple[str, bytes]], upstream: Sequence[str],
                    cache: SummaryCache | None = None) -> tuple[list[FileSummary], int]:
    """The summary of each (path, content), in order, and how many files were parsed for them: the same content
    is summarized once and its summary given to each path holding it (what a summary says depends on the
    content and ``upstream`` only); with a ``cache``, a content summarized by an earlier index is read back
    instead, and each new one kept."""
    files = list(files)
    keys = {data: content_key(data) for _, data in files} if cache is not None else {}
    stored = cache.get_many(keys.values()) if cache is not None else {}
    seen: dict[bytes, FileSummary] = {}
    new: dict[str, str] = {}
    out: list[FileSummary] = []
    parsed = 0
    with collector_paused():
        for path, data in files:
            first = seen.get(data)
            if first is not None:
                out.append(_moved(first, path))
                continue
            key = keys.get(data)
            first = _stored(stored.get(key), path) if key is not None else None
            if first is None:
                first = summarize(path, data, upstream)
                parsed += 1
                # a file refused by a cap is not kept: memory or recursion may refuse it one day and not the next
                if key is not None and not first.error:
                    new[key] = encode(first)
            seen[data] = first
            out.append(first)
    if cache is not None:
        cache.put_many(new)
    return out, parsed


def _stored(data: str | None, path: str) -> FileSummary | None:
    """A kept summary read back for ``path``; None when there is none or it cannot be read (parsed again)."""
    if data is None:
        return None
    try:
        return decode(data, path)
    except (ValueError, KeyError, TypeError):
        return None


def _moved(summary: FileSummary, path: str) -> FileSummary:
    """``summary`` of the same content at ``path``: its own module name, and its own copy of every collection
    (no two files' summaries share a list; the items, tuples and :class:`ClassDef` records, are shared: nothing
    changes them after the walk)."""
    module, is_package = module_name(path)
    moved = replace(summary, path=path, module=module, is_package=is_package)
    for f in fields(moved):
        value = getattr(moved, f.name)
        if isinstance(value, (list, set, dict)):
            setattr(moved, f.name, value.copy())
    return moved


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic collector off while trees are parsed and walked, or tens of thousands of uses built: parsing
    allocates millions of AST nodes (no cycles among them: reference counting frees each tree), and each full
    collection it triggered walked every summary kept so far (a sixth of a 3,000-file cold index's CPU time, a
    third of reading a warm one's rows; benchmarks/impact_downstreams.py --index-only). Re-enabled after, as it
    was, whatever happens."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
