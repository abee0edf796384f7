"""The readers behind Action required on hostile files: three thousand checks of one setting whose conditions change,
a condition of 5,000 tests, a megabyte error message, 200,000 version keys in a workflow and a megabyte line, a
megabyte of environment reads. Each is read in a child process under a CPU limit (a comparison gone exponential
or a regex gone quadratic is killed there instead of hanging the suite), never timed."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json
from prdigest.collect.facts import envreads, rejections, tested

MB = 1_000_000
# three thousand raises of one setting, each behind its own pair of tests, and the same with one test changed
checks = "".join(f"    if config.get('k') and x{i % 12} and y{i % 7}:\n        raise ValueError('k refused {i}')\n"
                 for i in range(3000))
before = "def check(config, " + ", ".join(f"x{i}" for i in range(12)) + ", " + ", ".join(f"y{i}" for i in range(7)) \
    + "):\n" + checks
after = before.replace("x3 and y", "x3 or y")
wide = "def v(config):\n    if config.get('k') and (" + " and ".join(f"t{i}" for i in range(5000)) + "):\n" \
    "        raise ValueError('k')\n"
wider = wide.replace(" and t4999", " or t4999")
message = "def v(config):\n    if config.get('k'):\n        raise ValueError('k " + "m" * MB + "')\n"
workflow = "x_version:\n" * 200_000 + "\n" * 100_000 + "a" * MB + "\nvllm_version: [v0.1.0]\n"
reads = "import os\n" + "".join(f"A{i} = os.getenv('ENV_{i}')\n" for i in range(20_000))
out = {
    "many": [c.symbol for c in rejections.compare("a.py", before, after)],
    "wide": [c.symbol for c in rejections.compare("b.py", wide, wider)],
    "message": [len(c.after) for c in rejections.compare("c.py", None, message)],
    "workflow": sorted(tested.releases(workflow)),
    "reads": len(envreads.compare("d.py", reads, reads.replace("ENV_1'", "ENV_X'"))),
}
print(json.dumps(out))
"""


def _cpu_limit() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))  # the whole read takes a few seconds


def test_hostile_checks_workflows_and_reads_are_read_in_bounded_time() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT,
                          preexec_fn=_cpu_limit, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, f"killed or failed ({done.returncode}): {done.stderr[-2000:]}"
    out = json.loads(done.stdout)
    assert out["many"] == []  # too many ways to the raises to compare: no claim
    assert out["wide"] == []  # too many tests to compare: no claim
    assert out["message"] == [120]  # a new check, its message clipped
    assert out["workflow"] == [["vllm", "0.1.0"]]
    assert out["reads"] == 1  # ENV_1 renamed ENV_X on its line
