"""The real git repository the local GitHub server serves commits and files from: a commit's parents, and the
blob at a path of a commit (each commit's tree listed once, blobs read by one long-lived ``git cat-file``)."""

from __future__ import annotations

import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

#: What the served repository names a commit by (a full or abbreviated sha; nothing else reaches git).
SHA = re.compile(r"[0-9a-f]{7,40}")


@dataclass(frozen=True)
class Entry:
    """One path of a commit's tree: a blob (with its object id and size) or a tree."""

    kind: str
    oid: str
    size: int


class ServedGit:
    """Reads a git repository for the server's handler threads (one lock around the ``cat-file`` pipe)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._lock = threading.Lock()
        self._trees: dict[str, dict[str, Entry] | None] = {}
        self._batch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str) -> bytes | None:
        """Output of git in the repository, or None when it fails."""
        done = subprocess.run(["git", "--git-dir", str(self.git_dir), *args], capture_output=True, check=False)
        return done.stdout if done.returncode == 0 else None

    def commit(self, sha: str) -> tuple[str, list[str]] | None:
        """The full sha of commit ``sha`` and its parents', or None when there is no such commit."""
        line = self.run("rev-list", "--parents", "-n", "1", sha) if SHA.fullmatch(sha) else None
        if not line:
            return None
        full, *parents = line.decode().split()
        return full, parents

    def entry(self, sha: str, path: str) -> Entry | None:
        """What ``path`` is in commit ``sha``'s tree (a blob or a folder), or None."""
        tree = self._tree(sha)
        return None if tree is None else tree.get(path)

    def blob(self, oid: str) -> bytes:
        """The content of blob ``oid`` (from the listing, so it exists)."""
        with self._lock:
            if self._batch is None or self._batch.poll() is not None:
                self._batch = subprocess.Popen(["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            pipe = self._batch
            assert pipe.stdin is not None and pipe.stdout is not None
            pipe.stdin.write(oid.encode() + b"\n")
            pipe.stdin.flush()
            header = pipe.stdout.readline().split()
            data = pipe.stdout.read(int(header[2]))
            pipe.stdout.read(1)  # the newline after the content
            return data

    def close(self) -> None:
        with self._lock:
            if self._batch is not None and self._batch.poll() is None:
                assert self._batch.stdin is not None
                self._batch.stdin.close()
                self._batch.wait(10)
            self._batch = None

    def _tree(self, sha: str) -> dict[str, Entry] | None:
        with self._lock:
            if sha in self._trees:
                return self._trees[sha]
        found = self.commit(sha)
        listing = self.run("ls-tree", "-r", "-t", "-z", "--long", found[0]) if found else None
        tree: dict[str, Entry] | None = None
        if listing is not None:
            tree = {}
            for record in listing.split(b"\0"):
                if not record:
                    continue
                meta, _, name = record.partition(b"\t")
                _mode, kind, oid, size = meta.split()
                # Paths are bytes in git; GitHub shows them as UTF-8 (an undecodable byte becomes U+FFFD).
                tree[name.decode("utf-8", "replace")] = Entry(kind.decode(), oid.decode(),
                                                              int(size) if size.isdigit() else 0)
        with self._lock:
            self._trees[sha] = tree
        return tree
