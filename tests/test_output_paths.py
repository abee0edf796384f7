"""Every file a run writes stays inside its output folder, whatever the names that reach the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prdigest.connect.variants import Filter
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.writes import write_inside, write_under


@pytest.mark.parametrize("relative", ["../pwned.html", "email/../../pwned.html", "/etc/pwned", "email/../../x/y"])
def test_write_inside_refuses_paths_that_leave_the_folder(tmp_path: Path, relative: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="outside the folder"):
        write_inside(out, relative, b"x")
    assert not (tmp_path / "pwned.html").exists()


def test_write_inside_refuses_a_symlink_out_of_the_folder(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "email")
    with pytest.raises(ConfigError):
        write_inside(out, "email/all.html", b"x")
    assert not list(elsewhere.iterdir())


@pytest.mark.parametrize("relative", ["../pwned.html", "email/../../pwned.html", "/etc/pwned", "email/../../x/y", "."])
def test_write_under_refuses_paths_that_leave_the_folder_as_write_inside_does(tmp_path: Path, relative: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="outside the folder"):
        write_under(str(out), relative, b"x")
    assert not (tmp_path / "pwned.html").exists()


def test_write_under_refuses_a_symlink_out_of_the_folder_and_writes_inside_it(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    os.symlink(elsewhere, out / "email")
    with pytest.raises(ConfigError):
        write_under(str(out), "email/all.html", b"x")
    assert not list(elsewhere.iterdir())
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
