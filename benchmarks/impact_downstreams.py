"""Affects your code on two downstreams, from full files and from patches alone: vLLM 0.19.1 → 0.20.1 (release
wheels, as benchmarks.downstream_impact builds them) matched against vllm-ascend and vllm-gaudi at the commit
before their first adaptation to that span.

vllm-ascend's adaptations are benchmarks/data/downstream_impact.json's (the pair it was tuned on); vllm-gaudi's
are benchmarks/data/downstream_impact_gaudi.json, labelled blind from its own commit messages and diffs before
any match ran on it (the file was committed alone, first). Two fact sets are scored: the facts engine on the two
wheels' files (a clone: full files), and :func:`prdigest.collect.facts.patch_facts` on the same change as GitHub
would serve it (each file's unified diff with three lines of context: patches alone, no clone).

Figures per downstream and fact set:
- recall: of the (adaptation, upstream PR) rows (an adaptation with no PR named is one row), those for which the match flags ``breaks`` in one of the files
  the adaptation changed for that PR (and ``breaks`` or ``check``);
- precision of ``breaks``, lenient and stricter (benchmarks.downstream_impact.score's measure: stricter = the
  downstream changed, by d1, the function holding the use, or for a subclass statement its class, or for a
  patch the function it installs, in its own module or another; a use outside a function counts by its whole
  statement, a multi-line import or call; a pure insertion counts for what holds the line it follows), and beside it
  "stricter or later" (benchmarks.impact_later: or the downstream changed the statement holding the use by its last
  commit within 60 days after d1 and by 2026-05-31);
- flags: uses flagged ``breaks``, and echoes: flags beyond the first per (upstream fact, downstream function).

Run: .venv/bin/python -m benchmarks.impact_downstreams --wheels DIR [--gaudi GITDIR] [--ascend GITDIR] [--write]
[--tpu GITDIR] (also score vllm-project/tpu-inference, labelled blind: benchmarks/data/downstream_impact_tpu.json)
[--downstream LABELS.json GITDIR] (any labelled downstream, repeatable: its release pair from the file's
``upstream_before``/``upstream_after``, whose wheels ``vllm-<version>-*.whl`` DIR holds, and its packages from
``package``; downstreams of one pair share one upstream repository and fact sets: benchmarks.labelled_downstreams)
[--hunk-headers default|python] [--false NAME] (print each ``breaks`` the stricter evidence calls false on
that downstream, full files)

Index only: .venv/bin/python -m benchmarks.impact_downstreams --index-only [--ascend GITDIR] [--repeat N] (the
3,000-file index cold, warm and with one file changed, CPU seconds beside wall, and a digest of its rows to
compare two versions of the index by; no wheels, nothing written)
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import cast

import orjson

from benchmarks.downstream_impact import (
    ASCEND,
    DATA,
    _named,
    _region,
    big_tree,
    checkout,
    git,
    index_speed,
    upstream_repo,
)
from benchmarks.impact_later import (
    HISTORY_END,
    LATER_DAYS,
    changed_since,
    installed_elsewhere,
    later_commit,
    later_evidence,
    statement,
)
from benchmarks.labelled_downstreams import Labelled, LabelsError, by_pair, load_labelled
from benchmarks.report import write_section
from prdigest.collect.facts import Surface, commit_facts, patch_facts
from prdigest.collect.facts.hierarchy import GitTree
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.connect.impact.hunks import facts_from_patches
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, FileChange, Impact, PullRequest
from prdigest.kernel.storage import Store
from prdigest.state.store import open_store

TITLE = "Affects your code on two downstreams (vllm-ascend, vllm-gaudi), full files and patches alone"
GAUDI_DATA = Path(__file__).parent / "data" / "downstream_impact_gaudi.json"
#: Hand verdicts on the flags the stricter evidence calls false, read in the wheels' code and the downstreams' history.
HANDCHECK = Path(__file__).parent / "data" / "impact_handcheck.json"
GAUDI = Path("/work/.mirror/vllm-project+vllm-gaudi/repo")
# a third downstream, labelled blind (benchmarks/data/downstream_impact_tpu.json, committed alone before any match ran
# on it): scored only with --tpu GITDIR, so the two-downstream run stays what it was
TPU_DATA = Path(__file__).parent / "data" / "downstream_impact_tpu.json"
UPSTREAM = ("vllm",)


def wheel_patches(repo: Path, sha: str, python_headers: bool = False) -> PullRequest:
    """The change of ``sha`` as GitHub's REST API serves a PR's files: status, counts and each file's patch
    (its hunks with three lines of context). With ``python_headers`` git writes each hunk's header with its
    Python driver (the last ``def``/``class`` line at any depth, as GitHub shows it), else by its default rule
    (the last line at column 0)."""
    files: list[FileChange] = []
    if python_headers:
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.py diff=python\n", encoding="utf-8")
    status_of = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}
    for row in git(repo, "diff", "--name-status", "-M", f"{sha}^", sha).splitlines():
        code, *paths = row.split("\t")
        path, previous = paths[-1], paths[0] if code.startswith("R") else None
        patch = git(repo, "diff", "-U3", f"{sha}^", sha, "--", *([previous] if previous else []), path)
        body = patch[patch.find("\n@@") + 1:] if "\n@@" in patch else ""
        files.append(FileChange(path=path, status=status_of.get(code[0], "modified"), previous_path=previous,
                                patch=body or None))
    return PullRequest(number=1, url="https://example.invalid/pr/1", merged_at=datetime.now(timezone.utc),
                       files=files)


def upstream_facts(into: Path, wheels: Path, before: str, after: str, python_headers: bool) -> dict[str, list[Change]]:
    """The two fact sets of one release pair: the facts engine on the wheels' files as two commits (with the whole
    tree, as a --git run reads them) and the patches of the same change alone."""
    into.mkdir(parents=True)
    repo, sha = upstream_repo(into, wheels, before, after)
    clone = UpstreamClone(repo / ".git")
    diffs, _ = read_commits(clone, [sha])
    surface = Surface(packages=UPSTREAM)
    return {"full files": commit_facts(diffs[sha], surface, tree=GitTree(clone, UPSTREAM)),
            "patches alone" + (" (Python hunk headers)" if python_headers else ""):
                patches_alone(wheel_patches(repo, sha, python_headers), surface)}


def patches_alone(pr: PullRequest, surface: Surface) -> list[Change]:
    """The facts a run without a clone matches: the patches' own (the entry's ``changes``) and the hunk
    headers' (prdigest.connect.impact.step.entry_facts)."""
    facts = patch_facts(pr, surface)
    seen = {(c.kind, c.symbol, c.path) for c in facts}
    return facts + [c for c in facts_from_patches(pr, UPSTREAM) if (c.kind, c.symbol, c.path) not in seen]


