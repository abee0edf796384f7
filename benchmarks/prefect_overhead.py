"""Prefect's own overhead on a 300-PR edition: the ``digest-edition`` flow against the same domain calls
made without Prefect, both against local servers (GitHub instant, LLM answering after 300 ms).

    .venv/bin/python -m benchmarks.prefect_overhead [--prs 300] [--latency 0.3] [--concurrency 16]
                                                    [--repeats 3] [--write]

Setup: a synthetic week of N merged PRs (shaped like vLLM's, classified by the shipped vLLM rules) served by
the local GitHub server (``tests/servers/github_server.py``, no added latency) and the local OpenAI-compatible
server (``tests/servers/openai_server.py``, every answer after ``--latency`` s), each in its own process.
Settings come from the environment, as the flow reads them (``load_settings`` inside the flow): GITHUB_TOKEN,
OPENAI_API_KEY, DIGEST_GITHUB_URL, DIGEST_LLM_BASE_URL, DIGEST_MODEL, DIGEST_LLM_CONCURRENCY, DIGEST_LLM_RPM
(set high so that the rpm limiter does not bind: this measures the fan-out, not the ceiling) and
DIGEST_STATE (a fresh state DB per run: every run is cold, no GitHub or draft cache hits). Drafter openai,
approve auto, delivery to the outbox, 5 readers in 3 filters.

(a) *plain*: the core pipeline's steps (``prdigest.pipeline.edition.EditionPipeline``: collect, draft, new_edition,
auto_approve, render, record, deliver to the outbox), the same object the flow drives, without Prefect. (b) *flow*: ``digest_edition(**flow_parameters(RunOptions(...)))`` under a
Prefect API (``prefect_test_harness``: a real API server in a subprocess, SQLite) started and warmed by a
trivial flow before anything is timed; only the flow call is timed. Runs alternate a, b, a, b, …; one untimed
warm-up of each (a one-day window) first. Reported: medians, the ratio flow / plain (target ≤ 1.5×), the API
start-up time, the flow's task runs, and where the flow's time goes (task-run spans from the API against
the plain run's phases).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# Prefect reads its settings when imported: a private PREFECT_HOME (result storage, local DB, profiles), so
# that the benchmark neither reads nor writes the developer's ~/.prefect.
_PREFECT_HOME = tempfile.mkdtemp(prefix="prefect-overhead-home-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ.pop("PREFECT_API_URL", None)
os.environ.pop("PREFECT_PROFILES_PATH", None)
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_TO_API_WHEN_MISSING_FLOW", "ignore")

from benchmarks.report import write_section  # noqa: E402
from tests.servers.github_server import synthetic_week  # noqa: E402

REPO = "vllm-project/vllm"
GITHUB_TOKEN = "dummy"
MODEL = "bench-model"
SINCE, UNTIL = "2026-11-16", "2026-11-23"  # synthetic_week's default window
WARMUP_UNTIL = "2026-11-17"  # one day of it: the untimed warm-up runs

READERS_YAML = """\
# 5 readers in 3 filters (the benchmark's readers file).
readers:
  - id: kernels-team
    name: Kernels team
    email: kernels@example.com
    slack: "#kernels"
    subsystems: [kernels, attention]
    min_verdict: skim
  - id: kernels-lead
    name: Kernels lead
    email: kernels-lead@example.com
    subsystems: [kernels, attention]
    min_verdict: skim
  - id: core-team
    name: Core team
    email: core@example.com
    slack: "#core"
    subsystems: [scheduler-core, models]
  - id: core-oncall
    name: Core on-call
    email: core-oncall@example.com
    subsystems: [scheduler-core, models]
  - id: everything
    name: Everything
    email: all@example.com
editors:
  - name: Editor
    email: editor@example.com
