"""The output folder holds exactly one edition: the renderings and outbox files of the edition its
``digest.json`` names, never a mix with an earlier edition's.

A run writes ``DIR/<medium>/<variant>.*`` per variant and ``DIR/outbox/<reader>.*`` per reader; a variant or a
reader of last week that this week does not have used to stay, and be opened (or attached) as this week's.
The archive (``DIR/site/``) is rebuilt whole by :func:`prdigest.kernel.writes.write_tree`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

#: Where the outbox channel writes (prdigest.pipeline.compose.make_channels).
OUTBOX = "outbox"


def edition_in(out: Path) -> str | None:
    """The key of the edition ``DIR/digest.json`` holds, or None (no file, or not one of ours)."""
    try:
        data = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    key = data.get("key") if isinstance(data, dict) else None
    return key if isinstance(key, str) else None


def _files(folder: Path) -> Iterator[tuple[str, bool]]:
    """The regular files and symlinks under ``folder`` (as path text, and whether each is a symlink), one at a time
    (nothing when it is not a real folder)."""
    if folder.is_symlink() or not folder.is_dir():
        return
    # Not rglob: it keeps every path it yielded (to yield none twice), all of them at once. Path text, not Paths:
    # pathlib interns every name it parses (~7,300 files here at 10,000 readers).
    folders = [str(folder)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    yield entry.path, entry.is_symlink()
                elif entry.is_dir(follow_symlinks=False):
                    folders.append(entry.path)


def prune(out: Path, folders: Iterable[str], keep: Iterable[str | Path]) -> list[Path]:
    """Remove every file under ``DIR/<folder>`` not in ``keep``; returns what was removed."""
    # Real paths as strings, and the folder's files looked at one at a time: at 10,000 readers a render step keeps
    # ~7,300 files, and a set of resolved Paths beside a list of the folder's Paths peaked at 7 MiB.
    kept = {os.path.realpath(p) for p in keep}
    removed = [path for name in sorted(set(folders)) for path, link in _files(out / name)
               if link or os.path.realpath(path) not in kept]
    for path in removed:
        os.unlink(path)
    return [Path(path) for path in removed]


def start_edition(out: Path, key: str, folders: Iterable[str]) -> list[Path]:
    """Before an edition's files are written: when ``DIR`` holds another edition, remove that edition's
    renderings (``folders``) and outbox files. A run of the same edition (a resumed delivery) keeps its outbox:
    the ledger does not write a file twice."""
    held = edition_in(out)
    if held is None or held == key:
        return []
    return prune(out, [*folders, OUTBOX], [])
