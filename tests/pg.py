"""A real PostgreSQL server for the tests: Debian's ``postgresql`` binaries, a cluster initialised in a temp
folder, listening on a free port of 127.0.0.1 (password auth) and a unix socket in that folder.

Skipped when the binaries are absent, except in CI (``$CI`` set), where that fails: CI installs them.
Fixtures: ``postgres_server`` (session), ``pg_url`` (a fresh database per test), ``state_location``
(each test once on a SQLite file and once on PostgreSQL).
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import count
from pathlib import Path

import pytest

_DATABASES = count(1)


@dataclass(frozen=True)
class PostgresServer:
    """A running throwaway cluster; ``url(db)`` is a URL with the superuser's password."""

    host: str
    port: int
    user: str
    password: str
    socket_dir: Path
    #: What :meth:`restart` needs: the binaries, the cluster's folder, its log and its server options.
    bindir: Path | None = None
    data: Path | None = None
    log: Path | None = None
    options: str = ""

    def restart(self) -> None:
        """Restart the server as an operator would for a minor upgrade (``pg_ctl restart -m fast``): every
        session is terminated; the server listens again on the same port when this returns."""
        assert self.bindir and self.data and self.log
        subprocess.run(_as_postgres([str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                                     "-o", self.options, "-m", "fast", "-w", "-t", "60", "restart"]),
                       check=True, capture_output=True, timeout=90)
        _wait_ready(self)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{database}"

    def admin(self):  # a psycopg connection to the maintenance database, autocommit
        import psycopg

        return psycopg.connect(self.url(), autocommit=True)


def _binaries() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _as_postgres(argv: list[str]) -> list[str]:
    # PostgreSQL refuses to run as root: run it as the 'postgres' user the Debian package creates.
    return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv


@contextmanager
def throwaway_cluster(prefix: str = "prdigest-pg-") -> Iterator[PostgresServer]:
    """initdb into a temp folder, start the server, yield it; stop it and delete the folder at the end.

    Also what the benchmarks start (benchmarks/delivery_claims.py, team_workers.py); raises
    :class:`RuntimeError` when the binaries are absent or the server does not start."""
    bindir = _binaries()
    if bindir is None:
        raise RuntimeError(MISSING)
    # Not under pytest's tmp folder: that one is 0700 root, which the postgres user cannot traverse.
    root = Path(tempfile.mkdtemp(prefix=prefix))
    data, sockets = root / "data", root / "sock"
    sockets.mkdir()
    password = secrets.token_hex(12)
    (root / "pw").write_text(password + "\n")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
        for path in (sockets, root / "pw"):
            shutil.chown(path, "postgres", "postgres")
    port = _free_port()
    log = root / "server.log"
    try:
        subprocess.run(_as_postgres([str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "-E", "UTF8",
                                     "--locale=C", "--auth-local=trust", "--auth-host=scram-sha-256",
                                     f"--pwfile={root / 'pw'}"]),
                       check=True, capture_output=True, timeout=120)
        # Durability off: a test cluster is thrown away, and fsyncs would dominate the run time.
        options = (f"-p {port} -k {sockets} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                                     "-w", "-t", "60", "start"]), check=True, capture_output=True, timeout=90)
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace") + (log.read_text() if log.exists() else "")
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start PostgreSQL: {detail}") from exc
    server = PostgresServer("127.0.0.1", port, "postgres", password, sockets, bindir, data, log, options)
    try:
        _wait_ready(server)
        yield server
    finally:
        subprocess.run(_as_postgres([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


MISSING = "PostgreSQL binaries not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)"


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """The session's cluster (:func:`throwaway_cluster`); skipped without the binaries, except in CI."""
    if _binaries() is None:
        if os.environ.get("CI"):
            pytest.fail(f"{MISSING}: CI must run the PostgreSQL tests")
        pytest.skip(MISSING)
    with throwaway_cluster() as server:
        yield server


def _wait_ready(server: PostgresServer, seconds: float = 30.0) -> None:
    import psycopg

    deadline = time.monotonic() + seconds
    while True:
        try:
            server.admin().close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


@pytest.fixture
def pg_url(postgres_server: PostgresServer) -> Iterator[str]:
    """A URL (with password) to a new, empty database of its own, dropped after the test."""
    name = f"t{os.getpid()}_{next(_DATABASES)}"
    with postgres_server.admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield postgres_server.url(name)
    with postgres_server.admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=["sqlite", "postgresql"])
def state_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The ``--state`` value of a fresh state store: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "state.sqlite")
    return request.getfixturevalue("pg_url")
