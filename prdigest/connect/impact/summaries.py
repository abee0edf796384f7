"""Every file's :class:`~prdigest.connect.impact.index.FileSummary` for one index, the cold path's bulk: each
distinct content parsed and walked once (a tree that vendors or copies a package holds the same bytes under two
paths; every empty ``__init__.py`` is one), with the cyclic garbage collector paused while the trees are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields

from prdigest.connect.impact.index import FileSummary, module_name, summarize

#: The summary's fields that depend on the file's path, not its content.
_PLACE = frozenset({"path", "module", "is_package"})


def summarize_files(files: Iterable[tuple[str, bytes]], upstream: Sequence[str]) -> list[FileSummary]:
    """The summary of each (path, content), in order: the same content is summarized once and its summary
    given to each path holding it (what a summary says depends on the content and ``upstream`` only)."""
    seen: dict[bytes, FileSummary] = {}
    out: list[FileSummary] = []
    with collector_paused():
        for path, data in files:
            first = seen.get(data)
            if first is None:
                first = seen[data] = summarize(path, data, upstream)
                out.append(first)
            else:
                out.append(_moved(first, path))
    return out


def _moved(summary: FileSummary, path: str) -> FileSummary:
    """``summary`` of the same content at ``path``: its own module name, and its own copy of every collection
    (no two files' summaries share a list; the items, tuples and :class:`ClassDef` records, are shared: nothing
    changes them after the walk)."""
    module, is_package = module_name(path)
    values = {f.name: _copy(getattr(summary, f.name)) for f in fields(summary) if f.name not in _PLACE}
    return FileSummary(path=path, module=module, is_package=is_package, **values)


def _copy(value: object) -> object:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, set):
        return set(value)
    if isinstance(value, dict):
        return dict(value)
    return value


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
