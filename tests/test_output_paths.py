"""Every file a run writes stays inside its output folder, whatever the names that reach the path."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from prdigest.connect.variants import Filter
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.writes import write_inside, write_under


def _write_inside(out: Path, relative: str, data: bytes) -> object:
    return write_inside(out, relative, data)


def _write_under(out: Path, relative: str, data: bytes) -> object:
    return write_under(str(out), relative, data)


#: The two ways a run writes under its folder: on Path and on path text.
WRITERS = pytest.mark.parametrize("write", [_write_inside, _write_under], ids=["write_inside", "write_under"])


@WRITERS
@pytest.mark.parametrize("relative", ["../pwned.html", "email/../../pwned.html", "/etc/pwned", "email/../../x/y", "."])
def test_writes_refuse_paths_that_leave_the_folder(tmp_path: Path, relative: str,
                                                   write: Callable[[Path, str, bytes], object]) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="outside the folder"):
        write(out, relative, b"x")
    assert not (tmp_path / "pwned.html").exists()


def _linked_out(tmp_path: Path) -> tuple[Path, Path]:
    """An output folder whose ``email`` is a symlink to a folder beside it, and that folder."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "email")
    return out, elsewhere


@WRITERS
def test_writes_refuse_a_symlink_out_of_the_folder(tmp_path: Path, write: Callable[[Path, str, bytes], object]) -> None:
    out, elsewhere = _linked_out(tmp_path)
    with pytest.raises(ConfigError):
        write(out, "email/all.html", b"x")
    assert not list(elsewhere.iterdir())


def test_write_under_writes_inside_a_folder_with_a_symlink_out_of_it(tmp_path: Path) -> None:
    out, _ = _linked_out(tmp_path)
    written = write_under(str(out), "slack/all.json", b"{}")
    assert written == str(out / "slack" / "all.json") and (out / "slack" / "all.json").read_bytes() == b"{}"
    assert oct((out / "slack" / "all.json").stat().st_mode & 0o777) == "0o644"


def test_variant_keys_are_plain_file_names() -> None:
    # Names are checked when readers are loaded; the key adds only '+', '_' and hex digits to them.
    for flt in (Filter(frozenset({"docs", "site"})), Filter(frozenset({"x" * 80}), frozenset({"y"}))):
        assert Path(flt.key).name == flt.key and ".." not in flt.key and "/" not in flt.key


def test_a_run_publishes_world_readable_files_whatever_the_umask(tmp_path: Path) -> None:
    # mkstemp makes 0600 files and a rename keeps the mode: nginx as www-data answered 403 to the archive.
    from flows.media import default_media
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import EditionPipeline
    from renderers.site import build_site

    out = tmp_path / "out"
    options = RunOptions(source="sample", out=str(out), state=str(tmp_path / "state.sqlite"))
    old = os.umask(0o077)
    try:
        EditionPipeline(build_services(options, load_settings(state=options.state), default_media(),
                                       site=build_site)).run()
    finally:
        os.umask(old)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert {"digest.json", "all.html", "index.html"} <= {p.name for p in files}
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {"0o644"}
