"""Shared fixtures: a clean environment for every test, one Prefect harness per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"

_SECRET_OR_SETTING = ("DIGEST_", "GITHUB_TOKEN", "OPENAI_", "SLACK_", "PREFECT_API_KEY")


# Tests under the Prefect harness (~20 s to start) or driving Chromium are slow by nature; the fast subset
# (`pytest -m "not slow"`, under 30 s) leaves them out without each file having to say so.
_SLOW_MARKERS = ("prefect", "browser")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark `slow` every test that uses the Prefect harness or a browser."""
    for item in items:
        if "prefect_api" in getattr(item, "fixturenames", ()) or any(
                item.get_closest_marker(name) for name in _SLOW_MARKERS):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """No test sees the developer's tokens or DIGEST_* settings, and each test has its own state database (every
    run records its edition there: a test must not find another test's edition delivered)."""
    for name in list(os.environ):
        if name.startswith(_SECRET_OR_SETTING):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DIGEST_STATE", str(tmp_path_factory.mktemp("state") / "state.sqlite"))
    # A run tries what a transient failure left pending again after 30 s, 60 s, 120 s: tests keep the passes, not
    # the waits (tests of the waits set their own).
    monkeypatch.setenv("DIGEST_DELIVERY_RETRY_DELAY", "0.05")


@pytest.fixture(scope="session")
def prefect_api():
    """One Prefect test harness (a temporary API server) for the whole session: it takes ~20 s to start."""
    from prefect.testing.utilities import prefect_test_harness

    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture(scope="session")
def sample_records() -> list[dict]:
    """The sample week as raw JSON records (with the human `gold` labels, for measuring only)."""
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]

from tests.pg import pg_url, postgres_server, state_location  # noqa: E402,F401  (a real PostgreSQL, both backends)
