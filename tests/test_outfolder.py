"""The output folder's pruning after a render step: exactly the files not written this time go (nested ones and
symlinks too), looked at one at a time, not held as two sets of paths."""

from __future__ import annotations

import gc
import os
import tracemalloc
from pathlib import Path

from prdigest.pipeline.outfolder import prune


def test_pruning_7000_kept_files_removes_only_the_others_without_holding_every_path(tmp_path: Path) -> None:
    """Failed before: a set of every kept file's resolved Path beside a list of every file in the folders (and
    rglob's own set of what it yielded) traced an 8.1 MiB peak for the files of a 10,000-reader render step."""
    kept = []
    for folder, suffix, n in (("email", "html", 5400), ("slack", "json", 1900)):
        (tmp_path / folder).mkdir()
        for i in range(n):
            path = tmp_path / folder / f"{'0123456789abcdef' * 2}-{i:05d}.{suffix}"
            path.write_bytes(b"x")
            kept.append(path)
    (tmp_path / "slack" / "nested").mkdir()
    stale = [tmp_path / "slack" / "last-week.json", tmp_path / "slack" / "nested" / "deep.json",
             tmp_path / "email" / "link.html"]
    stale[0].write_bytes(b"old")
    stale[1].write_bytes(b"old")
    os.symlink(kept[0], stale[2])  # a symlink goes even when it points at a kept file
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_bytes(b"not ours to prune")
    gc.collect()
    tracemalloc.start()
    try:
        removed = prune(tmp_path, ["email", "slack", "feishu"], kept)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(removed) == sorted(stale)
    assert not any(p.exists() or p.is_symlink() for p in stale)
    assert all(p.is_file() for p in kept) and (tmp_path / "site" / "index.html").is_file()
    assert peak < 3 * 2**20, peak
