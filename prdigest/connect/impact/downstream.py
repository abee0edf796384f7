"""A downstream repository read at its current commit, and its index cached by that commit in the state store.

A downstream is a checkout (``path:``: its files as they are, keyed by their content, HEAD named when it is a
git repository) or a remote (``git:`` + ``ref:``: a bare shallow clone kept under the state folder, fetched
once per run, read at the fetched commit with ``git cat-file --batch``, no work tree). Only the downstream's
own packages are read (``packages:``; default: every top-level folder with an ``__init__.py``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import orjson

from prdigest.collect.git.argv import PROTOCOL_CONFIG, Remote, git_env, location_problem, ref_problem, sha_problem
from prdigest.connect.impact import checkout
from prdigest.connect.impact.index import INDEX_VERSION, Use, resolve_uses
from prdigest.connect.impact.summaries import collector_paused, summarize_files
from prdigest.connect.impact.summary_cache import SummaryCache
from prdigest.kernel.errors import DownstreamError
from prdigest.kernel.storage import Store
from prdigest.kernel.text import redact_url

log = logging.getLogger(__name__)

COMPONENT = "downstream-index"
MIGRATIONS = [
    """CREATE TABLE downstream_index (
         key TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         commit_sha TEXT NOT NULL,
         created_at TEXT NOT NULL,
         data TEXT NOT NULL
       )""",
]
GIT_TIMEOUT = 600


@dataclass(frozen=True)
class DownstreamSpec:
    """Where a downstream is and what to read of it (from the readers file, or ``digest impact``)."""

    name: str
    path: str | None = None
    git: str | None = None
    ref: str = "main"
    packages: tuple[str, ...] = ()
    upstream: tuple[str, ...] = ()


@dataclass
class DownstreamIndex:
    """Every use a downstream makes of the upstream, at one commit."""

    name: str
    commit: str
    files: int
    uses: list[Use]
    #: Files that did not parse (``path: error``): they contribute no uses.
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cached: bool = False
    #: The upstream's import packages the uses were read for.
    upstream: tuple[str, ...] = ()
    #: Files parsed to build it (the others' contents were parsed for an earlier index, or for another path).
    parsed: int = 0

    def data(self) -> str:
        payload = {"version": INDEX_VERSION, "files": self.files, "errors": self.errors,
                   "uses": [u.row() for u in self.uses]}
        try:  # the C encoder: a tenth of the time on tens of thousands of rows, the same values read back
            return orjson.dumps(payload).decode()
        except orjson.JSONEncodeError:  # a string it refuses (a lone surrogate): the stdlib escapes it
            return json.dumps(payload, separators=(",", ":"))

    @classmethod
    def from_data(cls, name: str, commit: str, data: str) -> "DownstreamIndex | None":
        try:
            payload = orjson.loads(data)  # a warm index is tens of thousands of rows: the C decoder, same values
        except orjson.JSONDecodeError:  # an escaped lone surrogate (the stdlib's encoding), which it refuses
            payload = json.loads(data)
        if payload.get("version") != INDEX_VERSION:
            return None
        with collector_paused():
            uses = [Use.from_row(r) for r in payload["uses"]]
        return cls(name, commit, payload["files"], uses, payload["errors"], cached=True)


def _git(args: Sequence[str], cwd: Path | None = None, what: str = "git", remote: Remote | None = None) -> str:
    remote = remote or Remote("")
    try:
        # Pinned transports; a URL's credentials through the environment only; files the operator's alone.
        done = subprocess.run(["git", *PROTOCOL_CONFIG, *remote.config(), *args], cwd=cwd, capture_output=True,
                              text=True, errors="replace", timeout=GIT_TIMEOUT, env=remote.env(git_env()), check=False,
                              umask=0o077)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DownstreamError(f"{what}: git {' '.join(args[:2])} failed: {exc}") from exc
    if done.returncode != 0:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["exit " + str(done.returncode)]
        raise DownstreamError(f"{what}: git {' '.join(args[:2])} failed: {last}")
    return done.stdout


# --- the files -------------------------------------------------------------------------------------------------


def checkout_files(root: Path, packages: Sequence[str], skipped: list[str] | None = None
                   ) -> Iterator[tuple[str, bytes]]:
    """(path relative to ``root``, content) of every ``.py`` file under the packages of a checkout; what is not
    read (a link out of the tree, a FIFO, a file over the cap) is appended to ``skipped`` (prdigest/connect/
    impact/checkout.py)."""
    return checkout.checkout_files(root, packages, skipped)


def clone_files(clone: Path, commit: str, packages: Sequence[str], skipped: list[str] | None = None
                ) -> Iterator[tuple[str, bytes]]:
    """(path, content) of every ``.py`` file under the packages at ``commit`` of a bare clone: one
    ``ls-tree`` and one ``cat-file --batch`` for all of them. A link or a blob over the size cap is appended
    to ``skipped``, not read."""
    skipped = skipped if skipped is not None else []
    if sha_problem(commit):
        raise DownstreamError(f"{clone}: {sha_problem(commit)}")
    listing = _git(["ls-tree", "-r", "-z", "--end-of-options", commit], cwd=clone, what=str(clone))
    wanted: list[tuple[str, str]] = []
    tops = [p.replace(".", "/") for p in packages]
    for row in listing.split("\0"):
        if not row:
            continue
        meta, path = row.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or not path.endswith(".py"):
            continue
        if tops and not any(path == t + ".py" or path.startswith(t + "/") for t in tops):
            continue
        if not tops and "/" not in path:
            continue
        if mode == "120000":  # a symlink: its blob is a path, maybe out of the tree; never a module to read
            skipped.append(f"{path}: a link")
            continue
        wanted.append((path, sha))
    if not wanted:
        return
    proc = subprocess.Popen(["git", *PROTOCOL_CONFIG, "cat-file", "--batch"], cwd=clone, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=git_env())
    assert proc.stdin is not None and proc.stdout is not None

    def feed() -> None:
        assert proc.stdin is not None
        proc.stdin.write("".join(f"{sha}\n" for _, sha in wanted).encode())
        proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    for path, _ in wanted:
        header = proc.stdout.readline().split()
        size = int(header[2])
        if size > checkout.MAX_FILE:  # read past in chunks, never held whole
            left = size + 1
            while left > 0:
                left -= len(proc.stdout.read(min(left, 1 << 20)) or b"\0" * left)
            skipped.append(f"{path}: larger than {checkout.MAX_FILE:,} bytes ({size:,})")
            continue
        data = proc.stdout.read(size)
        proc.stdout.read(1)
        yield path, data
    writer.join()
    proc.wait()


# --- locating a downstream at its current commit ------------------------------------------------------------------


def clone_dir(state_dir: Path, name: str) -> Path:
    """Where a ``git:`` downstream's clone is kept: beside the state file."""
    return state_dir / "downstreams" / f"{name}.git"


