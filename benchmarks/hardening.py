"""What the hostile-input guards cost on real code: vllm-ascend's package at its last commit up to 2026-05-31.

Figures (CPU seconds, best of ``--repeat`` runs, on the files of ``vllm_ascend/``):
- parsing every file with ``ast.parse`` alone, and with ``prdigest.kernel.safe_parse.parse`` (the size cap, the
  exceptions turned into a reason, and the depth walk); the depth walk on its own; the deepest file's depth
  (the cap is 200);
- the whole index build (``prdigest.connect.impact.downstream.build``: every summary and the resolution);
- reading the checkout from disk: ``os.walk`` + ``read_bytes`` (what the index did before) against
  ``prdigest.connect.impact.checkout.checkout_files`` (lstat, containment, O_NOFOLLOW|O_NONBLOCK, capped reads);
- validating the shipped sample week's records (``PullRequest.model_validate``), of which the lone-surrogate
  scrub is a part, and the scrub alone on the same records.

Run: .venv/bin/python -m benchmarks.hardening [--ascend GITDIR] [--repeat N] [--write]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks.report import write_section
from prdigest.connect.impact import checkout
from prdigest.connect.impact.downstream import build, clone_files
from prdigest.kernel import safe_parse
from prdigest.kernel.models import PullRequest
from prdigest.kernel.surrogates import scrub_data

ASCEND = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
UNTIL = "2026-05-31T23:59:59Z"
SAMPLE = Path(__file__).resolve().parents[1] / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"


def _best(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.process_time()
        work()
        times.append(time.process_time() - started)
    return min(times)


def _old_walk(root: Path, package: str) -> list[tuple[str, bytes]]:
    """What the index read before: every .py under the package, links followed, whole files."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root / package):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                path = Path(dirpath) / name
                out.append((path.relative_to(root).as_posix(), path.read_bytes()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ascend", type=Path, default=ASCEND, help="vllm-ascend's git directory")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    args = parser.parse_args()

    commit = subprocess.run(["git", "--git-dir", str(args.ascend), "log", "-1", "--format=%H %cI", f"--before={UNTIL}",
                             "HEAD"], capture_output=True, text=True, check=True).stdout.split()
    sha, when = commit[0], commit[1]
    files = list(clone_files(args.ascend, sha, ["vllm_ascend"]))
    size = sum(len(d) for _, d in files)
    load = os.getloadavg()

    plain = _best(lambda: [ast.parse(d) for _, d in files], args.repeat)
    guarded = _best(lambda: [safe_parse.parse(d) for _, d in files], args.repeat)
    trees = [ast.parse(d) for _, d in files]
    depth_walk = _best(lambda: [safe_parse.tree_depth(t, safe_parse.MAX_DEPTH) for t in trees], args.repeat)
    depths = sorted((safe_parse.tree_depth(t, 10**6), p) for t, (p, _) in zip(trees, files))
    index = _best(lambda: build("ascend", sha, files, ("vllm",)), args.repeat)

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for path, data in files:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_bytes(data)
        old_read = _best(lambda: _old_walk(root, "vllm_ascend"), args.repeat)
        new_read = _best(lambda: list(checkout.checkout_files(root, ["vllm_ascend"])), args.repeat)
        assert len(list(checkout.checkout_files(root, ["vllm_ascend"]))) == len(_old_walk(root, "vllm_ascend"))

    records = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    validate = _best(lambda: [PullRequest.model_validate(r) for r in records], args.repeat * 5)
    scrub = _best(lambda: [scrub_data(r) for r in records], args.repeat * 5)

    command = f".venv/bin/python -m benchmarks.hardening{' --write' if args.write else ''}"
    body = f"""`{command}` — {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average
{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1/5/15 min) on the shared 2-core machine; CPU seconds, best of
{args.repeat}.

vllm-ascend at {sha[:12]} ({when}, the last commit up to 2026-05-31): {len(files)} files under `vllm_ascend/`,
{size / 1e6:.1f} MB.

| step | before the guards | with them | |
| --- | --- | --- | --- |
| parse every file | `ast.parse` {plain:.2f} s | `safe_parse.parse` {guarded:.2f} s | the depth walk alone: {depth_walk:.2f} s |
| read the checkout | `os.walk` + `read_bytes` {old_read:.3f} s | `checkout.checkout_files` {new_read:.3f} s | |
| index build (summaries + resolution) | | {index:.2f} s | |
| validate the sample week ({len(records)} PRs) | | {validate * 1000:.1f} ms | the surrogate scrub alone: {scrub * 1000:.1f} ms |

Deepest trees in vllm-ascend: {', '.join(f'{p} {d}' for d, p in depths[-3:])} (the cap is {safe_parse.MAX_DEPTH};
a tree deeper than about 500 breaks `ast.NodeVisitor` and `ast.unparse`).
"""
    print(body)
    if args.write:
        write_section("Hostile input guards", body)


if __name__ == "__main__":
    main()
