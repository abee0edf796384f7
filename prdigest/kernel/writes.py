"""Files the product writes: atomically (never half a file), mode 0644, and never outside their folder.

The output folder, the archive (``write_tree`` makes a folder exactly a build) and the outbox all write here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from prdigest.kernel.errors import ConfigError

#: Files anyone may read once published (the archive behind nginx, the outbox a person opens).
PUBLISHED_MODE = 0o644


def write_atomic(path: str | Path, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (or its chunks, as they come) to ``path`` through a temporary file and a rename: never half a
    file; mode 0644."""
    # On path text, no Path made: pathlib interns every name it parses, and a run writes ~19,000 files at 10,000
    # readers (the interpreter's table of interned strings grew by ~2 MiB with the churn: issue 38).
    folder, name = os.path.split(os.fspath(path))
    folder = folder or os.curdir
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, bytes):
                handle.write(data)
            else:
                handle.writelines(data)
        os.chmod(tmp, PUBLISHED_MODE)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def inside(out: str, relative: str) -> str:
    """``out`` joined with ``relative`` and resolved (symlinks followed), as text, refusing any path that would land
    outside ``out`` (``..``, absolute, a symlink out, ``out`` itself)."""
    # On path text: write_under's loops write thousands of files and pathlib interns every name it parses (issue 38).
    path = os.path.realpath(os.path.join(out, relative))
    root = os.path.realpath(out)
    if path == root or not path.startswith(root.rstrip(os.sep) + os.sep):
        raise ConfigError(f"refusing to write '{relative}' outside the folder {out} (a bug in a renderer or a "
                          "hostile name; report it)")
    return path


def out_path(out: Path, relative: str) -> Path:
    """``out / relative`` resolved, refusing any path that would land outside ``out`` (:func:`inside`)."""
    return Path(inside(os.fspath(out), relative))


def write_inside(out: Path, relative: str, data: bytes) -> Path:
    """Write a file under ``out``, refusing any path that would resolve outside it."""
    write_atomic(out_path(out, relative), data)
    return out / relative


def write_under(out: str, relative: str, data: bytes) -> str:
    """:func:`write_inside` on path text (``out`` joined with ``relative`` returned as text): no Path made per file,
    for the loops that write thousands (a run's renderings)."""
    write_atomic(inside(out, relative), data)
    return os.path.join(out, relative)


def write_tree(root: Path, files: dict[str, bytes]) -> list[Path]:
    """Make ``root`` exactly ``files`` (paths relative to it): each written atomically unless unchanged (its mtime
    kept, so rsync and ``aws s3 sync`` skip it), every other file there removed. A page or feed an earlier build
    wrote and this one does not (a subsystem whose only entry was retracted since) must not stay published; the
    editions themselves are all rebuilt from the state store, so their permalinks stay."""
    root.mkdir(parents=True, exist_ok=True)
    written = []
    for relative, data in sorted(files.items()):
        target = out_path(root, relative)
        if not (target.is_file() and not target.is_symlink() and target.read_bytes() == data):
            write_atomic(target, data)
        written.append(root / relative)
    keep = {p.resolve() for p in written}
    for path in sorted(root.rglob("*"), reverse=True):
        if path.is_symlink() or (path.is_file() and path.resolve() not in keep):
            path.unlink()
        elif path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
    return written
