"""The sample week's outputs pinned byte for byte: a refactor must not change what readers get.

``tests/golden/sample-week.json`` holds a SHA-256 per output file (``digest.json`` with its two
timestamps blanked) for zh-CN and en. When a change to the outputs is intended, regenerate it with
``UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_outputs.py`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

GOLDEN = Path(__file__).parent / "golden" / "sample-week.json"
_STAMP = re.compile(rb'"(generated_at|approved_at)": "[^"]*"')

pytestmark = pytest.mark.prefect


def _fingerprints(out: Path) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in sorted([out / "digest.json", *(out / "email").glob("*"), *(out / "slack").glob("*")]):
        data = path.read_bytes()
        if path.name == "digest.json":
            data = _STAMP.sub(rb'"\1": ""', data)
        files[path.relative_to(out).as_posix()] = hashlib.sha256(data).hexdigest()
    return files


def _cli():
    from flows.cli import app

    return app


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_sample_week_outputs_are_byte_identical_to_the_pinned_ones(prefect_api, tmp_path: Path,
                                                                   language: str) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(_cli(), ["run", "--source", "sample", "--out", str(out), "--language", language,
                                         "--state", str(tmp_path / "state.sqlite")])
    assert result.exit_code == 0, result.output
    got = _fingerprints(out)
    pinned = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
    if os.environ.get("UPDATE_GOLDEN") == "1":
        pinned[language] = got
        GOLDEN.write_text(json.dumps(pinned, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert got == pinned[language]
