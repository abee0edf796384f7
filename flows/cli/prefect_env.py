"""What the command line needs to know about Prefect before importing it (the import alone takes seconds).

Whether a Prefect API is configured decides whether ``digest run`` starts the flow or runs the core loop
directly; and without ``--verbose`` Prefect's console logging is set to CRITICAL through the environment
before Prefect reads its logging configuration, so none of its lines (the temporary server's banner, task
states, a task's cache-key error) reach the terminal, while a run's logs still reach its API.
"""

from __future__ import annotations

import logging
import os
import sys
import tomllib
from pathlib import Path

#: Prefect's console handlers, by the variables that override their level (Prefect's logging.yml keys).
_CONSOLE_LEVELS = ("PREFECT_LOGGING_HANDLERS_CONSOLE_LEVEL", "PREFECT_LOGGING_HANDLERS_CONSOLE_FLOW_RUNS_LEVEL",
                   "PREFECT_LOGGING_HANDLERS_CONSOLE_TASK_RUNS_LEVEL")


def _toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):  # unreadable: Prefect would not use it either
        return {}


def api_url() -> str | None:
    """PREFECT_API_URL as Prefect would find it: the environment, ``prefect.toml`` here, or the active profile
    (``prefect config set PREFECT_API_URL=…``); None when runs would use a temporary in-process server. When
    Prefect is already imported (a test harness, a flow calling the CLI), its own settings answer."""
    if "prefect.settings" in sys.modules:
        from prefect.settings import PREFECT_API_URL

        return str(PREFECT_API_URL.value() or "").strip() or None
    if os.environ.get("PREFECT_API_URL", "").strip():
        return os.environ["PREFECT_API_URL"].strip()
    local = _toml(Path("prefect.toml")).get("api", {})
    if isinstance(local, dict) and str(local.get("url") or "").strip():
        return str(local["url"]).strip()
    home = Path(os.environ.get("PREFECT_HOME") or Path.home() / ".prefect").expanduser()
    profiles = _toml(Path(os.environ.get("PREFECT_PROFILES_PATH") or home / "profiles.toml").expanduser())
    name = os.environ.get("PREFECT_PROFILE") or profiles.get("active") or "ephemeral"
    profile = profiles.get("profiles", {}).get(name, {})
    value = profile.get("PREFECT_API_URL") if isinstance(profile, dict) else None
    return str(value).strip() or None if value else None


#: What to do about an unreachable API when running an edition (it can run without Prefect).
RUN_ADVICE = ("start it (`prefect server start`) or unset PREFECT_API_URL (environment, prefect.toml or the active "
              "profile) to run without Prefect")


def unreachable(url: str, timeout: float = 5.0, advice: str = RUN_ADVICE) -> str | None:
    """Why the Prefect API at ``url`` cannot be reached (one line, ending with ``advice``), or None when it answers
    anything at all (an HTTP error is an answer: Prefect Cloud asks for a key, and Prefect's client says so)."""
    import httpx

    try:
        httpx.get(url.rstrip("/") + "/health", timeout=timeout)
    except httpx.TransportError as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return f"the Prefect API at PREFECT_API_URL={url} is not reachable ({why}): {advice}"
    return None


def quiet_prefect(verbose: bool) -> None:
    """Before Prefect is imported: its console logs only with ``--verbose``; no telemetry; patient startup."""
    os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # Prefect waits 20 s for its temporary API server; a busy laptop or CI runner needs longer (seen: 55 s).
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    for name in _CONSOLE_LEVELS:
        if not verbose and name not in os.environ:
            os.environ[name] = "CRITICAL"
            _ours.add(name)
        elif verbose and name in _ours:  # an earlier quiet command in this process (tests) set it
            os.environ.pop(name, None)
            _ours.discard(name)
    if "prefect" in sys.modules:  # already imported (a test process): its handlers exist, set them directly
        for handler in logging.getLogger().handlers:
            if type(handler).__name__ == "PrefectConsoleHandler":
                handler.setLevel(logging.INFO if verbose else logging.CRITICAL)


#: The variables quiet_prefect set itself (a user's own setting is never changed).
_ours: set[str] = set()