def changed_lines(gitdir: Path, packages: Sequence[str], d0: str, d1: str) -> tuple[dict[str, set[int]], set[str], str]:
    """D0's lines under ``packages`` changed or deleted by D1 (D0's numbering), the files touched, and the changed
    text."""
    diff = subprocess.run(["git", "--git-dir", str(gitdir), "diff", "-U0", "--no-renames", d0, d1, "--", *packages],
                          check=True, capture_output=True, text=True).stdout
    lines: dict[str, set[int]] = defaultdict(set)
    files: set[str] = set()
    path = ""
    for row in diff.splitlines():
        if row.startswith("--- a/"):
            path = row[6:]
            files.add(path)
        elif row.startswith("@@"):
            start, _, count = row.split()[1][1:].partition(",")
            # a pure insertion (``-52,0``) changes what holds line 52, the line it follows
            lines[path].update(range(int(start), int(start) + max(int(count) if count else 1, 1)))
    text = "\n".join(r[1:] for r in diff.splitlines() if r[:1] in "+-" and not r.startswith(("+++", "---")))
    return lines, files, text


def commit_files(gitdir: Path, packages: Sequence[str], commit: str) -> set[str]:
    out = subprocess.run(["git", "--git-dir", str(gitdir), "show", "--name-only", "--format=", commit], check=True,
                         capture_output=True, text=True).stdout
    return {p for p in out.split() if p.startswith(tuple(f"{package}/" for package in packages))}


