"""Where the upstream's clone lives and how it is kept: a bare, blob-less partial clone of a URL in the state
folder (fetched once per run), or a local clone the operator keeps (used as it is).

Everything goes through the git CLI: one subprocess per batch, never one per file. A clone that cannot be
made, fetched or read raises :class:`GitUnavailable`, whose message is one line naming the clone and what to
do; the collect step logs it and goes on with the REST patches.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prdigest.collect.git.argv import PROTOCOL_CONFIG, Remote, git_env, location_problem
from prdigest.kernel.errors import DigestError
from prdigest.kernel.text import redact_url, slug

log = logging.getLogger(__name__)

SETTING = "--git / $DIGEST_GIT"
#: ``https://…``, ``ssh://…``, ``file://…`` and scp-like ``git@host:owner/name``.
_URL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*://|[\w.-]+@[\w.-]+:)")
#: Seconds a clone or fetch may take (the first clone of a large upstream, blob-less, takes a minute or two).
NETWORK_TIMEOUT = 900.0
#: Seconds a local command may take (a week's blobs, a diff of 300 commits).
LOCAL_TIMEOUT = 600.0


class GitUnavailable(DigestError):
    """The upstream clone cannot be made, fetched or read; the run goes on with the REST patches."""


def is_url(spec: str) -> bool:
    """Whether ``--git`` names a remote to clone (else a local clone's folder)."""
    return bool(_URL.match(spec.strip()))


def clone_folder(spec: str, state_dir: Path) -> Path:
    """The folder a URL's bare clone is kept in: ``STATE_DIR/git/<host-owner-name>.git``."""
    readable = redact_url(spec.strip()).split("://", 1)[-1].removesuffix(".git").replace("***", "")
    return state_dir / "git" / f"{slug(readable, limit=120) or 'upstream'}.git"


def _environment() -> dict[str, str]:
    env = git_env()
    # Never ask for a password on a terminal (a private URL without credentials fails at once instead), never
    # read the operator's global hooks or pagers.
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", GIT_ASKPASS="true", LC_ALL="C")
    return env


@dataclass
class UpstreamClone:
    """A git directory to read merge commits from: a kept partial clone of ``url``, or a given local clone."""

    git_dir: Path
    #: The remote this clone was made from; None for a local clone given as a folder (never fetched).
    url: str | None = None
    #: True for a blob-less clone: file contents are fetched from the remote in one batch when read.
    partial: bool = False
    #: The remote a partial clone fetches missing blobs from.
    remote: str = "origin"
    fetched: bool = field(default=False, compare=False)
    #: The subprocesses run so far (the tests and the benchmark count them).
    commands: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        return redact_url(self.url) if self.url else str(self.git_dir)

    def run(self, args: Sequence[str], *, stdin: bytes | None = None, timeout: float = LOCAL_TIMEOUT,
            what: str = "") -> bytes:
        """``git ARGS`` in this clone; its stdout. A failure is :class:`GitUnavailable` naming the clone."""
        self.commands += 1
        # The URL's credentials (if any) reach git through its environment, asked by a constant helper: never
        # in argv, never in the clone's config. umask: what git writes in the state folder is the operator's.
        remote = Remote.parse(self.url or "")
        try:
            done = subprocess.run(["git", *PROTOCOL_CONFIG, *remote.config(), "--git-dir", str(self.git_dir), *args],
                                  input=stdin, capture_output=True, timeout=timeout, env=remote.env(_environment()),
                                  check=False, umask=0o077)
        except FileNotFoundError:
            raise GitUnavailable(f"{SETTING} {self.name}: the git command is not installed; "
                                 "install git or leave --git unset") from None
        except subprocess.TimeoutExpired:
            raise GitUnavailable(f"{SETTING} {self.name}: git {what or args[0]} took over {timeout:.0f} s; "
                                 "check the network or give a local clone") from None
        if done.returncode:
            raise GitUnavailable(f"{SETTING} {self.name}: git {what or args[0]} failed: {_last_line(done.stderr)}")
        return done.stdout

    def fetch(self) -> None:
        """Bring the kept clone up to date (once per run: later calls do nothing). A local clone is not fetched."""
        if self.fetched or self.url is None:
            return
        self.run(["fetch", "--quiet", "--prune", "--no-tags", "--", "origin"], timeout=NETWORK_TIMEOUT, what="fetch")
        self.fetched = True

    def fetch_blobs(self, oids: Iterable[str]) -> None:
        """Fetch these blobs from the remote in one request (a partial clone lacks them); no-op otherwise."""
        wanted = sorted(set(oids))
        if not (self.partial and wanted):
            return
        # What git itself runs to fill a partial clone, but for the whole batch at once (git would fetch each
        # missing blob on its own when read).
        self.run(["-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head",
                  "--recurse-submodules=no", "--filter=blob:none", "--stdin", "--", self.remote],
                 stdin="".join(f"{oid}\n" for oid in wanted).encode(), timeout=NETWORK_TIMEOUT, what="fetch (blobs)")


def _last_line(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return redact_url(lines[-1])[:300] if lines else "no message"


def _run_plain(args: Sequence[str], *, timeout: float, name: str, what: str, remote: Remote | None = None) -> None:
    remote = remote or Remote("")
    try:
        done = subprocess.run(["git", *PROTOCOL_CONFIG, *remote.config(), *args], capture_output=True, timeout=timeout,
                              env=remote.env(_environment()), check=False, umask=0o077)
    except FileNotFoundError:
        raise GitUnavailable(f"{SETTING} {name}: the git command is not installed; install git or leave "
                             "--git unset") from None
    except subprocess.TimeoutExpired:
        raise GitUnavailable(f"{SETTING} {name}: git {what} took over {timeout:.0f} s") from None
    if done.returncode:
        raise GitUnavailable(f"{SETTING} {name}: git {what} failed: {_last_line(done.stderr)}")


def open_clone(spec: str, *, state_dir: Path) -> UpstreamClone:
    """The clone ``--git`` names, ready to read, fetched for this run when it is kept from a URL.

    A URL is cloned (``--bare --filter=blob:none``) into :func:`clone_folder` the first time, and fetched
    every later time; a folder must already be a git repository (a checkout or a bare clone).
    """
    spec = spec.strip()
    if problem := location_problem(spec):
        # Settings refuse such a value before anything runs; this guards every other way in.
        raise GitUnavailable(f"{SETTING} {redact_url(spec)[:80]!r}: {problem}")
    if is_url(spec):
        folder = clone_folder(spec, state_dir)
        name = redact_url(spec)
        remote = Remote.parse(spec)
        if not (folder / "HEAD").is_file():
            folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            partial = folder.with_name(folder.name + ".partial")
            _remove(partial)
            # The clone's config keeps the URL without its credentials (they are passed per command).
            _run_plain(["clone", "--quiet", "--bare", "--filter=blob:none", "--no-tags", "--", remote.url,
                        str(partial)], timeout=NETWORK_TIMEOUT, name=name, what="clone", remote=remote)
            clone = UpstreamClone(partial, url=spec, partial=True)
            # A bare clone fetches no branches by itself: keep every branch (merge commits land on them).
            clone.run(["config", "remote.origin.fetch", "+refs/heads/*:refs/heads/*"], what="config")
            os.replace(partial, folder)  # a clone cut short is never taken for a finished one
            return UpstreamClone(folder, url=spec, partial=True, fetched=True, commands=clone.commands + 1)
        _forget_credentials(folder, remote)
        clone = UpstreamClone(folder, url=spec, partial=True)
        clone.fetch()
        return clone
    folder = Path(spec).expanduser().absolute()  # absolute: never read as an option by ``-C``
    if not folder.is_dir():
        raise GitUnavailable(f"{SETTING} {spec}: no such folder; give a local clone or a URL to clone")
    try:
        out = subprocess.run(["git", *PROTOCOL_CONFIG, "-C", str(folder), "rev-parse", "--absolute-git-dir"],
                             capture_output=True, timeout=LOCAL_TIMEOUT, env=_environment(), check=False)
    except FileNotFoundError:
        raise GitUnavailable(f"{SETTING} {spec}: the git command is not installed") from None
    if out.returncode:
        raise GitUnavailable(f"{SETTING} {spec}: not a git repository ({_last_line(out.stderr)})")
    git_dir = Path(out.stdout.decode().strip())
    clone = UpstreamClone(git_dir, commands=1)
    promisor = clone.run(["config", "--get-regexp", r"^remote\..*\.promisor$"], what="config") \
        if _has_promisor(git_dir) else b""
    for line in promisor.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(" ")
        if value.strip() == "true":
            clone.partial, clone.remote = True, key[len("remote."):-len(".promisor")]
    return clone


def _has_promisor(git_dir: Path) -> bool:
    try:
        return "promisor" in (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def _forget_credentials(folder: Path, remote: Remote) -> None:
    """Take the credentials out of a clone kept by an earlier version (which wrote the URL as given into its
    config) and make its config the operator's alone."""
    config = folder / "config"
    try:
        text = config.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError:
        return
    lines = text.splitlines()
    kept = [f"\turl = {remote.url}" if remote.has_credentials and line.strip().startswith("url = ") else line
            for line in lines]
    if kept != lines:
        config.write_text("\n".join(kept) + "\n", encoding="utf-8", errors="surrogateescape")
    os.chmod(config, 0o600)


def _remove(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