def fetch_clone(spec: DownstreamSpec, state_dir: Path) -> tuple[Path, str]:
    """The kept clone of a ``git:`` downstream, fetched (shallow, once: the caller keeps the answer for the
    run), and the commit ``ref`` now names."""
    assert spec.git
    clone = clone_dir(state_dir, spec.name)
    remote = Remote.parse(spec.git)
    what = f"downstream '{spec.name}' ({redact_url(spec.git)})"
    # The readers file's checks ran already; these guard every other way in (``digest impact``).
    if problem := location_problem(spec.git) or ref_problem(spec.ref):
        raise DownstreamError(f"{what}: {problem}")
    if not (clone / "HEAD").is_file():
        clone.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        clone.mkdir(mode=0o700, parents=True, exist_ok=True)
        _git(["init", "--bare", "--quiet", "--", str(clone)], what=what)
    _git(["fetch", "--quiet", "--depth", "1", "--no-tags", "--", remote.url, spec.ref], cwd=clone, what=what,
         remote=remote)
    commit = _git(["rev-parse", "FETCH_HEAD^{commit}"], cwd=clone, what=what).strip()
    _git(["update-ref", "refs/heads/digest-current", commit], cwd=clone, what=what)  # kept from gc
    return clone, commit


def _head(root: Path) -> str:
    try:
        return _git(["rev-parse", "HEAD"], cwd=root).strip()
    except DownstreamError:
        return ""


def _key(spec: DownstreamSpec, upstream: Sequence[str], content: str) -> str:
    blob = json.dumps([INDEX_VERSION, sorted(spec.packages), sorted(upstream), content])
    return hashlib.sha256(blob.encode()).hexdigest()


