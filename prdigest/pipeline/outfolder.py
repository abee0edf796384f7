"""The output folder holds exactly one edition: the renderings and outbox files of the edition its
``digest.json`` names, never a mix with an earlier edition's.

A run writes ``DIR/<medium>/<variant>.*`` per variant and ``DIR/outbox/<reader>.*`` per reader; a variant or a
reader of last week that this week does not have used to stay, and be opened (or attached) as this week's.
The archive (``DIR/site/``) is rebuilt whole by :func:`prdigest.kernel.writes.write_tree`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
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


def _files(folder: Path) -> list[Path]:
    """The regular files and symlinks under ``folder`` (nothing when it is not a real folder)."""
    if folder.is_symlink() or not folder.is_dir():
        return []
    return [p for p in folder.rglob("*") if p.is_symlink() or p.is_file()]


def prune(out: Path, folders: Iterable[str], keep: Iterable[Path]) -> list[Path]:
    """Remove every file under ``DIR/<folder>`` not in ``keep``; returns what was removed."""
    kept = {p.resolve() for p in keep}
    removed = []
    for name in sorted(set(folders)):
        for path in _files(out / name):
            if path.is_symlink() or path.resolve() not in kept:
                path.unlink()
                removed.append(path)
    return removed


def start_edition(out: Path, key: str, folders: Iterable[str]) -> list[Path]:
    """Before an edition's files are written: when ``DIR`` holds another edition, remove that edition's
    renderings (``folders``) and outbox files. A run of the same edition (a resumed delivery) keeps its outbox:
    the ledger does not write a file twice."""
    held = edition_in(out)
    if held is None or held == key:
        return []
    return prune(out, [*folders, OUTBOX], [])
