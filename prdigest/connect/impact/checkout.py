"""A downstream checkout's Python files, read as data someone else controls: within the tree only, regular files
only, each capped in size, folders capped in depth; what is not read is named, never fatal.

A checkout may hold a symlink to ``/etc`` or ``/dev/zero``, a FIFO (opening it blocks for ever), a 9 MB generated
module or a folder loop: each is skipped with the reason, and the rest of the tree is still read.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from prdigest.kernel.surrogates import scrub

#: Bytes read of one file at most (a larger one is generated code or data, not a module anyone imports).
MAX_FILE = 2_000_000
#: Folders below a package's top at most.
MAX_DEPTH = 32
_SKIPPED_DIRS = ("__pycache__",)


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _packages(root: Path, packages: Sequence[str]) -> list[str]:
    if packages:
        return list(packages)
    tops = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        # A package is a real folder of the tree (not a link to one elsewhere) with an __init__.py.
        if entry.is_dir(follow_symlinks=False) and os.path.isfile(os.path.join(entry.path, "__init__.py")):
            tops.append(entry.name)
    return tops


def read_file(path: Path, root: Path, max_bytes: int = MAX_FILE) -> tuple[bytes | None, str]:
    """``(content, "")`` of a regular file inside ``root`` (``root`` resolved), or ``(None, reason)``. A link is
    followed only to a regular file inside the tree; a FIFO, a device or a socket is never opened."""
    try:
        info = os.lstat(path)
        target = path
        if stat.S_ISLNK(info.st_mode):
            target = path.resolve()
            if not _within(target, root):
                return None, "a link out of the tree"
            info = os.lstat(target)
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file"
        if info.st_size > max_bytes:
            return None, f"larger than {max_bytes:,} bytes ({info.st_size:,})"
        # O_NOFOLLOW and O_NONBLOCK: a file swapped for a link or a FIFO since the check is refused, not waited on.
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None, "not a regular file"
            with os.fdopen(fd, "rb", closefd=False) as handle:
                data = handle.read(max_bytes + 1)
        finally:
            os.close(fd)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror or type(exc).__name__})"
    if len(data) > max_bytes:
        return None, f"larger than {max_bytes:,} bytes"
    return data, ""


def checkout_files(root: Path, packages: Sequence[str], skipped: list[str] | None = None, *,
                   max_bytes: int = MAX_FILE, max_depth: int = MAX_DEPTH) -> Iterator[tuple[str, bytes]]:
    """(path relative to ``root``, content) of every ``.py`` file under the packages of a checkout; each file
    not read is appended to ``skipped`` as ``path: reason``."""
    skipped = skipped if skipped is not None else []
    real_root = root.resolve()

    def skip(path: Path, reason: str) -> None:
        skipped.append(f"{scrub(_relative(path, root))}: {reason}")  # a name that is not UTF-8 is shown with U+FFFD

    for package in _packages(root, packages):
        top = root / package.replace(".", "/")
        module = top.with_suffix(".py")
        if os.path.lexists(module):
            data, reason = read_file(module, real_root, max_bytes)
            if data is None:
                skip(module, reason)
            else:
                yield _relative(module, root), data
        if not os.path.isdir(top):
            continue
        if not _within(top.resolve(), real_root):
            skip(top, "a link out of the tree")
            continue
        yield from _walk(top, root, real_root, skip, max_bytes, max_depth)


def _walk(top: Path, root: Path, real_root: Path, skip: Callable[[Path, str], None], max_bytes: int,
          max_depth: int) -> Iterator[tuple[str, bytes]]:
    stack: list[tuple[Path, int]] = [(top, 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            skip(folder, f"cannot be listed ({exc.strerror or type(exc).__name__})")
            continue
        below: list[tuple[Path, int]] = []
        for entry in entries:
            path = Path(entry.path)
            if not _utf8(entry.name):
                skip(path, "its name is not UTF-8")
                continue
            if entry.is_dir(follow_symlinks=False):
                if entry.name.startswith(".") or entry.name in _SKIPPED_DIRS:
                    continue
                if depth + 1 > max_depth:
                    skip(path, f"deeper than {max_depth} folders")
                    continue
                below.append((path, depth + 1))
            elif entry.name.endswith(".py"):
                data, reason = read_file(path, real_root, max_bytes)
                if data is None:
                    skip(path, reason)
                else:
                    yield _relative(path, root), data
            # A link to a folder is not followed (it may point out of the tree, or loop).
        stack.extend(reversed(below))


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # a byte that is not UTF-8, kept by the file system decoder as a surrogate
        return False
    return True


def _relative(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()
