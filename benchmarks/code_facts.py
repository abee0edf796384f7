"""Code facts on a real repository: a 300-merge-commit week cold and warm, and precision/recall against a hand list.

    .venv/bin/python -m benchmarks.code_facts --git DIR [--until 2026-05-31] [--commits 300]
        [--hand benchmarks/data/code_facts_hand.tsv] [--partial] [--write]

``--git DIR`` is a clone of the repository (the search tool's ``fetch`` puts one under /work/.mirror; nothing of
it is committed). The "week" is the last ``--commits`` commits on the default branch's first-parent line before
``--until`` (each a squash merge of one PR). Speed runs the product's own path (prdigest/collect/facts/week.py:
one batched read of the clone, facts cached by commit in a SQLite state store) in a fresh interpreter, so no
cache of an earlier run helps: **cold** with an empty state, **warm** again on the same state. ``--partial``
makes the clone the product keeps for a URL (bare, blob-less, from ``file://DIR``) in the cold run's state
folder, so the cold figure includes the clone and the one fetch of the week's blobs.

Precision and recall compare the engine's public API facts of the hand list's commits with the list
(benchmarks/data/code_facts_hand.tsv: shas, kinds and symbols only, written by reading each diff). A fact
matches a row by (commit, kind, symbol); compared kinds: added, removed, renamed, moved, signature, bases,
abstract, and config fields added, removed or renamed; bodies, tests, files, pins and kernels are not in the list.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HAND = ROOT / "benchmarks" / "data" / "code_facts_hand.tsv"
HELDOUT = ROOT / "benchmarks" / "data" / "code_facts_heldout.tsv"
KINDS = {"added", "removed", "renamed", "moved", "signature", "bases", "abstract", "config"}
#: torchao declares no rules file; this is the code section one would write for it: its package, and its
#: dataclasses (the quantization configs) as config classes.
SURFACE = {"packages": ["torchao"], "config_files": ["^torchao/"]}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def week_shas(repo: str, until: str, count: int) -> list[str]:
    return _git(repo, "rev-list", "--first-parent", f"--before={until}", f"--max-count={count}", "HEAD").split()


_CHILD = r"""
import json, os, sys, time
from datetime import datetime, timezone
start = time.perf_counter(); cpu0 = time.process_time()
from prdigest.collect.facts import FactsCache, Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.kernel.models import PullRequest
from prdigest.state.store import open_store
args = json.loads(sys.argv[1])
prs = [PullRequest(number=i + 1, url=f"https://example.invalid/pull/{i + 1}", merged_at=datetime(2026, 5, 1,
       tzinfo=timezone.utc), merge_commit=sha) for i, sha in enumerate(args["shas"])]
surface = Surface(packages=tuple(args["surface"]["packages"]), config_files=tuple(args["surface"]["config_files"]))
opened = time.perf_counter()
clone = open_clone(args["git"], state_dir=__import__("pathlib").Path(args["state_dir"]))
cloned = time.perf_counter()
with open_store(args["state"]) as store:
    week = week_facts(prs, surface=surface, clone=clone, cache=FactsCache(store))
done = time.perf_counter()
print(json.dumps({"seconds": done - start, "clone_seconds": cloned - opened, "facts_seconds": done - cloned,
                  "cpu": time.process_time() - cpu0, "computed": week.computed, "cached": week.cached,
                  "facts": sum(len(c) for c in week.changes.values()), "git_commands": clone.commands,
                  "problems": week.problems}))
