"""Facts from the full files without a clone: each PR's changed files before and after, read through the GitHub
API at the merge commit and its first parent, so signature, field and re-export facts are exact (not the
patches' partial ones).

Only the files the facts engine reads are fetched (Python, kernels, pins, build files). Through GraphQL
(:mod:`.blobql`) the week's merge commits' parents come 100 a query and the files' text 50 a query, whatever
PR they belong to; a file GraphQL cuts short is asked through REST alone. A GitHub without GraphQL gets the
REST requests: one per merge commit and one contents request per side of each file (none for the side an added
or removed file lacks). Requests run on the source's worker threads. A merge commit's facts are cached by the
facts step (``prdigest/collect/facts/cache.py``), so a warm run asks for no file at all. Every request is
counted by route in :class:`~prdigest.collect.github.source.CollectStats`.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from prdigest.collect.facts import build, kernels, pins
from prdigest.collect.git import CommitDiff, FileDiff
from prdigest.collect.git.argv import sha_problem
from prdigest.collect.git.diff import Status
from prdigest.collect.github.blobql import (
    ASK_REST,
    COMMITS_PER_QUERY,
    LEFT_OUT,
    OBJECTS_PER_QUERY,
    NoGraphQL,
    blob_text,
    objects,
    parent_of,
)
from prdigest.collect.github.client import Clients
from prdigest.kernel.models import FileChange, PullRequest

log = logging.getLogger(__name__)

#: Files per PR read through the API (a 3,000-file refactor is read from its patches instead).
MAX_FILES = 300
#: Larger files are skipped like the clone's (prdigest/collect/git/diff.py): GitHub gives no content over 1 MB.
MAX_BYTES = 1_000_000
_STATUS: dict[str, Status] = {"added": "A", "removed": "D", "modified": "M", "renamed": "R", "changed": "M",
                              "copied": "A"}


def read_by_facts(path: str) -> bool:
    """Whether the facts engine reads ``path``: Python, a kernel, a pin or a build file."""
    return (path.endswith((".py", ".pyi")) or kernels.is_kernel_file(path) or pins.is_pin_file(path)
            or build.is_build_file(path))


#: The requests' routes, as :attr:`CollectStats.routes` counts them.
ROUTE_COMMITS_QL = "graphql (merge commits)"
ROUTE_FILES_QL = "graphql (files)"
ROUTE_COMMIT = "git/commits"
ROUTE_CONTENTS = "contents"

Side = tuple[str, str]  # (commit sha, path)

#: A refused query of more files than this is asked again in halves; one of this many goes to REST.
MIN_SPLIT = 6
_WHOLE_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


@dataclass
class BlobReader:
    """Reads merge commits' changed files through the API; ``routes``: the requests it made, by route."""

    clients: Clients
    repo: str
    prs: Mapping[str, PullRequest]
    concurrency: int = 8
    #: Ask GraphQL first (False after a 401/404/410: the REST requests only).
    graphql: bool = True
    routes: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def requests(self) -> int:
        """Every request made so far."""
        return sum(self.routes.values())

    def __call__(self, shas: Sequence[str]) -> tuple[dict[str, CommitDiff], list[str]]:
        """Each merge commit's diff (its first parent to it), and the commits that could not be read."""
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency), thread_name_prefix="github-blobs") as pool:
            parents = self._parents(pool, list(shas))
            plans = {sha: self._plan(sha, parents[sha]) for sha in shas if sha in parents}
            wanted = list(dict.fromkeys(side for plan in plans.values() for _, _, before, after in plan
                                        for side in (before, after) if side is not None))
            texts = self._texts(pool, wanted)
        diffs: dict[str, CommitDiff] = {}
        for sha, plan in plans.items():
            files = []
            for f, read, before, after in plan:
                status = _STATUS.get(f.status, "M")
                old = f.previous_path if status == "R" else None
                if not read:
                    files.append(FileDiff(status, f.path, old, skipped="not read", additions=f.additions,
                                          deletions=f.deletions))
                    continue
                text_before, why_before = texts[before] if before else (None, "")
                text_after, why_after = texts[after] if after else (None, "")
                skipped = why_before if why_before not in ("", "not found") else why_after if why_after not in (
                    "", "not found") else ""
                files.append(FileDiff(status, f.path, old, before=text_before, after=text_after, skipped=skipped,
                                      additions=f.additions, deletions=f.deletions))
            diffs[sha] = CommitDiff(sha, parents[sha], tuple(files))
        return diffs, [sha for sha in shas if sha not in diffs]

    def _count(self, route: str) -> None:
        with self._lock:
            self.routes[route] += 1

    def _parents(self, pool: ThreadPoolExecutor, shas: list[str]) -> dict[str, str | None]:
        """Each readable commit's first parent (None for a root commit); a commit GitHub lacks is left out."""
        found: dict[str, str | None] = {}
        # GraphQL's GitObjectID is a whole sha: an abbreviated one is asked through REST
        whole = [sha for sha in shas if _WHOLE_SHA.fullmatch(sha)]
        rest = list(shas)
        if self.graphql and whole:
            batches = [whole[i:i + COMMITS_PER_QUERY] for i in range(0, len(whole), COMMITS_PER_QUERY)]
            try:
                # The first query alone: a GitHub without GraphQL costs one refused request, not one a batch.
                answers = [self._ql(ROUTE_COMMITS_QL, "oid", batches[0])]
                answers += pool.map(lambda batch: self._ql(ROUTE_COMMITS_QL, "oid", batch), batches[1:])
            except NoGraphQL:
                log.info("no GraphQL at %s: each merge commit and file is asked through REST", self.clients.base_url)
                self.graphql = False
            else:
                rest = [sha for sha in shas if not _WHOLE_SHA.fullmatch(sha)]
                for batch, nodes in zip(batches, answers):
                    for sha, node in zip(batch, nodes or [LEFT_OUT] * len(batch)):
                        if node == LEFT_OUT:
                            rest.append(sha)
                            continue
                        ok, parent = parent_of(node)
                        if ok:
                            found[sha] = parent
        for sha, commit in zip(rest, pool.map(self._rest_commit, rest)):
            if commit is not None:
                found[sha] = commit or None  # "": a root commit
        return found

    def _ql(self, route: str, kind: str, args: Sequence[str]) -> list[Any] | None:
        self._count(route)
        return objects(self.clients, self.repo, kind, args)

    def _rest_commit(self, sha: str) -> str | None:
        """The commit's first parent through REST ("" for a root commit), None when GitHub lacks it."""
        commit = self._get(ROUTE_COMMIT, f"/repos/{self.repo}/git/commits/{sha}")
        if not isinstance(commit, dict):
            return None
        parents = [p.get("sha") for p in commit.get("parents", []) if isinstance(p, dict)]
        return str(parents[0]) if parents and parents[0] else ""

    def _plan(self, sha: str, parent: str | None) -> list[tuple[FileChange, bool, Side | None, Side | None]]:
        """Each of the PR's files (up to :data:`MAX_FILES`), whether the facts engine reads it, and the sides of
        it to ask for (None: that side does not exist)."""
        plan: list[tuple[FileChange, bool, Side | None, Side | None]] = []
        for f in self.prs[sha].files[:MAX_FILES]:
            status = _STATUS.get(f.status, "M")
            old = f.previous_path if status == "R" else None
            if not (read_by_facts(f.path) or (old and read_by_facts(old))):
                plan.append((f, False, None, None))
                continue
            before = None if status == "A" or parent is None else (parent, old or f.path)
            after = None if status == "D" else (sha, f.path)
            plan.append((f, True, before, after))
        return plan

    def _texts(self, pool: ThreadPoolExecutor, wanted: list[Side]) -> dict[Side, tuple[str | None, str]]:
        """The text of each (commit, path), or None and why: GraphQL first, REST for what it did not give."""
        texts: dict[Side, tuple[str | None, str]] = {}
        rest = [side for side in wanted if sha_problem(side[0])]  # never a revision expression but a sha
        asked = [side for side in wanted if not sha_problem(side[0])]
        if self.graphql and asked:
            batches = [asked[i:i + OBJECTS_PER_QUERY] for i in range(0, len(asked), OBJECTS_PER_QUERY)]
            try:
                answers = list(pool.map(self._files_ql, batches))
            except NoGraphQL:
                self.graphql = False
                rest += asked
            else:
                for batch, nodes in zip(batches, answers):
                    for side, node in zip(batch, nodes):
                        text, why = blob_text(node, MAX_BYTES)
                        if why == ASK_REST:
                            rest.append(side)
                        else:
                            texts[side] = (text, why)
        else:
            rest += asked
        for side, answer in zip(rest, pool.map(self._rest_text, rest)):
            texts[side] = answer
        return texts

    def _files_ql(self, batch: Sequence[Side]) -> list[Any]:
        """The blob nodes of ``batch``; a query GitHub refuses (too heavy: a timeout) is asked again in halves,
        down to :data:`MIN_SPLIT` files, and what is still refused is :data:`LEFT_OUT` (asked through REST)."""
        nodes = self._ql(ROUTE_FILES_QL, "expression", [f"{sha}:{path}" for sha, path in batch])
        if nodes is not None:
            return nodes
        if len(batch) <= MIN_SPLIT:
            return [LEFT_OUT] * len(batch)
        half = len(batch) // 2
        return self._files_ql(batch[:half]) + self._files_ql(batch[half:])

    def _get(self, route: str, url: str) -> object | None:
        self._count(route)
        page = self.clients.get_optional(url)
        return page.items if page is not None else None

    def _rest_text(self, side: Side) -> tuple[str | None, str]:
        sha, path = side
        if sha_problem(sha):
            return None, "not found"
        data = self._get(ROUTE_CONTENTS, f"/repos/{self.repo}/contents/{quote(path)}?ref={quote(sha)}")
        if not isinstance(data, dict) or data.get("type") != "file":
            return None, "not found"
        if int(data.get("size", 0)) > MAX_BYTES or data.get("encoding") != "base64":
            return None, "too large"
        try:
            raw = base64.b64decode(str(data.get("content", "")))
        except (binascii.Error, ValueError):
            return None, "unreadable"
        if b"\0" in raw[:8000]:
            return None, "binary"
        return raw.decode("utf-8", "replace"), ""