def region(tree: Path, path: str, line: int, how: str) -> set[int]:
    """What the downstream had to change for a use: the innermost function holding it, or for a subclass
    statement the class (a missing method is added in its body), for a patch ``X.f = g`` also the function
    ``g`` it installs (where a fix lands), else the line itself."""
    best: tuple[int, int] | None = None
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef) + ((ast.ClassDef,) if how == "subclasses" else ())
    tree_ = ast.parse((tree / path).read_bytes())
    installed = {n.value.id for n in ast.walk(tree_) if how == "patches" and isinstance(n, ast.Assign)
                 and n.lineno <= line <= (n.end_lineno or n.lineno) and isinstance(n.value, ast.Name)}
    out: set[int] = set()
    for node in ast.walk(tree_):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in installed:
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if isinstance(node, kinds) and node.lineno <= line <= (node.end_lineno or 0):
            if best is None or (node.end_lineno or 0) - node.lineno < best[1] - best[0]:
                best = (node.lineno, node.end_lineno or node.lineno)
    out.update(range(best[0], best[1] + 1) if best else range(line, line + 1))
    return out


def held(use: Impact, tree: Path, lines: dict[str, set[int]]) -> bool:
    """Whether the adaptation commits changed what holds ``use``: its :func:`region`, the whole statement holding it
    (a module-level import or call over several lines, changed below the line the index names) or, for a patch
    whose installed function is defined in another of the downstream's modules, that function there."""
    changed = lines.get(use.path, set())
    if region(tree, use.path, use.line, use.how) & changed or statement(tree, use.path, use.line) & changed:
        return True
    elsewhere = installed_elsewhere(tree, use.path, use.line) if use.how == "patches" else None
    return elsewhere is not None and bool(elsewhere[1] & lines.get(elsewhere[0], set()))


def score(impacts: list[Impact], tree: Path, lines: dict[str, set[int]], text: str,
          adaptations: list[tuple[str, list[int], set[str]]]) -> dict[str, object]:
    """Recall rows and the uses flagged breaks with evidence (benchmarks.downstream_impact.score's measure,
    with a subclass statement's region its class)."""
    breaks = [i for i in impacts if i.severity == "breaks"]
    in_region = [i for i in breaks if held(i, tree, lines)]
    evidenced = [i for i in breaks if i in in_region
                 or any(re.search(rf"\b{re.escape(n)}\b", text) for n in _named(i))]
    # An adaptation whose upstream PR the labeller could not name (no upstream history, only the wheels) is one
    # row all the same, shown as "#?": the break is real, only its PR number is unknown.
    # A patch flagged where it installs a function another of the downstream's modules defines names that module
    # too: the adaptation changes the function there (vllm-ascend's rejection_sample, installed by a patch module).
    homes = {id(i): home[0] for i in impacts if i.how == "patches"
             for home in [installed_elsewhere(tree, i.path, i.line)] if home}
    rows = [(commit, pr, sorted(paths), any(i.path in paths or homes.get(id(i)) in paths for i in breaks),
             any(i.path in paths or homes.get(id(i)) in paths for i in impacts))
            for commit, prs, paths in adaptations for pr in (prs or ["?"])]
    return {"breaks": breaks, "evidenced": evidenced, "region": in_region, "rows": rows,
            "checks": sum(1 for i in impacts if i.severity == "check")}