def build(name: str, commit: str, files: list[tuple[str, bytes]], upstream: Sequence[str],
          skipped: Sequence[str] = (), store: Store | None = None) -> DownstreamIndex:
    """The index of ``files`` (path, content): summaries, then uses resolved across them; ``skipped`` (files not
    read, ``path: reason``) are named among its errors. With a ``store``, each file's summary is kept by its
    content and a content summarized before is not parsed again."""
    started = time.perf_counter()
    # One process: parsing in worker processes was measured slower in CPU on a shared 2-core machine (pickling
    # every file's summary back costs about what the parse saves; benchmarks/downstream_impact.py).
    summaries, parsed = summarize_files(files, upstream, SummaryCache(store, upstream) if store is not None else None)
    with collector_paused():
        uses = resolve_uses(summaries, upstream)
    errors = [*skipped, *(f"{s.path}: {s.error}" for s in summaries if s.error)]
    return DownstreamIndex(name, commit, len(files), uses, errors, time.perf_counter() - started, parsed=parsed)


def _cached(store: Store | None, key: str) -> str | None:
    if store is None:
        return None
    store.migrate(COMPONENT, MIGRATIONS)
    row = store.fetchone("SELECT data FROM downstream_index WHERE key = ?", (key,))
    return row[0] if row else None


def _keep(store: Store | None, key: str, index: DownstreamIndex) -> None:
    if store is None:
        return
    store.execute("INSERT INTO downstream_index (key, name, commit_sha, created_at, data) VALUES (?, ?, ?, ?, ?) "
                  "ON CONFLICT (key) DO NOTHING",
                  (key, index.name, index.commit, datetime.now(timezone.utc).isoformat(), index.data()))


def load_index(spec: DownstreamSpec, upstream: Sequence[str], *, store: Store | None = None,
               state_dir: Path | None = None) -> DownstreamIndex:
    """The downstream's index at its current commit: from the state store when this commit (a checkout:
    these file contents) was indexed before, else built and kept. Raises :class:`DownstreamError`, and only it:
    whatever one downstream's tree does, the other readers' downstreams are still read."""
    try:
        return _load_index(spec, upstream, store=store, state_dir=state_dir)
    except DownstreamError:
        raise
    except (OSError, ValueError, RecursionError, MemoryError, subprocess.SubprocessError) as exc:
        raise DownstreamError(f"downstream '{spec.name}': cannot be indexed ({type(exc).__name__}: "
                              f"{str(exc)[:200]})") from exc


def _load_index(spec: DownstreamSpec, upstream: Sequence[str], *, store: Store | None,
                state_dir: Path | None) -> DownstreamIndex:
    started = time.perf_counter()
    upstream = tuple(spec.upstream or upstream)
    if spec.path:
        root = Path(spec.path).expanduser()
        if not root.is_dir():
            raise DownstreamError(f"downstream '{spec.name}': folder {root} not found")
        skipped: list[str] = []
        files = list(checkout_files(root, spec.packages, skipped))
        digest = hashlib.sha256()
        for path, data in files:
            digest.update(os.fsencode(path) + b"\0" + hashlib.sha1(data).digest())
        for line in skipped:  # what was skipped is named by the index: a change there is a new index
            digest.update(b"skipped\0" + os.fsencode(line))
        commit = _head(root) or "worktree"
        key = _key(spec, upstream, digest.hexdigest())
        cached = _cached(store, key)
        if cached is not None and (index := DownstreamIndex.from_data(spec.name, commit, cached)) is not None:
            index.seconds, index.upstream = time.perf_counter() - started, upstream
            return index
        index = build(spec.name, commit, files, upstream, skipped, store)
    elif spec.git:
        clone, commit = fetch_clone(spec, state_dir or Path(".digest"))
        key = _key(spec, upstream, commit)
        cached = _cached(store, key)
        if cached is not None and (index := DownstreamIndex.from_data(spec.name, commit, cached)) is not None:
            index.seconds, index.upstream = time.perf_counter() - started, upstream
            return index
        packages = list(spec.packages)
        skipped = []
        index = build(spec.name, commit, list(clone_files(clone, commit, packages, skipped)), upstream, skipped,
                      store)
    else:
        raise DownstreamError(f"downstream '{spec.name}' has neither path nor git")
    _keep(store, key, index)
    index.upstream = upstream
    index.seconds = time.perf_counter() - started
    log.info("downstream %s at %s: %d files (%d parsed), %d uses in %.2fs", spec.name, commit[:12], index.files,
             index.parsed, len(index.uses), index.seconds)
    return index