"""


def _timed_run(git: str, shas: list[str], state_dir: Path) -> dict[str, object]:
    env = dict(os.environ)
    # A local upload-pack serves a blob-less clone only when filters (and wants by sha) are allowed.
    env.update(GIT_CONFIG_COUNT="2", GIT_CONFIG_KEY_0="uploadpack.allowFilter", GIT_CONFIG_VALUE_0="true",
               GIT_CONFIG_KEY_1="uploadpack.allowAnySHA1InWant", GIT_CONFIG_VALUE_1="true")
    arg = json.dumps({"git": git, "shas": shas, "surface": SURFACE, "state": str(state_dir / "state.sqlite"),
                      "state_dir": str(state_dir)})
    done = subprocess.run([sys.executable, "-c", _CHILD, arg], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=False)
    if done.returncode:
        raise SystemExit(f"the timed run failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def speed(repo: str, shas: list[str], *, partial: bool) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        state_dir = Path(tmp)
        git = f"file://{Path(repo).resolve()}" if partial else repo  # as written: git does not decode %2B
        load_before = os.getloadavg()
        cold = _timed_run(git, shas, state_dir)
        warm = _timed_run(git, shas, state_dir)
        return {"cold": cold, "warm": warm, "load": [load_before, os.getloadavg()], "cores": os.cpu_count()}


def load_hand(path: Path) -> dict[str, set[tuple[str, str]]]:
    hand: dict[str, set[tuple[str, str]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        sha, kind, symbol = line.split("\t")
        hand.setdefault(sha, set())
        if kind != "none":
            hand[sha].add((kind, symbol))
    return hand


def evaluated(change: object) -> bool:
    c = change
    if not c.public or c.kind not in KINDS or c.language not in ("python", "config"):  # type: ignore[attr-defined]
        return False
    return c.kind != "config" or c.detail in ("added", "removed", "renamed")  # type: ignore[attr-defined]


def quality(repo: str, hand: dict[str, set[tuple[str, str]]]) -> dict[str, object]:
    from prdigest.collect.facts import Surface, commit_facts
    from prdigest.collect.git import open_clone, read_commits

    surface = Surface(packages=tuple(SURFACE["packages"]), config_files=tuple(SURFACE["config_files"]))
    clone = open_clone(repo, state_dir=Path(tempfile.gettempdir()))
    diffs, missing = read_commits(clone, hand)
    assert not missing, missing
    found: dict[str, set[tuple[str, str]]] = {}
    for sha in hand:
        found[sha] = {(c.kind, c.symbol) for c in commit_facts(diffs[sha], surface) if evaluated(c)}
    tp = sum(len(found[s] & hand[s]) for s in hand)
    fp = {s: sorted(found[s] - hand[s]) for s in hand if found[s] - hand[s]}
    fn = {s: sorted(hand[s] - found[s]) for s in hand if hand[s] - found[s]}
    n_found, n_hand = sum(len(v) for v in found.values()), sum(len(v) for v in hand.values())
    return {"commits": len(hand), "listed": n_hand, "found": n_found, "true": tp,
            "precision": tp / n_found if n_found else 1.0, "recall": tp / n_hand if n_hand else 1.0,
            "false_positives": fp, "misses": fn}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git", required=True, help="a clone of the repository")
    parser.add_argument("--until", default="2026-05-31")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--hand", type=Path, default=HAND)
    parser.add_argument("--heldout", type=Path, default=HELDOUT, help="a second list, written after the engine's "
                        "rules were last changed")
    parser.add_argument("--partial", action="store_true", help="time a kept blob-less clone of file://DIR")
    parser.add_argument("--write", action="store_true", help="write the section of BENCHMARKS.md")
    args = parser.parse_args(argv)
    shas = week_shas(args.git, args.until, args.commits)
    first, last = (_git(args.git, "log", "-1", "--format=%cs", s).strip() for s in (shas[-1], shas[0]))
    timing = speed(args.git, shas, partial=args.partial)
    result = quality(args.git, load_hand(args.hand))
    held = quality(args.git, load_hand(args.heldout)) if args.heldout.exists() else None
    cold, warm = timing["cold"], timing["warm"]
    name = Path(args.git).resolve().parent.name
    lines = [
        f"`{' '.join(['.venv/bin/python -m benchmarks.code_facts', *(argv if argv is not None else sys.argv[1:])])}`",
        "",
        f"Repository: {name.replace('+', '/')} (a real Python repository with C++/CUDA kernels; vLLM's snapshot is",
        "over the 500 MB the fetch tool brings), the last "
        f"{len(shas)} first-parent commits before {args.until} ({first} .. {last}), each one PR's squash merge.",
        f"Machine: {timing['cores']} cores, load average {timing['load'][0][0]:.2f} before and "
        f"{timing['load'][1][0]:.2f} after (shared with other agents).",
        "",
        "| run | wall s | of which clone/fetch s | facts s | CPU s | commits computed | from cache | facts | git commands |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for label, run in (("cold" + (" (blob-less clone made)" if args.partial else " (local clone)"), cold),
                       ("warm", warm)):
        lines.append(f"| {label} | {run['seconds']:.2f} | {run['clone_seconds']:.2f} | {run['facts_seconds']:.2f} | "
                     f"{run['cpu']:.2f} | {run['computed']} | {run['cached']} | {run['facts']} | {run['git_commands']} |")
    lines += [
        "",
        "Targets: cold at most 30 s on 2 cores, warm at most 1 s. Wall includes starting Python and importing.",
        "",
        f"Precision and recall of the public API facts against the hand list ({args.hand.relative_to(ROOT)}: "
        f"{result['commits']} commits, {result['listed']} changes listed):",
        "",
        "| list | commits | changes listed | facts found | of them listed | precision | recall |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        f"| {args.hand.name} | {result['commits']} | {result['listed']} | {result['found']} | {result['true']} | "
        f"{result['precision']:.3f} | {result['recall']:.3f} |",
        *([f"| {args.heldout.name} (held out) | {held['commits']} | {held['listed']} | {held['found']} | "
           f"{held['true']} | {held['precision']:.3f} | {held['recall']:.3f} |"] if held else []),
        "",
        "Targets: precision at least 0.95, recall at least 0.8.",
        "",
        "Notes. CPU s is the figure the other agents' load does not change (the machine's 2 cores run about ten "
        "agents: at a load average near 9 the same cold run took 27 s of wall time, near 16 it took 44 s). "
        "`--partial` cannot run on the fetched snapshot: it lacks the files of 4 MiB and more, so git's "
        "upload-pack refuses to serve a clone of it; the blob-less clone, its one fetch per run and the batched "
        "blob fetch are covered by tests/test_git_clone.py and tests/test_facts_run.py on repositories the tests "
        "build. The hand list was written from the diffs before the engine was compared with it; the first "
        "comparison gave precision 0.919 and recall 0.975, and showed one omission in the list (a function "
        "defined inside an `if` block, added to the list) and three engine rules that were then changed "
        "(dunders other than `__init__`/`__new__`/`__call__` are not API; `x = a.b` aliases are not "
        "definitions; a renamed config class keeps its fields): its figures are in-sample for those rules. The "
        "held-out list was written afterwards from 12 other commits of the same window, before the engine ran on them. "
        "Misses that remain: enum members and other class attributes are not tracked, nor aliases that expose "
        "a function (`to_x = Cls.from_float`).",
    ]
    for extra in ([held] if held else []):
        result["false_positives"].update(extra["false_positives"])
        result["misses"].update(extra["misses"])
    if result["false_positives"]:
        lines += ["", "Facts not in the list: " + "; ".join(
            f"{sha[:10]} " + ", ".join(f"{k} `{s}`" for k, s in items) for sha, items in result["false_positives"].items())]
    if result["misses"]:
        lines += ["", "Listed but not found: " + "; ".join(
            f"{sha[:10]} " + ", ".join(f"{k} `{s}`" for k, s in items) for sha, items in result["misses"].items())]
    body = "\n".join(lines)
    print(body)
    if cold.get("problems") or warm.get("problems"):
        print("problems:", cold.get("problems"), warm.get("problems"))
    if args.write:
        from benchmarks.report import write_section

        write_section("Code facts (a real repository's history)", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