def echoes(impacts: list[Impact], tree: Path) -> int:
    """Flags ``breaks`` beyond the first per (upstream fact, downstream function)."""
    seen: set[tuple[str, str, int]] = set()
    extra = 0
    for i in impacts:
        if i.severity != "breaks":
            continue
        key = (i.fact, i.path, _region(tree, i.path, i.line).start)
        extra += key in seen
        seen.add(key)
    return extra


def by_hand(name: str, result: dict, verdicts: list[dict]) -> list[Impact]:
    """The flags true by the stricter evidence or by a hand verdict ``real`` (HANDCHECK: downstream, path and
    upstream symbol); a flag nobody read stays as the stricter evidence says."""
    # a verdict keyed by the plain name (read when the downstream was scored over one pair) holds for it over any
    # pair: its upstream symbols are the pair's own
    real = {(v["path"], v["symbol"]) for v in verdicts
            if v["downstream"] in (name, name.split(" ")[0]) and v["verdict"] == "real"}
    return [i for i in result["breaks"] if i in result["region"] or (i.path, i.symbol) in real]


def false_breaks(name: str, result: dict, label: str = "full files", besides: dict | None = None) -> list[str]:
    """Each ``breaks`` flag the stricter evidence calls false (the downstream did not change the function holding
    it), with the lenient evidence's word on it: the lines to read against the wheels' code. With ``besides``
    (another fact set's result), only the flags that set does not make at the same line and use."""
    flagged = {(i.path, i.line, i.how) for i in besides["breaks"]} if besides else set()
    extra = " and full files do not flag" if besides else ""
    out = [f"Flagged breaks on {name} ({label}) that the stricter evidence calls false{extra}:"]
    for i in result["breaks"]:
        if i not in result["region"] and (i.path, i.line, i.how) not in flagged:
            lenient = "named in the changed text" if i in result["evidenced"] else "no evidence"
            lenient += "; its statement changed later" if i in result.get("later", ()) else ""
            out.append(f"- {i.path}:{i.line} {i.how} {i.symbol} ({lenient}): {i.fact}")
    return out


def at_parents(labelled: Labelled, root: Path, fact_sets: dict[str, list[Change]], store: Store,
               adaptations: list[tuple[str, list[int], set[str]]]) -> dict[str, list[tuple[str, int | str, bool]]]:
    """Per fact set, (commit, PR, flagged breaks) for each row, matched against the downstream as it was just
    before the row's own adaptation commit (its first parent), not at d0: a use the downstream added between d0
    and that commit (a method written for an earlier upstream change) is there to be flagged, as it was on the
    day the team had to adapt."""
    out: dict[str, list[tuple[str, int | str, bool]]] = {label: [] for label in fact_sets}
    tables: dict[str, tuple[UseTable, Path]] = {}
    for commit, prs, paths in adaptations:
        if commit not in tables:
            tree = checkout(labelled.gitdir, f"{commit}^", root / f"{labelled.name}-{commit[:12]}")
            index = load_index(DownstreamSpec(labelled.name, path=str(tree), packages=labelled.packages,
                                              upstream=UPSTREAM), UPSTREAM, store=store)
            tables[commit] = UseTable.of(labelled.name, index.uses, UPSTREAM), tree
        table, tree = tables[commit]
        for label, facts in fact_sets.items():
            breaks = [i for i in match_changes(facts, table, UPSTREAM) if i.severity == "breaks"]
            homes = {id(i): home[0] for i in breaks if i.how == "patches"
                     for home in [installed_elsewhere(tree, i.path, i.line)] if home}
            found = any(i.path in paths or homes.get(id(i)) in paths for i in breaks)
            out[label] += [(commit, pr, found) for pr in (prs or ["?"])]
    return out


