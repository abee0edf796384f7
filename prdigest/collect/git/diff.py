"""A week's merge commits read in a handful of git commands: each commit's first parent, the paths it changed
(added, modified, deleted, renamed) and the full text of every changed file before and after.

Six subprocesses for the whole batch, whatever its size: ``cat-file --batch`` for the commits,
``diff-tree --stdin`` for the paths (twice on a partial clone: once to learn which blobs to fetch, once with
rename detection after they are there) and once more for the line counts, one fetch of the missing blobs,
``cat-file --batch-check`` for their sizes and ``cat-file --batch`` for their text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from prdigest.collect.git.clone import UpstreamClone

Status = Literal["A", "M", "D", "R"]
_SHA = re.compile(r"[0-9a-f]{40}")
_NULL = "0" * 40
#: A file larger than this is listed but its text is not read (generated tables, vendored bundles).
MAX_BLOB = 1_000_000
#: Git's own test for binary content: a NUL byte in the first 8,000 bytes.
_SNIFF = 8000
#: Rename detection's similarity threshold (git's default is 50 %).
RENAME_SIMILARITY = "50%"


@dataclass(frozen=True)
class FileDiff:
    """One changed file of a commit: how it changed and its whole text before and after (None when absent,
    binary or too large; ``skipped`` says which)."""

    status: Status
    path: str
    old_path: str | None = None
    before: str | None = None
    after: str | None = None
    #: "binary" or "too large" when a side's text was not read although the file exists there.
    skipped: str = ""
    #: Lines added and removed (git's numstat; 0 and 0 for a binary file).
    additions: int = 0
    deletions: int = 0

    @property
    def before_path(self) -> str:
        return self.old_path or self.path


@dataclass(frozen=True)
class CommitDiff:
    """A merge (or squash) commit against its first parent."""

    sha: str
    parent: str | None
    files: tuple[FileDiff, ...]


@dataclass(frozen=True)
class _Raw:
    status: Status
    path: str
    old_path: str | None
    old_oid: str | None
    new_oid: str | None


def read_commits(clone: UpstreamClone, shas: Iterable[str]) -> tuple[dict[str, CommitDiff], list[str]]:
    """Each commit's change against its first parent, by the sha asked for (lower case, full or abbreviated);
    and the shas that are not commits here.

    Raises :class:`~prdigest.collect.git.GitUnavailable` when the clone itself cannot be read.
    """
    wanted = list(dict.fromkeys(s.strip().lower() for s in shas if s and s.strip()))
    if not wanted:
        return {}, []
    parents, names, missing = _parents(clone, wanted)
    if not parents:
        return {}, missing
    if clone.partial:
        # Without rename detection git needs no file contents: learn which blobs to fetch, fetch them at once.
        first = _diff_tree(clone, parents, renames=False)
        clone.fetch_blobs(oid for raws in first.values() for r in raws for oid in (r.old_oid, r.new_oid) if oid)
    raw = _diff_tree(clone, parents, renames=True)
    counts = _numstat(clone, parents)
    texts = _blob_texts(clone, {oid for raws in raw.values() for r in raws for oid in (r.old_oid, r.new_oid) if oid})
    diffs: dict[str, CommitDiff] = {}
    for sha, parent in parents.items():
        files = []
        for r in raw.get(sha, []):
            before, why_before = texts.get(r.old_oid, (None, "")) if r.old_oid else (None, "")
            after, why_after = texts.get(r.new_oid, (None, "")) if r.new_oid else (None, "")
            plus, minus = counts.get(sha, {}).get(r.path, (0, 0))
            files.append(FileDiff(r.status, r.path, r.old_path, before, after, why_before or why_after, plus, minus))
        diffs[sha] = CommitDiff(sha, parent, tuple(files))
    return {asked: diffs[oid] for asked, oid in names.items()}, missing


def _parents(clone: UpstreamClone, wanted: Sequence[str]
             ) -> tuple[dict[str, str | None], dict[str, str], list[str]]:
    """Full sha → first parent (None for a root commit) of every wanted commit found, each asked name's full
    sha, and the names that are no commit."""
    shaped = [s for s in wanted if re.fullmatch(r"[0-9a-f]{7,40}", s)]
    missing = [s for s in wanted if s not in shaped]
    out = clone.run(["cat-file", "--batch"], stdin="".join(f"{s}\n" for s in shaped).encode(), what="cat-file")
    parents: dict[str, str | None] = {}
    names: dict[str, str] = {}
    pos = 0
    for asked in shaped:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode("ascii", "replace").split()
        pos = end + 1
        if len(header) != 3:  # "<name> missing" / "<name> ambiguous"
            missing.append(asked)
            continue
        oid, kind, size = header[0], header[1], int(header[2])
        body = out[pos:pos + size]
        pos += size + 1
        if kind != "commit":
            missing.append(asked)
            continue
        parent = None
        for line in body.split(b"\n\n", 1)[0].split(b"\n"):
            if line.startswith(b"parent "):
                parent = line[7:].decode("ascii")
                break
        parents[oid] = parent
        names[asked] = oid
    return parents, names, missing


def _diff_tree(clone: UpstreamClone, parents: dict[str, str | None], *, renames: bool) -> dict[str, list[_Raw]]:
    """The raw changes of each commit against its first parent (a root commit: against nothing)."""
    lines = "".join(f"{sha} {parent}\n" if parent else f"{sha}\n" for sha, parent in parents.items())
    args = ["diff-tree", "--stdin", "-r", "-z", "--raw", "--root", "--always"]
    args += [f"-M{RENAME_SIMILARITY}"] if renames else ["--no-renames"]
    out = clone.run(args, stdin=lines.encode(), what="diff-tree").decode("utf-8", "surrogateescape")
    tokens = out.split("\0")
    result: dict[str, list[_Raw]] = {}
    current: list[_Raw] | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("\n")
        i += 1
        if not token:
            continue
        if not token.startswith(":"):
            if _SHA.fullmatch(token):
                current = result.setdefault(token, [])
            continue
        _old_mode, new_mode, old_oid, new_oid, status = token[1:].split(" ")
        kind = status[0]
        if kind in "RC":
            old_path, path = tokens[i], tokens[i + 1]
            i += 2
        else:
            old_path, path = None, tokens[i]
            i += 1
        if current is None or "160000" in (_old_mode, new_mode):  # submodules have no blobs
            continue
        old = None if old_oid == _NULL else old_oid
        new = None if new_oid == _NULL else new_oid
        if kind == "C":  # a copy is an addition that looks like another file
            current.append(_Raw("A", path, None, None, new))
        elif kind == "R":
            current.append(_Raw("R", path, old_path, old, new))
        elif kind in "AD":
            current.append(_Raw("A" if kind == "A" else "D", path, None, old, new))
        else:  # M, T (type change)
            current.append(_Raw("M", path, None, old, new))
    return result


def _numstat(clone: UpstreamClone, parents: dict[str, str | None]) -> dict[str, dict[str, tuple[int, int]]]:
    """Lines added and removed per path (the path after the change) of each commit, as GitHub counts them."""
    lines = "".join(f"{sha} {parent}\n" if parent else f"{sha}\n" for sha, parent in parents.items())
    out = clone.run(["diff-tree", "--stdin", "-r", "-z", "--numstat", "--root", f"-M{RENAME_SIMILARITY}"],
                    stdin=lines.encode(), what="diff-tree --numstat").decode("utf-8", "surrogateescape")
    tokens = out.split("\0")
    result: dict[str, dict[str, tuple[int, int]]] = {}
    current: dict[str, tuple[int, int]] | None = None
    i = 0
    while i < len(tokens):
        token = tokens[i].strip("\n")
        i += 1
        if not token:
            continue
        if _SHA.fullmatch(token) and token in parents:
            current = result.setdefault(token, {})
            continue
        parts = token.split("\t")
        if len(parts) != 3 or current is None:
            continue
        plus, minus, path = parts
        if not path:  # a rename: the old and the new path follow
            path = tokens[i + 1]
            i += 2
        current[path] = (int(plus) if plus.isdigit() else 0, int(minus) if minus.isdigit() else 0)
    return result


def _blob_texts(clone: UpstreamClone, oids: set[str]) -> dict[str, tuple[str | None, str]]:
    """oid → (text, "") for text blobs within :data:`MAX_BLOB`; (None, why) for the others."""
    if not oids:
        return {}
    ordered = sorted(oids)
    check = clone.run(["cat-file", "--batch-check"], stdin="".join(f"{o}\n" for o in ordered).encode(),
                      what="cat-file --batch-check").decode("ascii", "replace").splitlines()
    texts: dict[str, tuple[str | None, str]] = {}
    small = []
    for line in check:
        parts = line.split()
        if len(parts) == 3 and parts[1] == "blob":
            if int(parts[2]) <= MAX_BLOB:
                small.append(parts[0])
            else:
                texts[parts[0]] = (None, "too large")
    if not small:
        return texts
    out = clone.run(["cat-file", "--batch"], stdin="".join(f"{o}\n" for o in small).encode(), what="cat-file")
    pos = 0
    while pos < len(out):
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3:
            continue
        size = int(header[2])
        data = out[pos:pos + size]
        pos += size + 1
        if b"\0" in data[:_SNIFF]:
            texts[header[0].decode()] = (None, "binary")
        else:
            texts[header[0].decode()] = (data.decode("utf-8", "replace"), "")
    return texts


def blob_texts(clone: UpstreamClone, oids: set[str]) -> dict[str, tuple[str | None, str]]:
    """oid → (text, "") for each text blob within :data:`MAX_BLOB`, (None, why) for the others: two ``cat-file``
    commands for the whole set (the blobs must be in the clone: :meth:`UpstreamClone.fetch_blobs` first)."""
    return _blob_texts(clone, oids)
