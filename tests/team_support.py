"""Helpers shared by the team-deployment test and the team-workers benchmark: the working tree as a local git
repository (``file://``), the shipped prefect.yaml deployed from it onto a process work pool, and process workers
each with its own PREFECT_HOME and working folder (nothing shared with each other but the Prefect API and the
state database)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from tests.review_support import ROOT, stop_group

PREFECT = str(Path(sys.executable).parent / "prefect")
DIGEST = str(Path(sys.executable).parent / "digest")


def git_repository(dst: Path, extra: dict[str, str] | None = None) -> tuple[str, str]:
    """A git repository at ``dst`` holding the working tree's files (tracked, and new ones not ignored: what the
    tests run against), plus ``extra`` {relative path: text}, in one commit. Returns its file:// URL and commit."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is left out
            (dst / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / rel)
    for rel, text in (extra or {}).items():
        (dst / rel).parent.mkdir(parents=True, exist_ok=True)
        (dst / rel).write_text(text, encoding="utf-8")
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=dst, check=True)
    subprocess.run([*git, "add", "-A"], cwd=dst, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "pr-digest under test"], cwd=dst, check=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=dst, capture_output=True, text=True,
                            check=True).stdout.strip()
    return dst.resolve().as_uri(), commit


def prefect_cli(*args: str, env: dict[str, str], cwd: Path, timeout: float = 240) -> str:
    """Run the ``prefect`` CLI; its output, or AssertionError with it when it fails."""
    done = subprocess.run([PREFECT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"prefect {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout + done.stderr


def deploy_from_git(repo: Path, url: str, pool: str, env: dict[str, str]) -> str:
    """Create ``pool`` (process), set the repository URL variable and deploy the repository's prefect.yaml
    (only the pool's name changed) from ``repo``, as a team's deployer does. Returns the deploy output."""
    prefect_cli("work-pool", "create", pool, "--type", "process", env=env, cwd=repo)
    prefect_cli("variable", "set", "digest_git_url", url, "--overwrite", env=env, cwd=repo)
    config = (repo / "prefect.yaml").read_text(encoding="utf-8")
    config = config.replace("name: pr-digest                  #", f"name: {pool}  #")
    (repo.parent / "prefect.test.yaml").write_text(config, encoding="utf-8")
    return prefect_cli("--no-prompt", "deploy", "--all", "--prefect-file", str(repo.parent / "prefect.test.yaml"),
                       env=env, cwd=repo)


def start_worker(pool: str, home: Path, cwd: Path, env: dict[str, str], log: Path,
                 limit: int | None = None) -> subprocess.Popen:
    """``prefect worker start`` with its own PREFECT_HOME and working folder; polls every second."""
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    worker_env = {**env, "PREFECT_HOME": str(home), "PREFECT_WORKER_QUERY_SECONDS": "1",
                  "PREFECT_WORKER_PREFETCH_SECONDS": "0"}
    args = [PREFECT, "worker", "start", "--pool", pool, "--type", "process"]
    if limit:
        args += ["--limit", str(limit)]
    return subprocess.Popen(args, cwd=cwd, env=worker_env, stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def run_deployment_cli(name: str, params: dict[str, str], env: dict[str, str], cwd: Path) -> str:
    """``prefect deployment run NAME -p k=v …`` exactly as the README says; the new flow run's id."""
    args = ["deployment", "run", name]
    for key, value in params.items():
        args += ["-p", f"{key}={value}"]
    out = prefect_cli(*args, env=env, cwd=cwd)
    found = re.search(r"UUID:\s*([0-9a-f-]{36})", out)
    assert found, out
    return found.group(1)


def wait_state(api: str, run_id: str, types: tuple[str, ...], timeout: float) -> dict[str, Any]:
    """The flow run once its state type is one of ``types`` (or a final one); AssertionError on timeout."""
    final = ("COMPLETED", "FAILED", "CRASHED", "CANCELLED")
    end = time.monotonic() + timeout
    run: dict[str, Any] = {}
    with httpx.Client(base_url=api, timeout=10) as client:
        while time.monotonic() < end:
            run = client.get(f"/flow_runs/{run_id}").json()
            state = run.get("state") or {}
            if state.get("type") in types or state.get("type") in final:
                return run
            time.sleep(0.5)
    raise AssertionError(f"flow run {run_id} not in {types} within {timeout} s: {run.get('state')}")


def flow_run_logs(api: str, run_id: str, *, expect: str = "", wait: float = 60.0) -> str:
    """Every log line of a flow run, in order (paged: the API returns 200 at a time). A run's last logs reach
    the API in batches after its state is final: with ``expect``, poll until that text is there (or ``wait``
    seconds passed) instead of reading too early."""
    deadline = time.monotonic() + wait
    with httpx.Client(base_url=api, timeout=10) as client:
        while True:
            logs: list[dict] = []
            while True:
                page = client.post("/logs/filter", json={"logs": {"flow_run_id": {"any_": [run_id]}},
                                                         "sort": "TIMESTAMP_ASC", "limit": 200,
                                                         "offset": len(logs)}).json()
                logs += page
                if len(page) < 200:
                    break
            text = "\n".join(entry["message"] for entry in logs)
            if not expect or expect in text or time.monotonic() > deadline:
                return text
            time.sleep(1)


def stop(proc: subprocess.Popen) -> None:
    """Stop a worker (and the flow runs it started) as an operator's Ctrl-C would."""
    if proc.poll() is None:
        stop_group(proc, 20)


__all__ = ["DIGEST", "PREFECT", "deploy_from_git", "flow_run_logs", "git_repository", "prefect_cli",
           "run_deployment_cli", "start_worker", "stop", "wait_state"]
