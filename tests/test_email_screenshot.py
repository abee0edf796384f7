"""The rendered email, looked at the way a reader sees it: headless Chromium at 600 px and 375 px."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.cli import app
from prdigest.connect.variants import plan_variants
from prdigest.readers.file import Reader
from renderers import render_email
from tests.delivery_support import sample_edition

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed")]

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", data[16:24])


def test_screenshot_command_shoots_every_width_and_mode(tmp_path: Path) -> None:
    edition = sample_edition()
    variants, _ = plan_variants(edition, [Reader(id="all", name="All", email="a@example.com")])
    (tmp_path / "email").mkdir()
    (tmp_path / "email" / "all.html").write_text(render_email(edition, variants[0]).html, encoding="utf-8")
    result = CliRunner().invoke(app, ["screenshot", str(tmp_path)])
    assert result.exit_code == 0, result.output
    shots = sorted((tmp_path / "screenshots").glob("*.png"))
    assert [p.name for p in shots] == ["all-375-dark.png", "all-375.png", "all-600-dark.png", "all-600.png"]
    for shot in shots:
        width, height = _png_size(shot)
        assert width in (375, 600) and height > 1000
        # A blank or failed page compresses to a few KB; a rendered digest is far richer.
        assert shot.stat().st_size > 40_000, shot
    light, dark = (tmp_path / "screenshots" / "all-600.png").read_bytes(), \
        (tmp_path / "screenshots" / "all-600-dark.png").read_bytes()
    assert light != dark  # prefers-color-scheme: dark changes the page
    ARTIFACTS.mkdir(exist_ok=True)
    for shot in shots:
        shutil.copy(shot, ARTIFACTS / f"email-{shot.name}")


def test_screenshot_without_rendered_email_is_one_clear_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["screenshot", str(tmp_path)])
    assert result.exit_code == 2 and "run `digest demo` first" in result.output
