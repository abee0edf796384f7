"""``digest screenshot OUT``: each rendered email as readers will see it, in headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

from flows.cli.terminal import fail
from prdigest.kernel.errors import DigestError


def screenshot(
    out: Path = typer.Argument(Path("out"), help="An output folder of `digest demo` or `digest run`."),
    variant: Optional[str] = typer.Option(None, "--variant", help="Only this variant (default: every one)."),
) -> None:
    """Screenshot each rendered email in headless Chromium at 600 px and 375 px (phone), light and dark,
    into OUT/screenshots/, to check what readers will see."""
    from prdigest.publish.screenshot import screenshot as shoot

    pages = sorted((out / "email").glob(f"{variant or '*'}.html"))
    if not pages:
        raise fail(f"no rendered email under {out / 'email'}: run `digest demo` first")
    try:
        for page in pages:
            for width in (600, 375):
                for dark in (False, True):
                    png = out / "screenshots" / f"{page.stem}-{width}{'-dark' if dark else ''}.png"
                    Console().print(str(shoot(page, png, width=width, dark=dark)))
    except DigestError as exc:
        raise fail(exc) from None