def downstream(labelled: Labelled, root: Path, fact_sets: dict[str, list[Change]],
               parents: bool = False) -> dict[str, dict]:
    """Every fact set scored on one labelled downstream at its d0 (and with ``parents``, each row also at its
    adaptation commit's parent: :func:`at_parents`)."""
    name, data, gitdir, packages = labelled.name, labelled.data, labelled.gitdir, labelled.packages
    tree = checkout(gitdir, data["d0"], root / name)
    adaptations = [(a["commit"], a["upstream_prs"], set(a.get("paths") or commit_files(gitdir, packages, a["commit"])))
                   for a in data["adaptations"]]
    with open_store(root / f"{name}.sqlite") as store:
        index = load_index(DownstreamSpec(name, path=str(tree), packages=packages, upstream=UPSTREAM), UPSTREAM,
                           store=store)
        parent_rows = at_parents(labelled, root, fact_sets, store, adaptations) if parents else None
    table = UseTable.of(name, index.uses, UPSTREAM)
    lines, touched, text = changed_lines(gitdir, packages, data["d0"], data["d1"])
    later, when = later_commit(gitdir, data["d1"])
    since = changed_since(gitdir, packages, data["d0"], later)
    out: dict[str, dict] = {}
    for label, facts in fact_sets.items():
        started = time.perf_counter()
        impacts = match_changes(facts, table, UPSTREAM)
        seconds = time.perf_counter() - started
        result = score(impacts, tree, lines, text, adaptations)
        result["echoes"] = echoes(impacts, tree)
        result["later"] = later_evidence(cast(list[Impact], result["breaks"]), cast(list[Impact], result["region"]),
                                         tree, since)
        result["later_commit"] = (later, when)
        result["seconds"] = seconds
        result["files_indexed"] = index.files
        if parent_rows is not None:
            result["at_parents"] = parent_rows[label]
        out[label] = result
    return out


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "– (0/0)"


def speed(root: Path, facts: list[Change]) -> dict[str, float]:
    """The index of a 3,000-file tree (vllm-ascend's files copied under several package names) cold and warm,
    and the full-file facts dealt out to a 300-PR week matched PR by PR against vllm-ascend, as a run does."""
    big, packages = big_tree(root / "vllm-ascend", root / "big", 3000)
    files, uses, cold, cpu, warm = index_speed(big, packages, root / "big.sqlite")
    with open_store(root / "ascend.sqlite") as store:
        index = load_index(DownstreamSpec("ascend", path=str(root / "vllm-ascend"), packages=("vllm_ascend",),
                                          upstream=UPSTREAM), UPSTREAM, store=store)
    week = [facts[i::300] for i in range(300)]
    started = time.perf_counter()
    table = UseTable.of("ascend", index.uses, UPSTREAM)
    found = sum(len(match_changes(f, table, UPSTREAM, number=n)) for n, f in enumerate(week, 1))
    return {"files": files, "uses": uses, "cold": cold, "cpu": cpu, "warm": warm,
            "week": time.perf_counter() - started, "week_impacts": found}


