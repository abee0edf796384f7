"""Fixtures for the rules proposal: the imaginary acme-labs/kettle checked out on disk, and its week."""

from __future__ import annotations

import shutil
from pathlib import Path

KETTLE = Path(__file__).parent / "fixtures" / "kettle"
KETTLE_REPO = "acme-labs/kettle"


def kettle_tree() -> dict[str, int]:
    """Every file of kettle's tree and its lines (tree.txt)."""
    rows = (line.split("\t", 1) for line in (KETTLE / "tree.txt").read_text(encoding="utf-8").splitlines() if line)
    return {path: int(lines) for lines, path in rows}


def checkout_kettle(root: Path) -> Path:
    """Write kettle's checkout under ``root``: every file with its number of lines, and its .github files."""
    for path, lines in kettle_tree().items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(f"line {i}\n" for i in range(lines - 1)) + "end", encoding="utf-8")
    shutil.copy(KETTLE / "labeler.yml", root / ".github" / "labeler.yml")
    shutil.copy(KETTLE / "CODEOWNERS", root / ".github" / "CODEOWNERS")
    return root
