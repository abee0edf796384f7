"""Shared fixtures: a clean environment for every test, one Prefect harness per session."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "prdigest" / "data" / "vllm-sample-week.jsonl"

_SECRET_OR_SETTING = ("DIGEST_", "GITHUB_TOKEN", "OPENAI_", "SLACK_", "PREFECT_API_KEY")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's tokens or DIGEST_* settings."""
    for name in list(os.environ):
        if name.startswith(_SECRET_OR_SETTING):
            monkeypatch.delenv(name, raising=False)


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
