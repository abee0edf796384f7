"""What the state folder keeps is its owner's alone: a new SQLite state file (and its WAL files), its folder and
the record key beside it are created 0600/0700, whatever the umask."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from prdigest.state.store import open_store


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_a_new_sqlite_state_file_and_its_folder_are_the_owners_alone(tmp_path: Path) -> None:
    old = os.umask(0o022)  # the usual umask, under which the file used to be 0644
    try:
        path = tmp_path / "state" / "state.sqlite"
        with open_store(path) as store:
            store.execute("CREATE TABLE t (x INTEGER)")
            store.execute("INSERT INTO t VALUES (1)")
            assert _mode(path) == 0o600 and _mode(path.parent) == 0o700
            for extra in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                if extra.exists():
                    assert _mode(extra) == 0o600, extra
    finally:
        os.umask(old)


def test_an_existing_state_file_keeps_the_mode_its_operator_chose(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    with open_store(path):
        pass
    os.chmod(path, 0o640)  # a team's group-readable choice
    with open_store(path):
        pass
    assert _mode(path) == 0o640