def index_only(root: Path, ascend: Path, repeat: int) -> list[str]:
    """The 3,000-file index alone, ``repeat`` times each in a fresh store: cold, warm (the same files), and with
    one file changed (a new commit: only that file parsed, uses resolved again), in wall and CPU seconds, and
    the sha256 of the cold index's rows and errors (identical rows, identical digest)."""
    data = json.loads(DATA.read_text(encoding="utf-8"))
    big, packages = big_tree(checkout(ascend, data["d0"], root / "ascend"), root / "big", 3000)
    spec = DownstreamSpec("bench", path=str(big), packages=packages, upstream=UPSTREAM)
    changed = sorted(big.rglob("*.py"))[0]
    original = changed.read_bytes()
    out: list[str] = []
    for run in range(repeat):
        with open_store(root / f"big{run}.sqlite") as store:
            cpu = time.process_time()
            cold = load_index(spec, UPSTREAM, store=store)
            cold_cpu, cpu = time.process_time() - cpu, time.process_time()
            warm = load_index(spec, UPSTREAM, store=store)
            warm_cpu = time.process_time() - cpu
            changed.write_bytes(original + b"\n\ndef _benchmark_change(x):\n    return x.changed\n")
            try:
                cpu = time.process_time()
                one = load_index(spec, UPSTREAM, store=store)
                one_cpu = time.process_time() - cpu
            finally:
                changed.write_bytes(original)
        assert warm.cached and not cold.cached and not one.cached
        rows = hashlib.sha256(orjson.dumps([[u.row() for u in cold.uses], cold.errors])).hexdigest()
        same = [u.row() for u in warm.uses] == [u.row() for u in cold.uses] and warm.errors == cold.errors
        out.append(f"run {run + 1}: {cold.files:,} files, {len(cold.uses):,} uses, {len(cold.errors)} errors; "
                   f"cold {cold.seconds:.2f} s wall ({cold_cpu:.2f} s CPU), warm {warm.seconds:.2f} s wall "
                   f"({warm_cpu:.2f} s CPU), one file changed {one.seconds:.2f} s wall ({one_cpu:.2f} s CPU, "
                   f"{one.parsed} parsed); rows sha256 {rows[:16]} (warm rows {'identical' if same else 'DIFFER'}); "
                   f"load average {os.getloadavg()[0]:.2f}")
    return out


def before_rows(path: Path) -> list[str]:
    """The figures' table of an earlier run's printed section (the same script on earlier code), as is."""
    return [row for row in path.read_text(encoding="utf-8").splitlines()
            if row.startswith(("| vllm-", "| downstream", "| ---", "Upstream:", "Load average"))]