"""


# ---- the local servers, each in its own process ----------------------------------------------------

class Servers:
    """The GitHub server (no latency) and the OpenAI server (``latency`` per answer) as child processes."""

    def __init__(self, data: Path, latency: float) -> None:
        self._github = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.github_server", "--jsonl", str(data), "--repo", REPO,
             "--token", GITHUB_TOKEN, "--latency", "0"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self._openai = subprocess.Popen(
            [sys.executable, "-m", "tests.servers.openai_server", "--latency", str(latency), "--model", MODEL],
            cwd=ROOT, stdout=subprocess.PIPE, text=True)
        self.github_url = self._github.stdout.readline().strip()  # type: ignore[union-attr]
        line = self._openai.stdout.readline()  # type: ignore[union-attr]
        values = dict(part.split("=", 1) for part in line.split())
        self.llm_base_url, self.llm_api_key = values["OPENAI_BASE_URL"], values["OPENAI_API_KEY"]

    def counts(self) -> tuple[int, int]:
        """(GitHub requests, LLM chat calls) since the last reset."""
        with urllib.request.urlopen(f"{self.github_url}/_test/stats") as resp:
            gh = json.loads(resp.read())["requests"]
        with urllib.request.urlopen(f"{self.llm_base_url.removesuffix('/v1')}/_stats") as resp:
            llm = json.load(resp)["calls"].get("/v1/chat/completions", 0)
        return gh, llm

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(f"{self.github_url}/_test/reset", method="POST")).close()
        root = self.llm_base_url.removesuffix("/v1")
        urllib.request.urlopen(urllib.request.Request(f"{root}/_reset", data=b"{}", method="POST")).close()

    def stop(self) -> None:
        for proc in (self._github, self._openai):
            proc.terminate()
        for proc in (self._github, self._openai):
            proc.wait(10)


# ---- (a) the domain calls without Prefect -----------------------------------------------------------

def plain_edition(options: Any) -> tuple[dict[str, Any], dict[str, float]]:
    """The core loop (``prdigest.pipeline.loop.run_edition``, the same loop the flow runs with each step as a task), run
    directly with each step timed; the summary and each phase's seconds."""
    from flows.media import default_media
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import build_services
    from prdigest.pipeline.edition import EditionPipeline
    from prdigest.pipeline.loop import run_edition
    from renderers.site import build_site

    phases: dict[str, float] = {}

    class Timed:
        """The pipeline's own steps, each timed under the flow's task name."""

        def __init__(self, pipeline: EditionPipeline) -> None:
            self.pipeline = pipeline

        def __getattr__(self, step: str) -> Any:
            call = getattr(self.pipeline, step)
            name = {"draft": "classify-and-draft", "review": "edition + review"}.get(step, step)

            def timed(*args: Any) -> Any:
                started = time.perf_counter()
                try:
                    return call(*args)
                finally:
                    phases[name] = phases.get(name, 0.0) + time.perf_counter() - started
            return timed

    settings = load_settings(**options.settings_overrides())
    services = build_services(options, settings, default_media(), site=build_site)  # as the flow builds them
    try:
        pipeline = EditionPipeline(services)
        summary = run_edition(pipeline, Timed(pipeline))
    finally:
        services.close()
    return {"entries": summary.entries, "published": summary.published, "variants": len(summary.variants),
            "sent": len(summary.sent), "failed": len(summary.failed), "files": len(summary.files)}, phases


# ---- (b) the flow under a Prefect API ------------------------------------------------------------------

def flow_edition(options: Any) -> tuple[dict[str, Any], Any]:
    """``digest_edition(options)``; its summary and flow-run id."""
    from flows.edition import digest_edition, flow_parameters

    state = digest_edition(**flow_parameters(options), return_state=True)
    summary = state.result()
    return {"entries": summary.entries, "published": summary.published, "variants": len(summary.variants),
            "sent": len(summary.sent), "failed": len(summary.failed), "files": len(summary.files)}, \
        state.state_details.flow_run_id


def task_runs(flow_run_id: Any, settle: float = 10.0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The flow run's task runs (name, start, end, state) and the flow run's own span, from the API.

    Task-run states reach the API as events, recorded asynchronously: poll until every task run is final."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    deadline = time.monotonic() + settle
    with get_client(sync_client=True) as client:
        while True:
            runs = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[flow_run_id])))
            if runs and all(r.state and r.state.is_final() and r.end_time for r in runs) \
                    or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        flow_run = client.read_flow_run(flow_run_id)
    rows = [{"name": r.name, "start": r.start_time, "end": r.end_time,
             "state": r.state.name if r.state else "?"} for r in runs]
    return sorted(rows, key=lambda r: r["start"] or datetime.max.replace(tzinfo=timezone.utc)), \
        {"start": flow_run.start_time, "end": flow_run.end_time}


# ---- the measurement ------------------------------------------------------------------------------------

