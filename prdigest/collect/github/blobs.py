"""Facts from the full files without a clone: each PR's changed files before and after, read through the GitHub
API at the merge commit and its first parent, so signature, field and re-export facts are exact (not the
patches' partial ones).

Only the files the facts engine reads are fetched (Python, kernels, pins, build files); each is one contents
request per side (none for the side an added or removed file lacks), run on the source's worker threads. A
merge commit's facts are cached by the facts step (``prdigest/collect/facts/cache.py``), so a warm run asks for
no file at all. Every request is counted in :class:`~prdigest.collect.github.source.CollectStats`.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import quote

from prdigest.collect.facts import build, kernels, pins
from prdigest.collect.git import CommitDiff, FileDiff
from prdigest.collect.git.diff import Status
from prdigest.collect.github.client import Clients
from prdigest.kernel.models import PullRequest

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


@dataclass
class BlobReader:
    """Reads merge commits' changed files through the API; ``requests``: how many it made."""

    clients: Clients
    repo: str
    prs: Mapping[str, PullRequest]
    concurrency: int = 8
    requests: int = 0

    def __call__(self, shas: Sequence[str]) -> tuple[dict[str, CommitDiff], list[str]]:
        """Each merge commit's diff (its first parent to it), and the commits that could not be read."""
        diffs: dict[str, CommitDiff] = {}
        missing: list[str] = []
        with ThreadPoolExecutor(max_workers=max(1, self.concurrency), thread_name_prefix="github-blobs") as pool:
            for sha, diff in zip(shas, pool.map(self._one, shas)):
                if diff is None:
                    missing.append(sha)
                else:
                    diffs[sha] = diff
        return diffs, missing

    def _get(self, url: str, params: dict[str, str] | None = None) -> object | None:
        self.requests += 1  # one thread per commit adds at a time; a lost count only understates
        page = self.clients.get_optional(url + (f"?ref={quote(params['ref'])}" if params else ""))
        return page.items if page is not None else None

    def _text(self, path: str, ref: str) -> tuple[str | None, str]:
        data = self._get(f"/repos/{self.repo}/contents/{quote(path)}", {"ref": ref})
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

    def _one(self, sha: str) -> CommitDiff | None:
        pr = self.prs[sha]
        commit = self._get(f"/repos/{self.repo}/git/commits/{sha}")
        if not isinstance(commit, dict):
            return None
        parents = [p.get("sha") for p in commit.get("parents", []) if isinstance(p, dict)]
        parent = parents[0] if parents else None
        files = []
        for f in pr.files[:MAX_FILES]:
            status = _STATUS.get(f.status, "M")
            old = f.previous_path if status == "R" else None
            if not (read_by_facts(f.path) or (old and read_by_facts(old))):
                files.append(FileDiff(status, f.path, old, skipped="not read", additions=f.additions,
                                      deletions=f.deletions))
                continue
            before, why_before = (None, "") if status == "A" or parent is None else self._text(old or f.path, parent)
            after, why_after = (None, "") if status == "D" else self._text(f.path, sha)
            skipped = why_before if why_before not in ("", "not found") else why_after if why_after not in (
                "", "not found") else ""
            files.append(FileDiff(status, f.path, old, before=before, after=after, skipped=skipped,
                                  additions=f.additions, deletions=f.deletions))
        return CommitDiff(sha, parent, tuple(files))
