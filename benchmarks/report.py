"""Write one benchmark's section of BENCHMARKS.md, leaving the other sections as they are."""

from __future__ import annotations

import re
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
HEADER = "# Benchmarks\n\nEach section is written by the script it names; numbers are from one run on the\n" \
         "project's 2-core machine (shared and noisy: compare ratios within a run, not across runs).\n"


def write_section(title: str, body: str, path: Path = BENCHMARKS) -> None:
    """Replace (or append) the ``## title`` section of BENCHMARKS.md with ``body``."""
    text = path.read_text(encoding="utf-8") if path.exists() else HEADER
    section = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(lambda _: section + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text.rstrip() + "\n", encoding="utf-8")
