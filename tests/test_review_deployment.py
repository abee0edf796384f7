"""A deployed edition (prefect.yaml in its one-machine variant, process work pool, a worker started here) is
suspended for review, resumed with ``digest approve``'s function, and finishes without collecting or drafting
again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, SAMPLE
from tests.review_support import stop_group

pytestmark = pytest.mark.prefect

READERS = """\
readers:
  - id: all
    name: All
    email: all@example.com
editors:
  - name: Bo
    email: bo@example.com
"""


def _prefect(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "prefect"), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def _wait_state(client, run_id, predicate, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        run = client.read_flow_run(run_id)
        if run.state and predicate(run.state):
            return run
        time.sleep(0.5)
    raise AssertionError(f"flow run never {what} within {seconds} s; last state: {run.state}")


def test_suspended_deployment_run_resumes_without_collecting_or_drafting_again(prefect_api, tmp_path: Path) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterFlowRunId
    from prefect.deployments import run_deployment
    from prefect.settings import PREFECT_API_URL

    from flows.cli.approval import approve_run, review_text

    pool = f"review-test-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_WORKER_QUERY_SECONDS": "1",
           "PREFECT_WORKER_PREFETCH_SECONDS": "0", "PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW": "ignore",
           "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PWD": str(ROOT)}
    created = _prefect("work-pool", "create", pool, "--type", "process", env=env)
    assert created.returncode == 0, created.stdout + created.stderr
    # The shipped prefect.yaml, deployed onto this test's pool: it must parse and deploy as a team runs it.
    config = yaml.safe_load((ROOT / "prefect.yaml").read_text(encoding="utf-8").replace(
        "name: pr-digest                  #", f"name: {pool}  #"))
    # The one-machine variant documented in prefect.yaml (tests/test_team_deployment.py clones from git).
    config["build"] = None
    config["pull"] = [{"prefect.deployments.steps.set_working_directory": {"directory": str(ROOT)}}]
    (tmp_path / "prefect.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    deployed = _prefect("--no-prompt", "deploy", "--all", "--prefect-file", str(tmp_path / "prefect.yaml"), env=env)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    worker = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "worker", "start", "--pool", pool,
                               "--type", "process"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
        out = tmp_path / "out"
        run = run_deployment("digest-edition/vllm-weekly", timeout=0, parameters={
            "source": f"jsonl:{SAMPLE}", "since": "2026-11-16", "until": "2026-11-17", "approve": "ui",
            "drafter": "offline", "deliver": "outbox", "readers": str(tmp_path / "readers.yaml"), "out": str(out),
            "state": str(tmp_path / "state.sqlite"), "language": "en"})
        with get_client(sync_client=True) as client:
            waiting = _wait_state(client, run.id, lambda s: s.is_paused(), 90, "suspended")
            assert waiting.state.name == "Suspended"
            assert waiting.state.state_details.run_input_keyset["schema"] == "suspended-review-1-schema"
            text = review_text(str(run.id))
            assert "8 draft entries" in text
            draft = json.loads(client.read_flow_run_input(run.id, "pr-digest-draft"))
            rejected = draft["entries"][0]["number"]
            with pytest.raises(Exception, match="not in"):
                approve_run(str(run.id), reject=[1], approver="Bo")
            assert "7 entries approved" in approve_run(str(run.id), reject=[rejected], approver="Bo")
            done = _wait_state(client, run.id, lambda s: s.is_final(), 90, "finished")
            assert done.state.is_completed(), done.state
            from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId
            from prefect.client.schemas.sorting import LogSort

            # A run's last logs reach the API in batches after its state is final: poll until the decision's line
            # (logged late in the run) is there, rather than reading too early.
            deadline = time.monotonic() + 60
            while True:
                logs = [entry.message for entry in client.read_logs(
                    LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id])), sort=LogSort.TIMESTAMP_ASC)]
                if any("reviewed by Bo" in m for m in logs) or time.monotonic() > deadline:
                    break
                time.sleep(1)
            # Quiet, ordered logs (issue 12.8): the resumed pass replays the review without suspending again, so
            # Prefect's "Suspending flow run" is logged once, before the editor's decision, never after it.
            suspending = [i for i, m in enumerate(logs) if m.startswith("Suspending flow run")]
            reviewed = [i for i, m in enumerate(logs) if "reviewed by Bo" in m]
            assert len(suspending) == 1 and len(reviewed) == 1 and suspending[0] < reviewed[0], logs
            assert sum("waiting for an editor" in m for m in logs) == 1, logs
            task_runs = client.read_task_runs(task_run_filter=TaskRunFilter(
                flow_run_id=TaskRunFilterFlowRunId(any_=[run.id])))
        states: dict[str, list[str]] = {}
        for tr in task_runs:
            states.setdefault(tr.name.rsplit("-", 1)[0], []).append(tr.state.name)
        # Executed once before the suspend; after the resume the edition comes from its record in the state store:
        # nothing collected or drafted twice.
        assert states["collect"] == ["Completed"], states
        assert states["classify-and-draft"] == ["Completed"], states
        assert states["render"] == ["Completed"] and states["deliver"] == ["Completed"]
        digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
        assert [e["number"] for e in digest["entries"] if e["status"] == "rejected"] == [rejected]
        assert digest["approver"] == "Bo"
        assert f"/pull/{rejected}" not in (out / "email" / "all.txt").read_text(encoding="utf-8")
    finally:
        stop_group(worker, 15)
