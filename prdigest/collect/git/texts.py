"""The full text after the change of the files a prompt shows, read from the clone at each PR's merge commit, so
that each hunk can be widened to its enclosing function (prdigest/draft/packing.py).

A handful of git commands for the whole week: one ``ls-tree`` per merge commit for the blob ids of its Python
files with a hunk, one batched fetch of the blobs a partial clone lacks, and ``cat-file`` for their text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from prdigest.collect.git.argv import sha_problem
from prdigest.collect.git.clone import GitUnavailable, UpstreamClone
from prdigest.collect.git.diff import blob_texts
from prdigest.kernel.models import PullRequest

#: Files read per PR at most (the prompt shows the first hunks only).
MAX_FILES = 12
_WIDENED = (".py", ".pyi")


def after_texts(clone: UpstreamClone, prs: Sequence[PullRequest], max_files: int = MAX_FILES,
                hunks: Mapping[int, Mapping[str, str]] | None = None) -> dict[int, dict[str, str]]:
    """PR number → path → the file's text at the PR's merge commit, for its Python files with a hunk (the source's
    patch, or ``hunks`` read from the clone); a PR without a merge commit, or whose commit the clone lacks, gets
    nothing (its hunks stay as they are)."""
    wanted: dict[int, tuple[str, list[str]]] = {}
    for pr in prs:
        read = (hunks or {}).get(pr.number, {})
        paths = [f.path for f in pr.files if (f.patch or f.path in read) and f.path.endswith(_WIDENED)
                 and f.status != "removed"]
        # The sha reaches git's argv: only a commit id (a PR built by model_copy skipped the model's check).
        if pr.merge_commit and paths and sha_problem(pr.merge_commit) is None:
            wanted[pr.number] = (pr.merge_commit, paths[:max_files])
    oids: dict[tuple[int, str], str] = {}
    for number, (sha, paths) in wanted.items():
        try:
            listing = clone.run(["ls-tree", "-z", "--end-of-options", sha, "--", *paths], what="ls-tree")
        except GitUnavailable:
            continue  # the commit is not in the clone: the facts step said so already
        for item in listing.split(b"\0"):
            meta, _, path = item.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob":
                oids[(number, path.decode("utf-8", "replace"))] = parts[2].decode()
    if not oids:
        return {}
    clone.fetch_blobs(oids.values())
    texts = blob_texts(clone, set(oids.values()))
    out: dict[int, dict[str, str]] = {}
    for (number, name), oid in oids.items():
        text, _ = texts.get(oid, (None, ""))
        if text is not None:
            out.setdefault(number, {})[name] = text
    return out


def tree_texts(clone: UpstreamClone, sha: str, wanted: Callable[[str], bool]) -> dict[str, tuple[str | None, str]]:
    """Blob id → (text, problem) of every file of the tree at ``sha`` whose path ``wanted`` keeps (a partial
    clone fetches them first); raises :class:`GitUnavailable` when git cannot list or read the tree."""
    listing = clone.run(["ls-tree", "-r", "--full-tree", sha], what="ls-tree").decode("utf-8", "replace")
    files = {}
    for line in listing.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob" and wanted(path):
            files[parts[2]] = path
    if clone.partial:
        clone.fetch_blobs(files)
    return blob_texts(clone, set(files))