def render(results: dict[str, dict[str, dict]], counts: dict[str, int], load: float,
           timing: dict[str, float] | None = None, before: tuple[str, list[str]] | None = None) -> str:
    """The section: one row per downstream and fact set."""
    parents = any("at_parents" in r for per in results.values() for r in per.values())
    out = ["Command: `.venv/bin/python -m benchmarks.impact_downstreams --wheels DIR --write [--before FILE "
           "--before-label L]` (DIR: `pip download --no-deps --only-binary=:all: vllm==V` for V in 0.19.1, 0.20.1; "
           "vllm-ascend and vllm-gaudi from the search tool's fetch; FILE: this script's printed output with "
           "`--no-speed`, run from a folder holding `git archive COMMIT prdigest benchmarks` of the earlier code "
           "and this script)", "",
           "Upstream: vLLM 0.19.1 → 0.20.1 (the wheels' Python files as two commits); facts: "
           + ", ".join(f"{k} {v}" for k, v in counts.items()) + ". vllm-gaudi's adaptations were labelled blind "
           "(benchmarks/data/downstream_impact_gaudi.json, committed before any match ran on it); vllm-ascend's are "
           "the pair the match was tuned on.", "",
           "| downstream (files) | facts from | recall, breaks | recall, breaks or check | precision lenient | "
           "stricter | stricter or later | by hand | flagged breaks | echoes | match s |"
           + (" recall, breaks, at each adaptation's parent |" if parents else ""),
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if parents else "")]
    for name, per in results.items():
        for label, r in per.items():
            rows = r["rows"]
            tail = (f" {_ratio(sum(x[2] for x in r['at_parents']), len(r['at_parents']))} |"
                    if "at_parents" in r else " – |" if parents else "")
            out.append(f"| {name} ({r['files_indexed']}) | {label} | {_ratio(sum(x[3] for x in rows), len(rows))} | "
                       f"{_ratio(sum(x[4] for x in rows), len(rows))} | "
                       f"{_ratio(len(r['evidenced']), len(r['breaks']))} | {_ratio(len(r['region']), len(r['breaks']))}"
                       f" | {_ratio(len(r['later']), len(r['breaks']))}"
                       f" | {_ratio(len(r['by_hand']), len(r['breaks']))} | {len(r['breaks'])} | {r['echoes']} | "
                       f"{r['seconds']:.2f} |{tail}")
    if before:
        label, rows = before
        table = [r for r in rows if r.startswith("| ")]  # its own header: earlier code may lack a column
        out += ["", f"Before ({label}; the same script and data on that code):", "", *table]
        out += ["", *[r for r in rows if not r.startswith("| ")]]
    later = "; ".join(f"{name} {per['full files']['later_commit'][0][:10]} "
                      f"({per['full files']['later_commit'][1]:%Y-%m-%d})" for name, per in results.items())
    out += ["", "Targets (issue 36): recall ≥ 0.8 from patches alone and ≥ 0.9 from full files; precision of breaks "
            "≥ 0.85 stricter. Echoes: flags beyond one per (upstream fact, downstream function) (target 0). By hand: "
            "the stricter evidence, or a hand verdict 'real' in benchmarks/data/impact_handcheck.json (each flag the "
            "stricter evidence calls false from full files, read in the wheels' code and the downstream's history). "
            "Stricter or later (a looser evidence, beside the stricter one, not instead of it: benchmarks/"
            "impact_later.py): the stricter evidence, or the downstream changed the statement holding the flagged use "
            f"(a `def`'s header, a whole multi-line import or call; for a patch, also the function it installs where "
            "another of its modules defines it) between d0 and its last commit on main at most "
            f"{LATER_DAYS} days after d1 and by {HISTORY_END:%Y-%m-%d} ({later}).", ""]
    for name, per in results.items():
        r = per["full files"]
        out.append(f"Rows of {name} (adaptation commit → PR: flagged breaks / any, full files):")
        out.append("")
        at = {(c, pr): found for c, pr, found in r.get("at_parents", [])}
        out += [f"- {c[:10]} → #{pr}: {'yes' if b else 'no'} / {'yes' if a else 'no'}"
                + (f"; at its parent: {'yes' if at[(c, pr)] else 'no'}" if (c, pr) in at else "")
                for c, pr, _, b, a in r["rows"]]
        out.append("")
        for label, other in per.items():  # the other fact sets' rows where they differ (patches alone's misses)
            if label == "full files":
                continue
            differ = [(c, pr, b, a) for (c, pr, _, b, a), full in zip(other["rows"], r["rows"]) if (b, a) != full[3:]]
            out.append(f"Rows of {name} from {label} that differ from full files: "
                       + ("; ".join(f"{c[:10]} → #{pr}: {'yes' if b else 'no'} / {'yes' if a else 'no'}"
                                    for c, pr, b, a in differ) or "none") + ".")
            out.append("")
    if timing:
        out += [f"Index of a {timing['files']:,}-file tree ({timing['uses']:,} uses; vllm-ascend's files copied under "
                f"several package names): cold {timing['cold']:.2f} s wall ({timing['cpu']:.2f} s CPU), warm "
                f"{timing['warm']:.2f} s (targets ≤ 20 s / ≤ 1 s). Match of the full-file facts dealt out to a 300-PR "
                f"week, PR by PR, against vllm-ascend: {timing['week']:.2f} s ({timing['week_impacts']} impacts; "
                "target ≤ 2 s).", ""]
    out.append(f"Load average: {load:.2f} (2 cores, shared; wall times above are under that load).")
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheels", type=Path, help="folder with the vllm 0.19.1 and 0.20.1 wheels")
    parser.add_argument("--ascend", type=Path, default=ASCEND, help="vllm-ascend's git directory")
    parser.add_argument("--gaudi", type=Path, default=GAUDI, help="vllm-gaudi's git directory")
    parser.add_argument("--tpu", type=Path, help="vllm-project/tpu-inference's git directory: score it too (short for "
                                                  "--downstream benchmarks/data/downstream_impact_tpu.json GITDIR)")
    parser.add_argument("--downstream", nargs=2, action="append", default=[], metavar=("LABELS", "GITDIR"),
                        help="score one more labelled downstream: its labels file (upstream_before/upstream_after: "
                             "the release pair, whose wheels --wheels holds; package: its import package or a list; "
                             "d0, d1, adaptations) and its git directory; repeatable")
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    parser.add_argument("--no-speed", action="store_true", help="skip the 3,000-file index and the 300-PR week")
    parser.add_argument("--hunk-headers", choices=("default", "python"), default="default",
                        help="how the patches' hunk headers are written: git's default rule (column-0 lines) or its "
                             "Python driver (def/class lines at any depth, as GitHub shows them)")
    parser.add_argument("--before", type=Path, help="an earlier run's printed section, shown as 'before'")
    parser.add_argument("--before-label", default="earlier code", help="what --before was run on")
    parser.add_argument("--false", action="append", default=[], metavar="NAME",
                        help="print the breaks the stricter evidence calls false on this downstream (full files)")
    parser.add_argument("--false-patches", action="append", default=[], metavar="NAME",
                        help="print the breaks from patches alone the stricter evidence calls false and full files "
                             "do not flag, on this downstream")
    parser.add_argument("--at-parents", action="store_true",
                        help="also match each row against the downstream as it was just before its adaptation commit")
    parser.add_argument("--index-only", action="store_true",
                        help="only the 3,000-file index, cold and warm, with its rows' digest (no wheels)")
    parser.add_argument("--repeat", type=int, default=1, help="with --index-only: how many cold/warm pairs")
    args = parser.parse_args()
    if args.index_only:
        root = Path(tempfile.mkdtemp(prefix="impact-index-"))
        try:
            print("\n".join(index_only(root, args.ascend, args.repeat)))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    if args.wheels is None:
        parser.error("--wheels is required (but for --index-only)")
    try:
        named = [load_labelled(DATA, args.ascend), load_labelled(GAUDI_DATA, args.gaudi),
                 *([load_labelled(TPU_DATA, args.tpu)] if args.tpu else []),
                 *(load_labelled(Path(labels), Path(gitdir)) for labels, gitdir in args.downstream)]
        pairs = by_pair(named)
    except LabelsError as exc:
        parser.error(str(exc))
    unknown = sorted(set(args.false + args.false_patches) - {d.name for group in pairs.values() for d in group})
    if unknown:
        parser.error(f"--false/--false-patches name no downstream scored: {', '.join(unknown)}")
    root = Path(tempfile.mkdtemp(prefix="impact-two-"))
    try:
        results: dict[str, dict[str, dict]] = {}
        counts: dict[str, int] = {}
        first: dict[str, list[Change]] = {}
        for n, ((before_version, after_version), group) in enumerate(pairs.items()):
            # one upstream repository and fact sets per release pair, shared by its downstreams
            fact_sets = upstream_facts(root / f"pair{n}", args.wheels, before_version, after_version,
                                       args.hunk_headers == "python")
            first = first or fact_sets
            suffix = f" ({before_version} → {after_version})" if len(pairs) > 1 else ""
            counts.update({label + suffix: len(facts) for label, facts in fact_sets.items()})
            for labelled in group:
                results[labelled.name] = downstream(labelled, root, fact_sets, args.at_parents)
        verdicts = json.loads(HANDCHECK.read_text(encoding="utf-8"))["verdicts"]
        for name, per in results.items():
            for result in per.values():
                result["by_hand"] = by_hand(name, result, verdicts)
        for name in args.false:
            print("\n".join(false_breaks(name, results[name]["full files"])), end="\n\n")
        patches_label = next(label for label in first if label.startswith("patches alone"))
        for name in args.false_patches:
            print("\n".join(false_breaks(name, results[name][patches_label], patches_label,
                                          results[name]["full files"])), end="\n\n")
        timing = None if args.no_speed else speed(root, first["full files"])
        before = (args.before_label, before_rows(args.before)) if args.before else None
        body = render(results, counts, os.getloadavg()[0], timing, before)
        print(f"## {TITLE}\n\n{body}")
        if args.write:
            write_section(TITLE, body)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
