"""The spool: each variant's renderings written once, packed, to an unnamed file, and read back one at a time.

Between the render step and delivery the publish step runs (and, in the Prefect flow, a task boundary), and
10,000 readers make thousands of variants: their renderings kept in memory until delivery grew the run's peak
with the readers. The spool keeps them on disk instead, beside the outputs, in a file that has no name (it is
gone when the run ends or crashes, and never shows in the output folder); delivery reads back the variant it is
composing, so a run holds one variant's renderings at a time.
"""

from __future__ import annotations

import logging
import pickle
import tempfile
import threading
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from prdigest.deliver.media import Rendering

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Spooled:
    """Where one variant's packed renderings are in its spool: their offset and length."""

    offset: int
    length: int


class Spool:
    """An append-only file of packed renderings (pickled, zlib level 1: about a tenth of their size as objects)."""

    def __init__(self, folder: Path | None = None) -> None:
        # Beside the outputs rather than in /tmp, which is often memory (tmpfs): the point is to leave memory.
        self._folder = folder
        self._file: IO[bytes] | None = None
        self._end = 0
        self._lock = threading.Lock()  # a flow's tasks run in threads
        self._told = False

    def put(self, renderings: dict[str, Rendering]) -> Spooled | None:
        """Append the renderings (without their files, written by then); None when a payload cannot be pickled
        (a plugin's): the caller keeps those as they are."""
        bare = {name: replace(r, files={}) for name, r in renderings.items()}
        try:
            packed = zlib.compress(pickle.dumps(bare, protocol=pickle.HIGHEST_PROTOCOL), 1)
        except (pickle.PicklingError, TypeError, AttributeError) as exc:
            if not self._told:  # said once per run: such a payload keeps its variants in memory until delivery
                self._told = True
                log.warning("a rendering of variant %s cannot be pickled (%s): it stays in memory until delivery",
                            next((r.variant for r in renderings.values()), "?"), exc)
            return None
        with self._lock:
            if self._file is None:
                folder = self._folder if self._folder is not None and self._folder.is_dir() else None
                self._file = tempfile.TemporaryFile(dir=folder)
            self._file.seek(self._end)
            self._file.write(packed)
            at = Spooled(self._end, len(packed))
            self._end += len(packed)
        return at

    def get(self, at: Spooled) -> dict[str, Rendering]:
        """The renderings put at ``at``, by medium name."""
        with self._lock:
            if self._file is None:
                raise ValueError("the spool is closed: its renderings are gone (render the variants again)")
            self._file.seek(at.offset)
            packed = self._file.read(at.length)
        return pickle.loads(zlib.decompress(packed))

    def close(self) -> None:
        """Drop the file (safe to call twice)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _contents(self) -> bytes:
        with self._lock:
            if self._file is None:
                return b""
            self._file.seek(0)
            return self._file.read(self._end)

    def __reduce__(self):
        # A pickled render result (a Prefect result persisted by a user's settings) carries its renderings.
        return (_restored, (self._contents(),))


def _restored(contents: bytes) -> Spool:
    """A spool holding ``contents`` at the same offsets (unpickling)."""
    spool = Spool()
    if contents:
        spool._file = tempfile.TemporaryFile()
        spool._file.write(contents)
        spool._end = len(contents)
    return spool
