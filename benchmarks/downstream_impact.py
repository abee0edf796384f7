"""Affects your code on real history: vLLM's Python API between two releases matched against the Ascend plugin.

The upstream's git history is over what the search tool's fetch brings (1.1 GB), so the upstream side is two
release wheels of vLLM (``pip download --no-deps vllm==0.19.1`` and ``==0.20.1``: their ``vllm/**.py``), put
in a scratch git repository as two commits; the facts engine reads the facts of the second against the first.
The downstream is vllm-ascend (the search tool's fetch), read at the commit where its main moved to vLLM
v0.19.1 (D0); its main moved to v0.20.1 at D1. Between them its adaptation commits name the upstream PRs that
forced them and, in a table, the files they fixed (benchmarks/data/downstream_impact.json, written from those
commit messages: shas, PR numbers and paths only).

Figures:
- recall: of the upstream PRs named by an adaptation commit (with the downstream files that commit changed, or
  that its table names), those for which the match flags one of those files (breaks; and breaks or check);
- precision: of the downstream uses flagged ``breaks``, those with evidence that the downstream had to adapt them
  by D1: the function holding the use (an override: the method) changed, or the downstream's changes name the
  symbol or a parameter the fact names (lenient: a fix elsewhere, e.g. in the function a patch installs, counts);
  stricter, the function changed; strictest, the very line changed (a line kept behind a version guard counts
  against us); and of the files flagged, those it touched;
- the index of vllm-ascend at D0, cold and warm, and of a 3,000-file tree made of its files copied under
  several package names; the match of the release's facts spread over a 300-PR week.

Run: .venv/bin/python -m benchmarks.downstream_impact --wheels DIR [--ascend GITDIR] [--write]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import resource
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections import defaultdict
from pathlib import Path

from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change
from prdigest.state.store import open_store

DATA = Path(__file__).parent / "data" / "downstream_impact.json"
ASCEND = Path("/work/.mirror/vllm-project+vllm-ascend/repo")
_ENV = {**os.environ, "GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
        "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


def git(repo: Path, *args: str, text: bool = True) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=text,
                          env=_ENV).stdout


def _wheel(wheels: Path, version: str) -> Path:
    found = sorted(wheels.glob(f"vllm-{version}-*.whl"))
    if not found:
        raise SystemExit(f"no vllm-{version} wheel in {wheels}: pip download --no-deps --only-binary=:all: "
                         f"vllm=={version} -d {wheels}")
    return found[0]


def upstream_repo(root: Path, wheels: Path, before: str, after: str) -> tuple[Path, str]:
    """A git repository with the two releases' Python files as two commits; the second's sha."""
    repo = root / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    sha = ""
    for version in (before, after):
        for child in repo.iterdir():
            if child.name != ".git":
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        with zipfile.ZipFile(_wheel(wheels, version)) as wheel:
            for name in wheel.namelist():
                if name.startswith("vllm/") and name.endswith(".py"):
                    target = repo / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(wheel.read(name))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"vllm {version}")
        sha = git(repo, "rev-parse", "HEAD").strip()
    return repo, sha


def checkout(ascend: Path, commit: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "--git-dir", str(ascend), "archive", commit], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def changed_lines(ascend: Path, d0: str, d1: str) -> tuple[dict[str, set[int]], set[str]]:
    """The lines of D0's files changed or deleted by D1 (D0's numbering), and the files touched."""
    diff = subprocess.run(["git", "--git-dir", str(ascend), "diff", "-U0", "--no-renames", d0, d1, "--",
                           "vllm_ascend"], check=True, capture_output=True, text=True).stdout
    lines: dict[str, set[int]] = defaultdict(set)
    files: set[str] = set()
    path = ""
    for row in diff.splitlines():
        if row.startswith("--- a/"):
            path = row[6:]
            files.add(path)
        elif row.startswith("@@"):
            old = row.split()[1][1:]
            start, _, count = old.partition(",")
            n = int(count) if count else 1
            lines[path].update(range(int(start), int(start) + n))
    return lines, files


def commit_files(ascend: Path, commit: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(ascend), "show", "--name-only", "--format=", commit], check=True,
                         capture_output=True, text=True).stdout
    return {p for p in out.split() if p.startswith("vllm_ascend/")}


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def index_speed(tree: Path, packages: tuple[str, ...], state: Path) -> tuple[int, int, float, float, float]:
    """Files, uses, cold wall, cold CPU (this process and its workers), warm wall."""
    spec = DownstreamSpec("bench", path=str(tree), packages=packages, upstream=("vllm",))
    with open_store(state) as store:
        cpu = _cpu()
        cold = load_index(spec, ("vllm",), store=store)
        cpu = _cpu() - cpu
        warm = load_index(spec, ("vllm",), store=store)
    assert warm.cached and not cold.cached
    return cold.files, len(cold.uses), cold.seconds, cpu, warm.seconds


def _region(tree: Path, path: str, line: int) -> range:
    """The innermost function holding ``line`` (an override: the whole method), else the line itself."""
    best: tuple[int, int] | None = None
    for node in ast.walk(ast.parse((tree / path).read_bytes())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or node.end_lineno - node.lineno < best[1] - best[0]:  # type: ignore[operator]
                best = (node.lineno, node.end_lineno or node.lineno)
    return range(best[0], best[1] + 1) if best else range(line, line + 1)


def _named(impact: object) -> set[str]:
    """The names an impact's fact is about: the symbol's last part and the parameters a signature fact names."""
    names = {impact.symbol.rsplit(".", 1)[-1]}  # type: ignore[attr-defined]
    kind, _, rest = impact.fact.partition(": ")  # type: ignore[attr-defined]
    if kind == "signature" and "(" in rest:
        for token in rest[rest.find("(") + 1:rest.rfind(")")].split(","):
            for part in re.split(r"→|:", token.strip().lstrip("+-").split("=")[0]):
                if part.strip().isidentifier() and len(part.strip()) > 3:
                    names.add(part.strip())
    names.discard("__init__")
    return names


def big_tree(src: Path, into: Path, files: int) -> tuple[Path, tuple[str, ...]]:
    """A tree of at least ``files`` Python files: vllm-ascend's (package and tests) copied under new names."""
    own = [p for p in src.rglob("*.py") if p.relative_to(src).parts[0] in ("vllm_ascend", "tests")]
    packages: list[str] = []
    count, copy = 0, 0
    while count < files:
        name = f"copy{copy}"
        for path in own:
            target = into / name / path.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes().replace(b"vllm_ascend", name.encode()))
            count += 1
        packages.append(name)
        copy += 1
    return into, tuple(packages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheels", type=Path, required=True, help="folder with the two vllm wheels")
    parser.add_argument("--ascend", type=Path, default=ASCEND, help="vllm-ascend's git directory")
    parser.add_argument("--write", action="store_true", help="append the figures to BENCHMARKS.md")
    args = parser.parse_args()
    data = json.loads(DATA.read_text(encoding="utf-8"))
    d0, d1 = data["d0"], data["d1"]
    root = Path(tempfile.mkdtemp(prefix="impact-bench-"))
    try:
        started = time.perf_counter()
        repo, sha = upstream_repo(root, args.wheels, data["upstream_before"], data["upstream_after"])
        clone = UpstreamClone(repo / ".git")
        diffs, _ = read_commits(clone, [sha])
        facts: list[Change] = commit_facts(diffs[sha], Surface(packages=("vllm",)))
        facts_seconds = time.perf_counter() - started

        tree = checkout(args.ascend, d0, root / "ascend")
        files, uses, cold, cold_cpu, warm = index_speed(tree, ("vllm_ascend",), root / "state.sqlite")
        with open_store(root / "state.sqlite") as store:
            index = load_index(DownstreamSpec("ascend", path=str(tree), packages=("vllm_ascend",),
                                              upstream=("vllm",)), ("vllm",), store=store)
        table = UseTable.of("ascend", index.uses, ("vllm",))
        t = time.perf_counter()
        impacts = match_changes(facts, table, ("vllm",))
        match_all = time.perf_counter() - t

        # The same facts as a 300-PR week (each PR a slice of them), matched PR by PR as a run does.
        week = [facts[i::300] for i in range(300)]
        t = time.perf_counter()
        table = UseTable.of("ascend", index.uses, ("vllm",))
        week_impacts = sum(len(match_changes(f, table, ("vllm",), number=n)) for n, f in enumerate(week, 1))
        match_week = time.perf_counter() - t

        big, packages = big_tree(tree, root / "big", 3000)
        big_files, big_uses, big_cold, big_cpu, big_warm = index_speed(big, packages, root / "big.sqlite")

        lines, touched = changed_lines(args.ascend, d0, d1)
        breaks = [i for i in impacts if i.severity == "breaks"]
        flagged_files = {i.path for i in breaks}
        true_lines = [i for i in breaks if i.line in lines.get(i.path, set())]
        in_region = [i for i in breaks if set(_region(tree, i.path, i.line)) & lines.get(i.path, set())]
        diff = subprocess.run(["git", "--git-dir", str(args.ascend), "diff", "-U0", d0, d1, "--", "vllm_ascend"],
                              check=True, capture_output=True, text=True).stdout
        changed_text = "\n".join(r[1:] for r in diff.splitlines() if r[:1] in "+-" and not r.startswith(("+++", "---")))
        evidenced = [i for i in breaks if i in in_region or any(re.search(rf"\b{re.escape(n)}\b", changed_text)
                                                                   for n in _named(i))]
        recall_rows = []
        for adaptation in data["adaptations"]:
            paths = set(adaptation.get("paths") or commit_files(args.ascend, adaptation["commit"]))
            for pr in adaptation["upstream_prs"]:
                hit_breaks = any(i.path in paths for i in breaks)
                hit_any = any(i.path in paths for i in impacts)
                recall_rows.append((adaptation["commit"], pr, sorted(paths), hit_breaks, hit_any))
        n = len(recall_rows)
        recall_breaks = sum(r[3] for r in recall_rows) / n if n else 0.0
        recall_any = sum(r[4] for r in recall_rows) / n if n else 0.0
        precision_lines = len(true_lines) / len(breaks) if breaks else 0.0
        precision_files = len(flagged_files & touched) / len(flagged_files) if flagged_files else 0.0
        kinds = defaultdict(int)
        for f in facts:
            kinds[f.kind] += 1
        load = os.getloadavg()[0]
        report = [
            "## Affects your code on real history (vLLM releases against vllm-ascend)",
            "",
            f"Command: `.venv/bin/python -m benchmarks.downstream_impact --wheels DIR --write` (DIR: `pip download "
            f"--no-deps vllm=={data['upstream_before']}` and `=={data['upstream_after']}`; vllm-ascend from the "
            "search tool's fetch)",
            "",
            f"Upstream: vLLM {data['upstream_before']} → {data['upstream_after']} (the wheels' Python files as two "
            f"commits): {len(facts)} facts ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in "
            f"{facts_seconds:.1f} s. Downstream: vllm-ascend at {d0[:10]} (its main on v{data['upstream_before']}), "
            f"{files} files of vllm_ascend, {uses} uses of vllm; its main reached v{data['upstream_after']} at "
            f"{d1[:10]}.",
            "",
            "| figure | value | target |",
            "| --- | ---: | ---: |",
            f"| recall: named upstream PRs whose fixed files are flagged breaks | {recall_breaks:.2f} "
            f"({sum(r[3] for r in recall_rows)}/{n}) | ≥ 0.70 |",
            f"| recall: … flagged breaks or check | {recall_any:.2f} ({sum(r[4] for r in recall_rows)}/{n}) | |",
            f"| precision: uses flagged breaks whose function the downstream changed by D1, or whose changes by "
            f"D1 name the symbol or a parameter the fact names | {len(evidenced) / max(1, len(breaks)):.2f} "
            f"({len(evidenced)}/{len(breaks)}) | ≥ 0.70 |",
            f"| precision, stricter: … whose function the downstream changed by D1 | "
            f"{len(in_region) / max(1, len(breaks)):.2f} ({len(in_region)}/{len(breaks)}) | |",
            f"| precision, strictest: … whose very line the downstream changed by D1 | {precision_lines:.2f} "
            f"({len(true_lines)}/{len(breaks)}) | |",
            f"| precision: files flagged breaks that the downstream touched by D1 | {precision_files:.2f} "
            f"({len(flagged_files & touched)}/{len(flagged_files)}) | |",
            f"| index, vllm-ascend ({files} files), cold wall (CPU) / warm | {cold:.2f} s ({cold_cpu:.2f} s) / "
            f"{warm:.2f} s | |",
            f"| index, {big_files} files ({big_uses} uses), cold wall (CPU) / warm | {big_cold:.2f} s "
            f"({big_cpu:.2f} s) / {big_warm:.2f} s | ≤ 20 s / ≤ 1 s |",
            f"| match, the release's {len(facts)} facts at once ({len(impacts)} impacts) | {match_all:.2f} s | |",
            f"| match, those facts as a 300-PR week ({week_impacts} impacts) | {match_week:.2f} s | ≤ 2 s |",
            "",
            "Named upstream PRs (adaptation commit → PR: flagged breaks / any):",
            "",
            *[f"- {c[:10]} → #{pr}: {'yes' if b else 'no'} / {'yes' if a else 'no'} ({', '.join(p[:3])}"
              f"{' …' if len(p) > 3 else ''})" for c, pr, p, b, a in recall_rows],
            "",
            f"Load average: {load:.2f} (2 cores, shared).",
            "",
        ]
        text = "\n".join(report)
        print(text)
        if args.write:
            with open(Path(__file__).parent.parent / "BENCHMARKS.md", "a", encoding="utf-8") as out:
                out.write("\n" + text)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
