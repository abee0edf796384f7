"""Several editions at once on a pool of process workers sharing one PostgreSQL (issue 11.6): wall time and scaling.

    .venv/bin/python -m benchmarks.team_workers [--repos 4] [--prs 300] [--workers 1 2 4] [--latency 0.3] [--write]

One ``prefect server start``, the shipped ``prefect.yaml`` deployed from a local git repository (``file://``)
with one deployment per repo (the vllm-weekly block copied per repo), and for each pool size a fresh state
database on one PostgreSQL server (cold caches: every PR is drafted by the LLM) and that many process workers,
each with its own PREFECT_HOME and folder, each running one flow run at a time (``--limit 1``). All editions
are started at once (``prefect deployment run``); the wall time runs until the last one is Completed. The LLM
is the local OpenAI-compatible server answering after ``--latency`` seconds; delivery goes to a local SMTP
server through the ledger (three readers per edition). Afterwards the ledger is checked: one row per reader
and edition, all sent, and the SMTP server got exactly that many messages (no cross-talk between editions).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.report import write_section

READERS = """\
readers:
  - id: all
    name: All
    email: all@example.com
  - id: kernels
    name: Kernels
    email: kernels@example.com
  - id: docs
    name: Docs
    email: docs@example.com
"""


@contextmanager
def postgres() -> Iterator[object]:
    """A throwaway PostgreSQL cluster, started as the tests start it; yields its server object."""
    from tests.pg import MISSING, _binaries, throwaway_cluster

    if _binaries() is None:
        raise SystemExit(MISSING)
    with throwaway_cluster(prefix="prdigest-team-pg-") as server:
        yield server


def per_repo_deployments(config: str, repos: list[str]) -> str:
    """prefect.yaml with the vllm-weekly deployment copied once per repo (name, repo, tags), the rest removed."""
    import yaml

    data = yaml.safe_load(config)
    template = next(d for d in data["deployments"] if d["name"] == "vllm-weekly")
    deployments = []
    for repo in repos:
        deployment = json.loads(json.dumps(template))
        slug = repo.replace("/", "-")
        deployment.update(name=f"{slug}-weekly", tags=["pr-digest", repo], schedules=[])
        deployment["parameters"].update(repo=repo, out=f"out/{slug}")
        deployments.append(deployment)
    data["deployments"] = deployments
    data.pop("definitions", None)
    return yaml.safe_dump(data, sort_keys=False)


def _start(name: str, params: dict[str, str], env: dict[str, str], cwd: Path) -> str:
    """``prefect deployment run``, tried again when the server (SQLite, on a loaded machine) answers 503."""
    from tests.team_support import run_deployment_cli

    for attempt in range(5):
        try:
            return run_deployment_cli(name, params, env, cwd)
        except AssertionError:
            if attempt == 4:
                raise
            time.sleep(5)
    raise AssertionError("unreachable")


def one(n_workers: int, repos: list[str], sources: dict[str, Path], pg, server: dict, pool: str, tmp: Path,
        llm, smtp) -> dict:
    """One pool size: a fresh state database, ``n_workers`` workers, every edition started at once."""
    from tests.team_support import start_worker, stop, wait_state

    database = f"team_{n_workers}_{uuid.uuid4().hex[:6]}"
    with pg.admin() as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    state = pg.url(database)
    env = {**server["env"], "DIGEST_STATE": state, "DIGEST_LLM_BASE_URL": llm.base_url,
           "OPENAI_API_KEY": "sk-local-test", "DIGEST_MODEL": "local-model", "DIGEST_SMTP_HOST": "127.0.0.1",
           "DIGEST_SMTP_PORT": str(smtp.port), "DIGEST_SMTP_SECURITY": "none",
           "DIGEST_FROM": "pr-digest <digest@example.com>", "DIGEST_RECORD_SECRET": "bench-record-secret-0123456789-abcdefghij"}
    calls_before, sent_before = llm.chat_calls, smtp.count
    workers = [start_worker(pool, tmp / f"w{n_workers}-{i}" / "home", tmp / f"w{n_workers}-{i}" / "folder", env,
                            tmp / f"w{n_workers}-{i}.log", limit=1) for i in range(n_workers)]
    try:
        time.sleep(5)  # the workers register and poll before the clock starts
        started = time.perf_counter()
        runs = {repo: _start(f"digest-edition/{repo.replace('/', '-')}-weekly", {
            "source": f"jsonl:{sources[repo]}", "approve": "auto", "deliver": "smtp", "drafter": "openai",
            "readers": "bench/readers.yaml", "language": "en", "out": str(tmp / f"out-{n_workers}" / repo)},
            server["env"], tmp) for repo in repos}
        ends = {}
        for repo, run_id in runs.items():
            run = wait_state(server["api"], run_id, ("COMPLETED",), 3600)
            if run["state"]["type"] != "COMPLETED":
                raise SystemExit(f"{repo}: {run['state']['type']} {run['state'].get('message')}")
            ends[repo] = time.perf_counter() - started
        wall = max(ends.values())
    finally:
        for worker in workers:
            stop(worker)
    import psycopg

    with psycopg.connect(state) as conn:
        rows = conn.execute("SELECT status, COUNT(*) FROM delivery_ledger GROUP BY status").fetchall()
    return {"workers": n_workers, "wall_s": round(wall, 1), "editions_done_s": sorted(round(v, 1) for v in ends.values()),
            "llm_calls": llm.chat_calls - calls_before, "smtp_messages": smtp.count - sent_before,
            "ledger": {str(status): n for status, n in rows}}


def _numbered(path: Path, offset: int) -> Path:
    """The file's PRs under numbers of their own per repo: the draft cache keys on the number and the content, and
    the same PR in every repo would be drafted once for all of them."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        record["number"] += offset
        record["url"] = record["url"].rsplit("/", 1)[0] + f"/{record['number']}"
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repos", type=int, default=4)
    parser.add_argument("--prs", type=int, default=300)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--latency", type=float, default=0.3, help="seconds the LLM takes per answer")
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    args = parser.parse_args()

    from tests.review_support import prefect_server, synthetic_week
    from tests.servers.openai_server import OpenAIServer
    from tests.servers.smtp_server import SmtpServer
    from tests.team_support import deploy_from_git, git_repository

    tmp = Path(tempfile.mkdtemp(prefix="prdigest-team-"))
    repos = [f"bench-org/repo-{i + 1}" for i in range(args.repos)]
    sources = {repo: _numbered(synthetic_week(tmp / f"{repo.replace('/', '-')}.jsonl", args.prs), 100_000 * (i + 1))
               for i, repo in enumerate(repos)}
    results = []
    llm = OpenAIServer().start()
    llm.latency = args.latency
    smtp = SmtpServer(tmp / "tls", security="none", user=None, record=False).start()
    try:
        with postgres() as pg:
            (tmp / "server").mkdir()
            with prefect_server(tmp / "server") as server:
                repo_dir = tmp / "repo"
                repo_dir.mkdir()
                config = per_repo_deployments((Path(__file__).resolve().parents[1] / "prefect.yaml").read_text(),
                                              repos)
                url, commit = git_repository(repo_dir, {"bench/readers.yaml": READERS, "prefect.yaml": config})
                pool = "pr-digest"
                deploy_from_git(repo_dir, url, pool, server["env"])
                for n in args.workers:
                    result = one(n, repos, sources, pg, server, pool, tmp, llm, smtp)
                    print(json.dumps(result), flush=True)
                    results.append(result)
    finally:
        smtp.stop()
        llm.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    base = results[0]["wall_s"]
    lines = [f"`{' '.join(['.venv/bin/python -m benchmarks.team_workers', *sys.argv[1:]])}`: {args.repos} editions "
             f"(one deployment per repo) of {args.prs} PRs each, the LLM answering after {args.latency * 1000:.0f} ms "
             "(local OpenAI-compatible server, cold draft cache: a fresh state database per row), delivered by SMTP "
             "through the ledger to 3 readers each; process workers with their own PREFECT_HOME and folder, one "
             "flow run at a time each, code cloned from git at the deployed commit, one PostgreSQL for the state, "
             "one `prefect server start` (SQLite).", "",
             "| workers | wall time (s) | speed-up | editions done at (s) | LLM calls | SMTP messages | ledger |",
             "| ---: | ---: | ---: | --- | ---: | ---: | --- |"]
    for r in results:
        lines.append(f"| {r['workers']} | {r['wall_s']} | {base / r['wall_s']:.2f}× | "
                     f"{', '.join(map(str, r['editions_done_s']))} | {r['llm_calls']} | {r['smtp_messages']} | "
                     f"{', '.join(f'{k}: {v}' for k, v in sorted(r['ledger'].items()))} |")
    body = "\n".join(lines)
    print(body)
    if args.write:
        write_section("Several editions on a pool of workers (PostgreSQL state)", body)


if __name__ == "__main__":
    main()
