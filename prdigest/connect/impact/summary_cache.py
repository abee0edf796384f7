"""Each downstream file's summary kept in the state store by its content, so that a downstream read at a new
commit parses only the files that commit changed: the index's uses are still resolved across every file (a
change in one module can change what another's names resolve to), but the parse and the walk, most of a cold
index's time, are done once per content.

Rows are keyed by the content's sha256 and a version naming :data:`~prdigest.connect.impact.index.INDEX_VERSION`,
the summary's fields and the upstream's packages (what a summary holds depends on nothing else). A row that
cannot be read back (an older writer, a damaged value) is a miss: the file is parsed again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import fields
from datetime import datetime, timezone
from typing import Any

import orjson

from prdigest.connect.impact.index import INDEX_VERSION, ClassDef, FileSummary, module_name
from prdigest.kernel.storage import Store

COMPONENT = "downstream-summaries"
MIGRATIONS = [
    """CREATE TABLE downstream_summary (
         sha TEXT NOT NULL,
         version TEXT NOT NULL,
         data TEXT NOT NULL,
         created_at TEXT NOT NULL,
         PRIMARY KEY (sha, version)
       )""",
]
#: The fields a summary is made of: a field added without a new INDEX_VERSION still misses every older row
#: (read back, it would be empty).
_SHAPE = hashlib.sha256(" ".join(f.name for kind in (FileSummary, ClassDef) for f in fields(kind)).encode()
                        ).hexdigest()[:12]
#: Keys per ``IN (…)`` query (SQLite's default limit on parameters is far above; PostgreSQL's too).
_CHUNK = 500


def content_key(data: bytes) -> str:
    """The key of one file's content."""
    return hashlib.sha256(data).hexdigest()


class SummaryCache:
    """The ``downstream_summary`` table for one upstream: summaries by content, read and written in bulk."""

    def __init__(self, store: Store, upstream: Sequence[str]) -> None:
        store.migrate(COMPONENT, MIGRATIONS)
        self._store = store
        self.version = f"{INDEX_VERSION}:{_SHAPE}:{','.join(sorted(upstream))}"

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        """The stored summary (encoded) of each of ``keys`` that has one."""
        wanted = sorted(set(keys))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start:start + _CHUNK]
            marks = ", ".join("?" for _ in chunk)
            found.update(self._store.fetchall(
                f"SELECT sha, data FROM downstream_summary WHERE version = ? AND sha IN ({marks})",
                (self.version, *chunk)))
        return found

    def put_many(self, rows: dict[str, str]) -> None:
        """Keep each key's encoded summary (replacing a row there: one that could not be read back)."""
        if not rows:
            return
        now = datetime.now(timezone.utc).isoformat()
        self._store.executemany(
            "INSERT INTO downstream_summary (sha, version, data, created_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (sha, version) DO UPDATE SET data = excluded.data, created_at = excluded.created_at",
            [(key, self.version, data, now) for key, data in rows.items()])


def encode(summary: FileSummary) -> str:
    """What ``summary`` says of its content (not its path, module name or error), as JSON."""
    s = summary
    return orjson.dumps({
        "imports": s.imports, "assigns": s.assigns, "setattrs": s.setattrs, "strings": s.strings,
        "calls": s.calls, "reads": s.reads, "attributes": s.attributes, "called": s.called,
        "defines": sorted(s.defines), "functions": s.functions, "aliases": s.aliases, "installs": s.installs,
        "params": s.params, "values": sorted(s.values.items()), "super_calls": s.super_calls,
        "typing_only": sorted(s.typing_only), "guards": s.guards, "registers": s.registers,
        "classes": [[c.name, c.line, c.bases, c.methods, c.own_init, c.end, sorted(c.supers)] for c in s.classes],
    }).decode()


def decode(data: str, path: str) -> FileSummary:
    """The summary of the file at ``path`` whose content was encoded as ``data``; raises ValueError, KeyError
    or TypeError when ``data`` is not what :func:`encode` writes."""
    d: dict[str, Any] = orjson.loads(data)
    module, is_package = module_name(path)
    return FileSummary(
        path, module, is_package,
        imports=[(str(m), n, str(b), int(ln), int(lv)) for m, n, b, ln, lv in d["imports"]],
        classes=[ClassDef(name, line, [tuple(b) for b in bases], [(n, ln, p) for n, ln, p in methods],
                          bool(own_init), end, set(supers))
                 for name, line, bases, methods, own_init, end, supers in d["classes"]],
        assigns=[(tuple(c), ln) for c, ln in d["assigns"]],
        setattrs=[(tuple(c), a, ln) for c, a, ln in d["setattrs"]],
        strings=[(t, ln) for t, ln in d["strings"]],
        calls=[(tuple(c), ln, detail) for c, ln, detail in d["calls"]],
        reads=[(tuple(c), ln) for c, ln in d["reads"]],
        attributes=[(n, ln) for n, ln in d["attributes"]],
        called=[(n, ln) for n, ln in d["called"]],
        defines=set(d["defines"]),
        functions=[(a, b, n) for a, b, n in d["functions"]],
        aliases=[(n, tuple(c), ln) for n, c, ln in d["aliases"]],
        installs=[(tuple(c), n) for c, n in d["installs"]],
        params=dict(d["params"]),
        values={int(ln): n for ln, n in d["values"]},
        super_calls=[(m, ln, detail) for m, ln, detail in d["super_calls"]],
        typing_only={int(ln) for ln in d["typing_only"]},
        guards=[(str(n), int(ln)) for n, ln in d["guards"]],
        registers=[(str(slot), str(t), int(ln)) for slot, t, ln in d["registers"]],
    )
