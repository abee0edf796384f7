"""Screenshots of rendered HTML in headless Chromium, so people can check what readers will see."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from prdigest.kernel.errors import DigestError

_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
          "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
          "--disable-quic"]


def chromium() -> str | None:
    """The Chromium binary on PATH, if any."""
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def screenshot(html: Path, png: Path, *, width: int, height: int = 2400, dark: bool = False) -> Path:
    """Render ``html`` at ``width`` CSS pixels (optionally with prefers-color-scheme: dark) to ``png``."""
    binary = chromium()
    if binary is None:
        raise DigestError("Chromium is not installed (apt-get install chromium): cannot take screenshots")
    png.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        args = [binary, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                f"--screenshot={png.resolve()}", html.resolve().as_uri()]
        if dark:
            args.insert(1, "--force-dark-mode")
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if result.returncode != 0 or not png.exists():
        raise DigestError(f"Chromium could not screenshot {html}: {result.stderr.strip()[-300:]}")
    return png