def run_options(workdir: Path, tag: str, until: str) -> Any:
    """Fresh state DB and output folder for one run (every run cold); settings otherwise from the env."""
    from prdigest.pipeline.compose import RunOptions

    run_dir = workdir / tag
    run_dir.mkdir(parents=True)
    os.environ["DIGEST_STATE"] = str(run_dir / "state.sqlite")
    return RunOptions(source="github", repo=REPO, since=SINCE, until=until, drafter="openai", approve="auto",
                      deliver="outbox", readers=str(workdir / "readers.yaml"), out=str(run_dir / "out"))


def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    data = workdir / "week.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in synthetic_week(args.prs, repo=REPO, seed=args.prs)),
                    encoding="utf-8")
    (workdir / "readers.yaml").write_text(READERS_YAML, encoding="utf-8")
    servers = Servers(data, args.latency)
    os.environ.update({
        "GITHUB_TOKEN": GITHUB_TOKEN, "OPENAI_API_KEY": servers.llm_api_key,
        "DIGEST_GITHUB_URL": servers.github_url, "DIGEST_LLM_BASE_URL": servers.llm_base_url,
        "DIGEST_MODEL": MODEL, "DIGEST_LLM_CONCURRENCY": str(args.concurrency), "DIGEST_LLM_RPM": "1000000",
        "DIGEST_LANGUAGE": "en",
    })
    try:
        from prefect import flow
        from prefect.testing.utilities import prefect_test_harness

        @flow(name="warm-up")
        def warm_up() -> int:
            return 1

        started = time.perf_counter()
        with prefect_test_harness(server_startup_timeout=180):
            api_start = time.perf_counter() - started
            warm_up()
            api_ready = time.perf_counter() - started
            # Untimed warm-up of both sides: imports, first connections, Prefect's first flow/task registration.
            plain_edition(run_options(workdir, "warm-plain", WARMUP_UNTIL))
            flow_edition(run_options(workdir, "warm-flow", WARMUP_UNTIL))

            plain, flows = [], []
            for i in range(args.repeats):
                servers.reset()
                options = run_options(workdir, f"plain-{i}", UNTIL)
                t0 = time.perf_counter()
                summary, phases = plain_edition(options)
                wall = time.perf_counter() - t0
                plain.append({"wall": wall, "summary": summary, "phases": phases, "calls": servers.counts()})
                print(f"plain #{i + 1}: {wall:.2f} s  {summary}  gh/llm calls {servers.counts()}", flush=True)

                servers.reset()
                options = run_options(workdir, f"flow-{i}", UNTIL)
                t0 = time.perf_counter()
                summary, flow_run_id = flow_edition(options)
                wall = time.perf_counter() - t0
                calls = servers.counts()
                tasks, span = task_runs(flow_run_id)
                flows.append({"wall": wall, "summary": summary, "tasks": tasks, "span": span, "calls": calls})
                print(f"flow  #{i + 1}: {wall:.2f} s  {summary}  gh/llm calls {calls}  "
                      f"{len(tasks)} task runs", flush=True)
            # Persisted results of the flow runs (collect, classify-and-draft) in the local result storage.
            storage = Path(_PREFECT_HOME) / "storage"
            stored = sorted(storage.rglob("*")) if storage.exists() else []
            stored_bytes = sum(p.stat().st_size for p in stored if p.is_file())
    finally:
        servers.stop()
    for p, f in zip(plain, flows):
        assert p["summary"] == f["summary"], (p["summary"], f["summary"])
        assert p["calls"] == f["calls"], (p["calls"], f["calls"])
    return {"api_start": api_start, "api_ready": api_ready, "plain": plain, "flows": flows,
            "stored_files": sum(1 for p in stored if p.is_file()), "stored_bytes": stored_bytes}


def _seconds(a: datetime | None, b: datetime | None) -> float:
    return (b - a).total_seconds() if a and b else float("nan")


