"""Two real editions through the installed `digest` command: the sample week offline, and the same week from
the local GitHub server (tests/servers) over real HTTP; both must give the same digest.

CI runs it in the lowest-versions venv (.ci/run): `.venv-lowest/bin/python scripts/smoke_editions.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.servers: the local GitHub server

from tests.servers.github_server import GitHubServer, decoys, load_jsonl, make_state  # noqa: E402

SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
REPO = "vllm-project/vllm"
TOKEN = "ghp_smoke-token-never-shown-0123456789"
WINDOW = ["--since", "2026-11-16", "--until", "2026-11-23", "--language", "en"]


def run_edition(digest: Path, home: Path, name: str, args: list[str], env: dict[str, str]) -> dict:
    """Run `digest run ARGS` into HOME/NAME and return its digest.json without the timestamps."""
    out = home / name
    started = time.monotonic()
    proc = subprocess.run([str(digest), "run", *args, *WINDOW, "--out", str(out),
                           "--state", str(home / f"{name}.sqlite")],
                          env=env, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0 or TOKEN in proc.stdout + proc.stderr:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"smoke: the {name} edition failed (exit {proc.returncode}, or the token was printed)")
    result = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    for volatile in ("generated_at", "approved_at"):
        result.pop(volatile, None)
    emails = sorted(p.name for p in (out / "email").glob("*"))
    print(f"smoke: {name} edition: {len(result['entries'])} entries, {len(emails)} email files, "
          f"{time.monotonic() - started:.1f} s")
    return {"digest": result, "emails": emails}


def main() -> None:
    """Run both editions and compare them; exit non-zero with one line saying what differs."""
    digest = Path(sys.executable).with_name("digest")
    with tempfile.TemporaryDirectory(prefix="digest-smoke-") as tmp:
        home = Path(tmp)
        # No developer settings or tokens leak in; Prefect keeps its ephemeral server's files here.
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("DIGEST_", "GITHUB_TOKEN", "OPENAI_", "SLACK_", "PREFECT_"))}
        env.update(PREFECT_HOME=str(home / "prefect"), PREFECT_SERVER_ANALYTICS_ENABLED="false",
                   PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180")  # a busy CI machine
        offline = run_edition(digest, home, "sample", ["--source", "sample"], env)
        since, until = (datetime(2026, 11, d, tzinfo=timezone.utc) for d in (16, 23))
        server = GitHubServer(make_state(load_jsonl(SAMPLE) + decoys(REPO, since, until), REPO,
                                         token=TOKEN)).start()
        try:
            github = run_edition(digest, home, "github",
                                 ["--source", "github", "--repo", REPO, "--github-url", server.url],
                                 {**env, "GITHUB_TOKEN": TOKEN})
        finally:
            server.stop()
    if not offline["digest"]["entries"]:
        raise SystemExit("smoke: the sample edition has no entries")
    if github != offline:
        raise SystemExit("smoke: the edition from the local GitHub server differs from the sample edition")
    print("smoke: both editions are identical")


if __name__ == "__main__":
    main()
