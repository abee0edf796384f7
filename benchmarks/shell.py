"""The shell as a user meets it: `digest demo` warm wall time, and how fast a bad readers file is refused.

    .venv/bin/python -m benchmarks.shell --runs 5 --label after
    .venv/bin/python -m benchmarks.shell --runs 5 --label before --root ../main   # another checkout's digest

Each figure is a fresh `digest` process, as a user starts it: one unmeasured `digest demo` first (so
the file system cache and the bytecode are warm), then ``--runs`` measured ones, each into a new output
folder in one scratch folder (its own state database). The refusal is `digest run --source sample --readers
BAD` on the shipped readers file with one key misspelt (``subsytems``), timed to the process's exit; its
stderr is checked for one line naming ``file:line``. The rows of other labels already in BENCHMARKS.md
(e.g. ``before``, measured on the code before a change) are kept, so one table compares them.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.report import BENCHMARKS, write_section

ROOT = Path(__file__).resolve().parents[1]
TITLE = "Shell: demo wall time and configuration errors"
HEADER = ("| label | commit | `digest demo` warm: wall, median s (min–max) | its CPU s (median) | bad readers file "
          "refused: wall, median s (min–max) | its CPU s (median) | refusal: stderr lines, traceback | demo stderr: ERROR / Traceback / INFO lines | load average "
          "(1 min) before → after |\n| --- | --- | ---: | ---: | ---: | ---: | --- | --- | --- |")


#: The checkout measured (``--root``): its ``.venv/bin/digest``; default this one.
checkout = ROOT


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _digest(args: list[str], cwd: Path) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall seconds to the exit of one ``digest`` process, its CPU seconds (its own and its children's, such
    as Prefect's temporary server: about the wall time on an idle machine), and what it printed."""
    # Bytecode is written (the warm-up run compiles every module once, as `pip install` does for a user):
    # with PYTHONDONTWRITEBYTECODE, which some shells set, each run would compile ~700 modules again.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PREFECT_", "DIGEST_")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["DIGEST_STATE"] = str(cwd / "state.sqlite")
    cpu, start = _cpu(), time.perf_counter()
    proc = subprocess.run([str(checkout / ".venv" / "bin" / "digest"), *args], cwd=cwd, env=env, text=True,
                          capture_output=True, check=False)
    return time.perf_counter() - start, _cpu() - cpu, proc


def _load() -> float:
    return os.getloadavg()[0]


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"


def bad_readers(folder: Path) -> Path:
    """The shipped readers file with one key misspelt, as a person might."""
    text = (checkout / "prdigest" / "readers" / "examples" / "readers.yaml").read_text(encoding="utf-8")  # its own example
    bad = folder / "readers-typo.yaml"
    bad.write_text(text.replace("subsystems: [rocm]", "subsytems: [rocm]", 1), encoding="utf-8")
    return bad


def measure(runs: int) -> dict[str, str]:
    """Run the demo and the refusal ``runs`` times each; the figures as table cells."""
    load_before = _load()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _, _, warm = _digest(["demo", "--out", str(folder / "warm")], folder)
        if warm.returncode:
            raise SystemExit(f"digest demo failed:\n{warm.stderr[-2000:]}")
        demo_times, demo_cpu, noise = [], [], (0, 0, 0)
        for i in range(runs):
            seconds, cpu, proc = _digest(["demo", "--out", str(folder / f"out{i}")], folder)
            if proc.returncode:
                raise SystemExit(f"digest demo failed:\n{proc.stderr[-2000:]}")
            demo_times.append(seconds)
            demo_cpu.append(cpu)
            lines = proc.stderr.splitlines()
            noise = (sum("ERROR" in line for line in lines), sum("Traceback" in line for line in lines),
                     sum(bool(re.search(r"\|\s*INFO\s*\|", line)) for line in lines))
            print(f"demo {i + 1}: {seconds:.2f} s wall, {cpu:.2f} s CPU", flush=True)
        bad = bad_readers(folder)
        refusal_times, refusal_cpu, refusal = [], [], None
        for i in range(runs):
            seconds, cpu, refusal = _digest(["run", "--source", "sample", "--readers", str(bad), "--out",
                                        str(folder / "refused")], folder)
            if refusal.returncode != 2:
                raise SystemExit(f"the bad readers file was not refused (exit {refusal.returncode})")
            refusal_times.append(seconds)
            refusal_cpu.append(cpu)
            print(f"refusal {i + 1}: {seconds:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    assert refusal is not None
    err_lines = [line for line in refusal.stderr.splitlines() if line.strip()]
    print("refusal stderr (last line):", err_lines[-1] if err_lines else "(none)")
    if "subsytems" not in (err_lines[-1] if err_lines else ""):
        raise SystemExit("the refusal did not name the misspelt key: it measured another error")
    return {
        "demo": _spread(demo_times), "refusal": _spread(refusal_times),
        "demo_cpu": f"{statistics.median(demo_cpu):.2f}", "refusal_cpu": f"{statistics.median(refusal_cpu):.2f}",
        "refusal_out": f"{len(err_lines)}, {'yes' if 'Traceback' in refusal.stderr else 'no'}",
        "noise": " / ".join(str(n) for n in noise), "load": f"{load_before:.1f} → {_load():.1f}",
    }


def _commit() -> str:
    proc = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=checkout, text=True, capture_output=True)
    return proc.stdout.strip() or "?"


def _kept_rows(label: str) -> list[str]:
    """The table rows of other labels already in the section."""
    if not BENCHMARKS.exists():
        return []
    text = BENCHMARKS.read_text(encoding="utf-8")
    match = re.search(rf"^## {re.escape(TITLE)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not match:
        return []
    rows = [line for line in match.group(1).splitlines() if line.startswith("| ") and not line.startswith("| label")
            and not line.startswith("| ---")]
    return [row for row in rows if row.split("|")[1].strip() != label]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--label", default="after", help="the row's name (e.g. before, after)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure (its .venv/bin/digest), "
                        "e.g. a worktree of the code before a change; the table is written here")
    args = parser.parse_args()
    global checkout
    checkout = args.root.resolve()
    figures = measure(args.runs)
    row = (f"| {args.label} | {_commit()} | {figures['demo']} | {figures['demo_cpu']} | {figures['refusal']} "
           f"| {figures['refusal_cpu']} | {figures['refusal_out']} "
           f"| {figures['noise']} | {figures['load']} |")
    body = (
        f"Command: `.venv/bin/python -m benchmarks.shell --runs {args.runs} --label LABEL` (a fresh `digest` "
        "process each time, after one unmeasured warm-up demo that also writes the bytecode; no PREFECT_* or "
        "DIGEST_* variables but a scratch state database; the refusal is `digest run --source sample --readers FILE` with `subsystems` misspelt "
        "once). Targets: demo ≤ 2.5 s on a quiet machine, refusal < 1 s. The machine has 2 cores shared with "
        "other sessions: read the load average beside each row; the CPU seconds (the process's and its "
        "children's, e.g. Prefect's temporary server) are about what the wall time would be on an idle machine.\n\n"
        + HEADER + "\n" + "\n".join([*_kept_rows(args.label), row])
    )
    write_section(TITLE, body)
    print(body)


if __name__ == "__main__":
    sys.exit(main())