def report(args: argparse.Namespace, r: dict[str, Any]) -> str:
    plain_med = statistics.median(x["wall"] for x in r["plain"])
    flow_med = statistics.median(x["wall"] for x in r["flows"])
    ratio = flow_med / plain_med
    ideal = args.prs * args.latency / args.concurrency
    n_tasks = [len(f["tasks"]) for f in r["flows"]]
    summary = r["plain"][0]["summary"]
    gh_calls, llm_calls = r["plain"][0]["calls"]
    command = (f".venv/bin/python -m benchmarks.prefect_overhead --prs {args.prs} --latency {args.latency} "
               f"--concurrency {args.concurrency} --repeats {args.repeats}" + (" --write" if args.write else ""))

    lines = [
        f"A {args.prs}-PR edition (`--source github --drafter openai --approve auto --deliver outbox`, 5 readers "
        f"in 3 filters) against the local GitHub server (no added latency) and the local OpenAI-compatible "
        f"server answering every call after {args.latency * 1000:.0f} ms, `DIGEST_LLM_CONCURRENCY="
        f"{args.concurrency}` (rpm limit set high so that it does not bind), a fresh state DB per run (all cold). "
        f"*Plain* = the core loop (`prdigest.pipeline.loop.run_edition`) run directly, as `digest run` runs it without a Prefect API; *flow* = "
        f"`digest_edition(**flow_parameters(RunOptions(...)))` under a Prefect API (`prefect_test_harness`, a real API server "
        f"in a subprocess with SQLite) started and warmed up before timing. Runs alternate plain, flow, …; "
        f"medians of {args.repeats}. Target: flow / plain ≤ 1.5×.",
        "",
        f"Command: `{command}`",
        "",
        "| | plain (s) | flow (s) | flow / plain | target met |",
        "| --- | ---: | ---: | ---: | :---: |",
        f"| median of {args.repeats} | {plain_med:.2f} | {flow_med:.2f} | {ratio:.2f}× | "
        f"{'yes' if ratio <= 1.5 else 'NO'} |",
        "| runs | " + ", ".join(f"{x['wall']:.2f}" for x in r["plain"]) + " | "
        + ", ".join(f"{x['wall']:.2f}" for x in r["flows"]) + " | | |",
        "",
        f"Each run: {gh_calls} GitHub requests, {llm_calls} LLM calls (ideal model time {args.prs} × "
        f"{args.latency} s ÷ {args.concurrency} = {ideal:.2f} s), {summary['entries']} entries, "
        f"{summary['variants']} variants, {summary['sent']} messages to the outbox; the flow's outputs and "
        f"server call counts equal the plain run's. "
        f"Prefect API start-up (not in the figures above): {r['api_start']:.1f} s to a healthy server, "
        f"{r['api_ready']:.1f} s including a first trivial flow run. "
        f"Task runs per flow run: {', '.join(str(n) for n in n_tasks)} "
        f"({', '.join(t['name'].rsplit('-', 1)[0] for t in r['flows'][0]['tasks'])}). "
        f"Persisted results after {args.repeats + 1} flow runs: {r['stored_files']} files, "
        f"{r['stored_bytes'] / 2**20:.1f} MB.",
        "",
        "Where the time goes (medians; flow task spans are the API's task-run start/end; "
        "\"outside tasks\" = flow wall time − task spans: flow-run creation and state transitions, "
        "in-flow steps, artifacts, log flushing):",
        "",
        "| step | plain (s) | flow task span (s) | flow − plain (s) |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in ["collect", "classify-and-draft", "render", "deliver"]:
        p = statistics.median(x["phases"].get(name, 0.0) for x in r["plain"])
        spans = [sum(_seconds(t["start"], t["end"]) for t in f["tasks"] if t["name"].startswith(name))
                 for f in r["flows"]]
        f = statistics.median(spans)
        lines.append(f"| {name} | {p:.2f} | {f:.2f} | {f - p:+.2f} |")
    rest_plain = statistics.median(sum(v for k, v in x["phases"].items()
                                       if k not in ("collect", "classify-and-draft", "render", "deliver"))
                                   for x in r["plain"])
    outside = statistics.median(
        f["wall"] - sum(_seconds(t["start"], t["end"]) for t in f["tasks"]) for f in r["flows"])
    lines.append(f"| outside tasks | {rest_plain:.2f} | {outside:.2f} | {outside - rest_plain:+.2f} |")
    lines.append(f"| **total** | {plain_med:.2f} | {flow_med:.2f} | {flow_med - plain_med:+.2f} |")
    lines += [
        "",
        f"Machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, Prefect "
        f"{__import__('prefect').__version__}; both servers and the Prefect API run in their own processes "
        "on the same machine.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the LLM server takes per answer")
    parser.add_argument("--concurrency", type=int, default=16, help="DIGEST_LLM_CONCURRENCY")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="replace the section in BENCHMARKS.md")
    args = parser.parse_args(argv)
    try:
        with tempfile.TemporaryDirectory(prefix="prefect-overhead-") as tmp:
            results = measure(args, Path(tmp))
    finally:
        shutil.rmtree(_PREFECT_HOME, ignore_errors=True)
    body = report(args, results)
    print(body)
    if args.write:
        write_section("Prefect overhead", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
