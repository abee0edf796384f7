"""Every file a run writes stays inside its output folder, whatever the names that reach the path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from prdigest.errors import ConfigError
from prdigest.pipeline import write_inside
from prdigest.variants import Filter


@pytest.mark.parametrize("relative", ["../pwned.html", "email/../../pwned.html", "/etc/pwned", "email/../../x/y"])
def test_write_inside_refuses_paths_that_leave_the_folder(tmp_path: Path, relative: str) -> None:
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="outside the output folder"):
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


def test_variant_keys_are_plain_file_names() -> None:
    # Names are checked when readers are loaded; the key adds only '+', '_' and hex digits to them.
    for flt in (Filter(frozenset({"docs", "site"})), Filter(frozenset({"x" * 80}), frozenset({"y"}))):
        assert Path(flt.key).name == flt.key and ".." not in flt.key and "/" not in flt.key
