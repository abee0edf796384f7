"""What an install trusts: every locked file by its hash, the installer itself pinned, no open-ended 0.x pin."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _locked() -> dict[str, str]:
    """Each requirement line of requirements.lock (``name==version ; marker``) with its continuation lines."""
    blocks: dict[str, str] = {}
    current = None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if re.match(r"[A-Za-z0-9]", line):
            current = line.split(" ", 1)[0]
            blocks[current] = line
        elif current and line.startswith("    --hash="):
            blocks[current] += "\n" + line
        elif not line.startswith("    "):
            current = None
    return blocks


def test_every_locked_requirement_carries_its_hashes():
    locked = _locked()
    assert len(locked) > 100
    unhashed = [name for name, block in locked.items() if not re.search(r"--hash=sha256:[0-9a-f]{64}", block)]
    assert unhashed == []


def test_the_lock_command_in_scripts_setup_generates_hashes():
    setup = (ROOT / "scripts/setup").read_text()
    assert "--generate-hashes" in setup
    assert "--generate-hashes" in (ROOT / "requirements.lock").read_text().splitlines()[1]


def _uv_pin() -> str:
    match = re.search(r"^UV_VERSION=(\d+\.\d+\.\d+)$", (ROOT / "scripts/setup").read_text(), re.MULTILINE)
    assert match, "scripts/setup pins the uv it installs (UV_VERSION=x.y.z)"
    return match[1]


@pytest.mark.parametrize("script", ["scripts/setup", ".ci/run"])
def test_uv_is_installed_at_one_pinned_version(script):
    _uv_pin()
    text = (ROOT / script).read_text()
    installs = [line for line in text.splitlines() if re.search(r"(-m pip install|\$\{pip\[@\]\}).*\buv\b", line)]
    assert installs, f"{script} installs uv"
    for line in installs:
        assert re.search(r'"uv==\$(UV_VERSION|uv_version)"', line), f"{script}: unpinned uv install: {line.strip()}"
    if script == ".ci/run":
        assert "sed -n 's/^UV_VERSION=//p' scripts/setup" in text  # the same version as scripts/setup


def test_direct_dependencies_below_1_0_have_an_upper_bound():
    """A 0.x release may break its API in any minor version: a bare ``>=0.x`` lets it in unseen."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    open_ended = []
    for spec in project["dependencies"]:
        name = re.match(r"[A-Za-z0-9_.\[\]-]+", spec)[0]
        floor = re.search(r">=\s*(\d+)\.", spec)
        if floor and floor[1] == "0" and "<" not in spec:
            open_ended.append(name)
    assert open_ended == []
