"""Affects your code on real history: vLLM's Python API between two releases matched against the Ascend plugin.

The upstream's git history is over what the search tool's fetch brings (1.1 GB), so the upstream side is two
release wheels of vLLM (``pip download --no-deps vllm==0.19.1`` and ``==0.20.1``: their ``vllm/**.py``), put
in a scratch git repository as two commits; the facts engine reads the facts of the second against the first.
The data's ``more_pairs`` (0.18.0 → 0.19.1) are scored the same way, side by side and pooled.
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

Each figure is printed for the earlier match (no attribute, return-type or new-keyword facts, no attributes read
by name) → this one (pyapi's ``attribute``, ``returns`` and ``passes`` facts; the index's attributes read on
objects of unknown type and ``__init__`` overrides that never call the base's; match._attribute), from one run
on the same facts and index.

Run: .venv/bin/python -m benchmarks.downstream_impact --wheels DIR [--ascend GITDIR] [--write] [--no-big]
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

from benchmarks.report import write_section
from prdigest.collect.facts import Surface, commit_facts
from prdigest.collect.facts.pyapi import PASSES, UNTYPED, added_with_default
from prdigest.collect.git import UpstreamClone, read_commits
from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.kernel.models import Change, Impact
from prdigest.state.store import open_store

TITLE = "Affects your code on real history (vLLM releases against vllm-ascend)"
DATA = Path(__file__).parent / "data" / "downstream_impact.json"
PASSES_SAID = PASSES.split("{")[0]
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


#: What this rule adds: the facts' kinds and the index's uses the earlier match had not.
NEW_KINDS = ("attribute", "returns", "passes")
NEW_HOW = "attribute"


def earlier(facts: list[Change], uses: list) -> tuple[list[Change], UseTable]:
    """The facts and the use table as the earlier match saw them: without attribute, return-type and
    new-keyword facts and without the attributes read by name (an ``__init__`` override's note that it never
    calls the base's is read by nothing else)."""
    return ([f for f in facts if f.kind not in NEW_KINDS],
            UseTable.of("ascend", [u for u in uses if u.how != NEW_HOW], ("vllm",)))


def _category(impact: Impact) -> str:
    """``signature, added default (passed), overrides``: the fact's kind (a signature fact by what it did) and
    the use."""
    kind, _, rest = impact.fact.partition(": ")
    if kind == "signature":
        if "; no upstream call passes it" in rest or PASSES_SAID in rest:
            kind += ", added default" + (" (passed)" if PASSES_SAID in rest else "")
        elif "-" in rest or "→" in rest:
            kind += ", removed/renamed/changed"
        else:
            kind += ", added"
    return f"{kind} / {impact.how}"


def score(impacts: list[Impact], tree: Path, lines: dict[str, set[int]], touched: set[str], changed_text: str,
          adaptations: list[tuple[str, list[int], set[str]]]) -> dict[str, object]:
    """Recall and the three precisions of one match, with the breaks by category."""
    breaks = [i for i in impacts if i.severity == "breaks"]
    true_lines = [i for i in breaks if i.line in lines.get(i.path, set())]
    in_region = [i for i in breaks if set(_region(tree, i.path, i.line)) & lines.get(i.path, set())]
    evidenced = [i for i in breaks if i in in_region or any(re.search(rf"\b{re.escape(n)}\b", changed_text)
                                                               for n in _named(i))]
    rows = []
    for commit, prs, paths in adaptations:
        for pr in prs:
            rows.append((commit, pr, sorted(paths), any(i.path in paths for i in breaks),
                         any(i.path in paths for i in impacts)))
    categories: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for i in breaks:
        row = categories[_category(i)]
        row[0] += 1
        row[1] += i in evidenced
        row[2] += i in in_region
        row[3] += i in true_lines
    files = {i.path for i in breaks}
    by_fact = {i.fact for i in breaks}
    return {"facts": by_fact, "facts_evidenced": {i.fact for i in evidenced},
            "facts_region": {i.fact for i in in_region},"breaks": breaks, "evidenced": evidenced, "region": in_region, "lines": true_lines, "rows": rows,
            "files": files, "files_touched": files & touched, "categories": dict(categories),
            "checks": sum(1 for i in impacts if i.severity == "check")}


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f} ({part}/{whole})" if whole else "– (0/0)"


def _pair(now: dict, then: dict, key: str, whole: str = "breaks") -> str:
    return f"{_ratio(len(then[key]), len(then[whole]))} → **{_ratio(len(now[key]), len(now[whole]))}**"


def other_pair(pair: dict, wheels: Path, ascend: Path, root: Path) -> tuple[dict, dict, int, list]:
    """One more release pair (the data's ``more_pairs``), scored under the earlier match and this one; its
    fact count, and each rule alone."""
    root.mkdir()
    repo, sha = upstream_repo(root, wheels, pair["upstream_before"], pair["upstream_after"])
    diffs, _ = read_commits(UpstreamClone(repo / ".git"), [sha])
    facts = commit_facts(diffs[sha], Surface(packages=("vllm",)))
    tree = checkout(ascend, pair["d0"], root / "ascend")
    with open_store(root / "state.sqlite") as store:
        index = load_index(DownstreamSpec("ascend", path=str(tree), packages=("vllm_ascend",), upstream=("vllm",)),
                           ("vllm",), store=store)
    table = UseTable.of("ascend", index.uses, ("vllm",))
    lines, touched = changed_lines(ascend, pair["d0"], pair["d1"])
    diff = subprocess.run(["git", "--git-dir", str(ascend), "diff", "-U0", pair["d0"], pair["d1"], "--",
                           "vllm_ascend"], check=True, capture_output=True, text=True).stdout
    changed_text = "\n".join(r[1:] for r in diff.splitlines() if r[:1] in "+-" and not r.startswith(("+++", "---")))
    adaptations = [(a["commit"], a["upstream_prs"], set(a.get("paths") or commit_files(ascend, a["commit"])))
                   for a in pair["adaptations"]]
    now = score(match_changes(facts, table, ("vllm",)), tree, lines, touched, changed_text, adaptations)
    then_facts, then_table = earlier(facts, index.uses)
    then = score(match_changes(then_facts, then_table, ("vllm",)), tree, lines, touched, changed_text, adaptations)
    rules = each_rule(facts, index.uses, lambda found: score(found, tree, lines, touched, changed_text, adaptations))
    return now, then, len(facts), rules


#: Each rule this match adds, by the facts' kind it reads (the attribute rule also reads the uses by name).
RULES = (("attribute", "attribute removed or newly set by `__init__`"), ("returns", "return type changed"),
         ("passes", "keyword newly passed to a constructor"))


def each_rule(facts: list[Change], uses: list, scorer) -> list[tuple[str, dict]]:
    """Every rule alone on top of the earlier match, scored: what each one moved."""
    then_facts, then_table = earlier(facts, uses)
    full = UseTable.of("ascend", uses, ("vllm",))
    out = []
    for kind, words in RULES:
        alone = then_facts + [f for f in facts if f.kind == kind]
        out.append((words, scorer(match_changes(alone, full if kind == "attribute" else then_table, ("vllm",)))))
    return out


def render_rules(rows: list[tuple[str, dict, list[tuple[str, dict]]]]) -> list[str]:
    """What each rule moved, pair by pair: the uses it adds to breaks (with evidence) and the recall it gives
    alone on top of the earlier match."""
    out = ["What each rule moved, alone on top of the earlier match: uses it adds to breaks (of them with evidence "
           "lenient / stricter), and recall (named PRs; each adaptation commit once).", "",
           "| pair | rule | uses added to breaks | lenient | stricter | recall | each commit once |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, then, rules in rows:
        known = {(i.path, i.line, i.symbol, i.how) for i in then["breaks"]}
        for words, result in rules:
            new = [i for i in result["breaks"] if (i.path, i.line, i.symbol, i.how) not in known]
            out.append(f"| {name} | {words} | {len(new)} | {sum(1 for i in new if i in result['evidenced'])} | "
                       f"{sum(1 for i in new if i in result['region'])} | {_ratio(*_recall(then))} → "
                       f"{_ratio(*_recall(result))} | {_ratio(*_commits(then))} → {_ratio(*_commits(result))} |")
    return out


def _commits(result: dict) -> tuple[int, int]:
    """Recall counting each adaptation commit and its files once (not each PR it names)."""
    groups: dict[tuple[str, tuple[str, ...]], bool] = {}
    for c, _, p, b, _ in result["rows"]:
        groups[(c, tuple(p))] = groups.get((c, tuple(p)), False) or b
    return sum(groups.values()), len(groups)


def _recall(result: dict) -> tuple[int, int]:
    return sum(r[3] for r in result["rows"]), len(result["rows"])


def render_pairs(pairs: list[tuple[str, dict, dict, int]]) -> list[str]:
    """Every release pair side by side, and the figures pooled over them (counts summed)."""
    out = ["Every release pair, the earlier match → this one (the second pair's adaptation commits have no per-PR "
           "table: each PR's files are all its commit changed):", "",
           "| pair (facts) | recall | recall, each commit once | precision lenient | stricter | strictest | per fact, "
           "lenient |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    pooled_now: dict[str, list] = defaultdict(list)
    pooled_then: dict[str, list] = defaultdict(list)
    for name, now, then, n in pairs:
        cells = [f"{_ratio(*_recall(then))} → **{_ratio(*_recall(now))}**",
                 f"{_ratio(*_commits(then))} → {_ratio(*_commits(now))}"]
        cells += [_pair(now, then, k) for k in ("evidenced", "region", "lines")]
        cells.append(_pair(now, then, "facts_evidenced", "facts"))
        out.append(f"| {name} ({n}) | " + " | ".join(cells) + " |")
        for key in ("breaks", "evidenced", "region", "lines", "rows"):
            pooled_now[key] += now[key]
            pooled_then[key] += then[key]
        for key in ("facts", "facts_evidenced"):
            pooled_now[key] += [(name, f) for f in now[key]]
            pooled_then[key] += [(name, f) for f in then[key]]
    cells = [f"{_ratio(*_recall(pooled_then))} → **{_ratio(*_recall(pooled_now))}**",
             f"{_ratio(*_commits(pooled_then))} → {_ratio(*_commits(pooled_now))}"]
    cells += [_pair(pooled_now, pooled_then, k) for k in ("evidenced", "region", "lines")]
    cells.append(_pair(pooled_now, pooled_then, "facts_evidenced", "facts"))
    out.append("| pooled | " + " | ".join(cells) + " |")
    for name, now, then, _ in pairs[1:]:
        out += ["", *_new_breaks(now, then, name)]
        kept = {(i.path, i.line, i.symbol, i.how) for i in now["breaks"]}
        moved = [i for i in then["breaks"] if (i.path, i.line, i.symbol, i.how) not in kept]
        out += ["", f"Uses the earlier match flagged breaks and this one does not, {name} ({len(moved)}; evidence "
                "lenient / stricter):", ""]
        out += [f"- {i.path}:{i.line} {i.how} `{i.symbol.rsplit('.', 2)[-2] if '.' in i.symbol else i.symbol}."
                f"{i.symbol.rsplit('.', 1)[-1]}` ({i.fact.split(': ', 1)[1].split(PASSES_SAID)[0]})): "
                f"{'yes' if i in then['evidenced'] else 'no'} / {'yes' if i in then['region'] else 'no'}"
                for i in moved]
    return out


def _new_breaks(now: dict, then: dict, name: str) -> list[str]:
    """The uses this match flags breaks that the earlier did not, with their evidence (lenient / stricter)."""
    known = {(i.path, i.line, i.symbol, i.how) for i in then["breaks"]}
    new = [i for i in now["breaks"] if (i.path, i.line, i.symbol, i.how) not in known]
    out = [f"Uses this match flags breaks and the earlier did not{', ' + name if name else ''} ({len(new)}; "
           f"evidence lenient / stricter):", ""]
    out += [f"- {i.path}:{i.line} {i.how} `{i.symbol.rsplit('.', 2)[-2]}.{i.symbol.rsplit('.', 1)[-1]}` "
            f"({i.fact.split('; ', 1)[0]}): {'yes' if i in now['evidenced'] else 'no'} / "
            f"{'yes' if i in now['region'] else 'no'}" for i in new]
    return out


def render(data: dict, d0: str, d1: str, facts: list[Change], kinds: dict[str, int], facts_seconds: float,
           files: int, uses: int, now: dict, then: dict, passes: tuple[int, int, int], with_default: int, impacts: list[Impact],
           earlier: list[Impact], index: tuple[float, float, float], big: tuple[int, int, float, float, float],
           match_all: float, match_week: float, week_impacts: int, load: float,
           more: list[str] | None = None) -> str:
    """The section's body: the figures (the earlier rule → this one, from one run), by category, the PRs."""
    cold, cold_cpu, warm = index
    by_name, passes_now, untyped = passes
    big_files, big_uses, big_cold, big_cpu, big_warm = big
    n = len(now["rows"])
    hits_now, hits_then = sum(r[3] for r in now["rows"]), sum(r[3] for r in then["rows"])
    any_now = sum(r[4] for r in now["rows"])
    before, after = data["upstream_before"], data["upstream_after"]
    versions = sorted({before, after, *(v for p in data.get("more_pairs", [])
                                        for v in (p["upstream_before"], p["upstream_after"]))},
                      key=lambda v: tuple(int(x) for x in re.findall(r"\d+", v)))
    severity = {(i.path, i.line, i.symbol, i.how): i.severity for i in impacts}
    moved = [i for i in then["breaks"] if severity.get((i.path, i.line, i.symbol, i.how)) != "breaks"]
    cats = sorted(set(now["categories"]) | set(then["categories"]))
    out = [
        f"Command: `.venv/bin/python -m benchmarks.downstream_impact --wheels DIR --write` (DIR: `pip download "
        f"--no-deps --only-binary=:all: vllm==V` for V in {', '.join(versions)}; vllm-ascend from the search tool's "
        "fetch)",
        "",
        f"Upstream: vLLM {before} → {after} (the wheels' Python files as two commits): {len(facts)} facts "
        f"({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in {facts_seconds:.1f} s; of the "
        f"{with_default} signature facts that add parameters with a default, {passes_now} say that an upstream call "
        f"site in the changed files passes one ({untyped} of them only through a receiver of unknown type). "
        f"Downstream: vllm-ascend at {d0[:10]} (its main on v{before}), {files} files of vllm_ascend, {uses} uses of "
        f"vllm ({by_name} of them attributes read by name); its main reached v{after} at {d1[:10]}.",
        "",
        "Each figure is given for the earlier match → this one, both in this run on the same facts and index. This "
        "one adds: an `attribute` fact when a class both versions define loses a data attribute (a dataclass or "
        "NamedTuple field, an enum member, a class-level name, a `self.x = …` in its methods; not one it still has "
        "as a method, a property or through a base of the same module), saying when no class of the changed files "
        "keeps a member of that name, or when its `__init__` newly sets one that code in the changed files reads; "
        "a `returns` fact when a method's return annotation names other types (spelling aside: `Optional[X]` is "
        "`X | None`, a `None` added or dropped is no change); a `passes` fact when a call `Class(...)` passes, on "
        "a line the change added, a keyword no call on the lines it removed passed (the class resolved through "
        "the calling module's imports). The index adds the attributes the downstream reads "
        "on objects of unknown type (`forward_context.dp_metadata.x`: `dp_metadata` and `x`; not `self.x`, not on "
        "a name it imports), leaving out every name the downstream itself assigns, defines or `setattr`s, one line "
        "per file and name; and, for an `__init__` override that calls no `….__init__`, the attributes its class "
        "sets. The match: a removed attribute read through the class's name (`RequestStatus.WAITING_FOR_FSM`) "
        "breaks; read by name on an object of unknown type, it breaks only when no class of the changed files "
        "keeps the name; an attribute a base's `__init__` newly sets breaks a subclass whose own `__init__` "
        "neither calls the base's nor sets it; a method that now returns another type breaks an override or a "
        "patch of it, or asks for a check when the new type only widens the old; a keyword upstream now passes to "
        "a constructor breaks a subclass `__init__` that does not take it (nor `**kwargs`).",
        "",
        "| figure | earlier match → this one | target |",
        "| --- | ---: | ---: |",
        f"| recall: named upstream PRs whose fixed files are flagged breaks | {_ratio(hits_then, n)} → "
        f"**{_ratio(hits_now, n)}** | ≥ 0.70 |",
        f"| recall: … flagged breaks or check | {_ratio(sum(r[4] for r in then['rows']), n)} → "
        f"{_ratio(any_now, n)} | |",
        f"| precision, lenient: uses flagged breaks whose function the downstream changed by D1, or whose "
        f"changes by D1 name the symbol or a parameter the fact names | {_pair(now, then, 'evidenced')} | ≥ 0.70 |",
        f"| precision, stricter: … whose function the downstream changed by D1 | {_pair(now, then, 'region')} | |",
        f"| precision, strictest: … whose very line the downstream changed by D1 | {_pair(now, then, 'lines')} | |",
        f"| precision per fact: distinct upstream facts flagged breaks, one of whose uses has evidence (lenient) | "
        f"{_pair(now, then, 'facts_evidenced', 'facts')} | |",
        f"| precision per fact, stricter | {_pair(now, then, 'facts_region', 'facts')} | |",
        f"| precision: files flagged breaks that the downstream touched by D1 | "
        f"{_pair(now, then, 'files_touched', 'files')} | |",
        f"| uses flagged check | {then['checks']} → {now['checks']} | |",
        f"| index, vllm-ascend ({files} files), cold wall (CPU) / warm | {cold:.2f} s ({cold_cpu:.2f} s) / "
        f"{warm:.2f} s | |",
        f"| index, {big_files} files ({big_uses} uses), cold wall (CPU) / warm | {big_cold:.2f} s "
        f"({big_cpu:.2f} s) / {big_warm:.2f} s | ≤ 20 s / ≤ 1 s |",
        f"| match, the release's {len(facts)} facts at once ({len(impacts)} impacts) | {match_all:.2f} s | |",
        f"| match, those facts as a 300-PR week ({week_impacts} impacts) | {match_week:.2f} s | ≤ 2 s |",
        "",
        "Uses flagged breaks by category (fact kind / use): flagged, and of them with evidence lenient / stricter "
        "/ strictest; the earlier match → this one.",
        "",
        "| category | flagged | lenient | stricter | strictest |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for cat in cats:
        a, b = then["categories"].get(cat, [0, 0, 0, 0]), now["categories"].get(cat, [0, 0, 0, 0])
        out.append(f"| {cat} | " + " | ".join(f"{x} → {y}" if x != y else f"{y}" for x, y in zip(a, b)) + " |")
    out += ["", f"Uses the earlier match flagged breaks and this one does not ({len(moved)}; evidence lenient / "
            "stricter):", ""]
    for i in moved:
        out.append(f"- {i.path}:{i.line} {i.how} `{i.symbol.rsplit('.', 2)[-2] if '.' in i.symbol else i.symbol}."
                   f"{i.symbol.rsplit('.', 1)[-1]}` ({i.fact.split(': ', 1)[1].split(PASSES_SAID)[0]})): "
                   f"{'yes' if i in then['evidenced'] else 'no'} / {'yes' if i in then['region'] else 'no'}")
    out += ["", *_new_breaks(now, then, "")]
    out += ["", "Named upstream PRs (adaptation commit → PR: flagged breaks / any, this rule):", ""]
    out += [f"- {c[:10]} → #{pr}: {'yes' if b else 'no'} / {'yes' if a else 'no'} ({', '.join(p[:3])}"
            f"{' …' if len(p) > 3 else ''})" for c, pr, p, b, a in now["rows"]]
    file_deleted = now["categories"].get("file-deleted / overrides", [0, 0, 0, 0])
    default_misses = sum(v[0] - v[2] for k, v in now["categories"].items() if "added default" in k)
    if more:
        out += ["", *more]
    known = {(i.path, i.line, i.symbol, i.how) for i in then["breaks"]}
    new = [i for i in now["breaks"] if (i.path, i.line, i.symbol, i.how) not in known]
    out += ["", f"Load average: {load:.2f} (2 cores, shared).", "", (
        "Read with care. The issue asks for recall and precision per upstream PR, on vLLM's history; that history "
        "(a 1.1 GB snapshot) is over what the search tool's fetch brings, so the upstream side here is two release "
        f"wheels, one fact set for the whole v{before} → v{after} span (≈ 5 weeks of main), and a fact cannot be "
        "told apart by PR: each release pair is one sample (two here, the second below). Recall is therefore \"the "
        "files an adaptation commit fixed for a named upstream PR are flagged\", which credits a PR whose file was "
        "flagged for another change of the span, and for an adaptation commit without a table (eb3548add4, "
        "3636a3dc9e) any flagged file among the files it changed credits every PR it names (counting each "
        f"adaptation commit and its files once, recall is {_ratio(*_commits(then))} → {_ratio(*_commits(now))}). "
        f"On this pair the match now flags {len(new)} more uses breaks, "
        f"{sum(1 for i in new if i in now['evidenced'])} of them with the lenient evidence and "
        f"{sum(1 for i in new if i in now['region'])} with the stricter: the worker's `compile_or_warm_up_model` "
        "override, which returns a float where `WorkerBase`'s now returns `CompilationTimes` (#39240: "
        "\"'float' object has no attribute 'language_model'\"), `DPMetadata.max_tokens_across_dp_cpu` read by name "
        "in `ascend_forward_context.py` and `platform.py` (#39107), `AscendRMSNormGated.__init__`, which does not "
        "take the `activation` that `GatedDeltaNetAttention` now passes to `RMSNormGated(…)` (#40245: upstream's "
        "`RMSNormGated.__init__` already took it in 0.19.1, so no signature fact could say it), and "
        "`FusedMoEMethodBase.apply`, whose return type narrowed to a tensor. `worker/worker.py` is #39240's file in "
        "7fd2cede36's table and one of the files eb3548add4 changed, which credits that commit's three PRs; "
        "#39107's own break is flagged too, #38928's (`Indexer.wk`) is not: the downstream sets a `wk` of its own "
        "(`self.wk = self.indexer.wk`), so the by-name rule leaves the name out rather than guess. Still missed: "
        "#35077, whose `_all_lora_classes` became a tuple (a module-level value no fact describes). "
        "Alone on top of the earlier match (the last table), the attribute rule credits eb3548add4's three PRs "
        "(through `ascend_forward_context.py` and `platform.py`), the return-type rule those and 7fd2cede36's "
        "#39240 (through `worker/worker.py`), the new-keyword rule #40245; on the second pair all of the gain is "
        "the attribute rule's. "
        "Precision has no clean ground truth either: a break the downstream fixed elsewhere (the function a patch "
        "installs, a version guard, the import of a deleted module rather than each method of the class) leaves "
        "the flagged line as it was, hence three figures. A parameter added with a default breaks an override or "
        "a patch only when an upstream call site passes it (a call on a receiver of the method's own class "
        f"hierarchy), as before; of the {len(now['breaks']) - len(now['region'])} uses without the stricter "
        f"evidence, {default_misses} are such parameters (a downstream often absorbs those in a wrapper or behind a "
        "version guard, or never reaches them). The per-fact figures count each upstream fact once (a fact is not "
        "a PR either) and are lower: the facts with evidence are those with many uses (the deleted "
        f"`shared_fused_moe` module: {file_deleted[0]} overrides, {file_deleted[2]} of them with their function "
        "changed; `FusedMoE.__init__`). The index times are wall times on 2 shared cores; their CPU time is what "
        "an idle machine would take; the 3,000-file tree's uses include the attributes read by name. The second "
        "pair (0.18.0 → 0.19.1) is scored the same way on its own facts and index; its adaptation commits are "
        "vllm-ascend's main2main upgrades, whose messages link PRs without a per-PR table, so every PR of a commit "
        "is credited by any flagged file the commit changed (generous to recall), and the later ones tracked "
        "vLLM's main past the v0.19 branch, so some PRs they name are not in the v0.19.1 wheel at all (harsh to "
        "it: 3ada044db0's `override_quantization_method(hf_config)` and 3736ad849c's FusedMoE runner refactor "
        "are 0.20.1's). There the new breaks are `RequestStatus.WAITING_FOR_FSM` (#38048, read through the class "
        "name in two schedulers and a scheduler patch), `ForwardContext.virtual_engine` read by name in three "
        "files, and "
        "`InputBatch.num_prompt_tokens_cpu_tensor` (#37303), which `InputBatch.__init__` now sets and "
        "`NPUInputBatch`'s own `__init__` never does; `npu_input_batch.py` is also one of 3736ad849c's files, so "
        "that flag credits its four PRs as well, though their own fix is not flagged (generous). The 300-PR week "
        "is the span's real facts dealt out to 300 PRs, not a real week's PRs.")]
    return "\n".join(out)


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
            text = path.read_bytes().replace(b"vllm_ascend", name.encode())
            # Each non-empty file distinct, as in a real tree (the index parses a content once per build); empty
            # files (most __init__.py) stay identical across copies, as they are in real trees.
            target.write_bytes(b"# " + name.encode() + b"\n" + text if text.strip() else text)
            count += 1
        packages.append(name)
        copy += 1
    return into, tuple(packages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheels", type=Path, required=True, help="folder with the two vllm wheels")
    parser.add_argument("--ascend", type=Path, default=ASCEND, help="vllm-ascend's git directory")
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    parser.add_argument("--no-big", action="store_true", help="skip the 3,000-file index (a quicker look)")
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

        if args.no_big:
            if args.write:
                raise SystemExit("--write needs the 3,000-file index: run without --no-big")
            big_files, big_uses, big_cold, big_cpu, big_warm = 0, 0, 0.0, 0.0, 0.0
        else:
            big, packages = big_tree(tree, root / "big", 3000)
            big_files, big_uses, big_cold, big_cpu, big_warm = index_speed(big, packages, root / "big.sqlite")

        lines, touched = changed_lines(args.ascend, d0, d1)
        diff = subprocess.run(["git", "--git-dir", str(args.ascend), "diff", "-U0", d0, d1, "--", "vllm_ascend"],
                              check=True, capture_output=True, text=True).stdout
        changed_text = "\n".join(r[1:] for r in diff.splitlines() if r[:1] in "+-" and not r.startswith(("+++", "---")))
        adaptations = [(a["commit"], a["upstream_prs"], set(a.get("paths") or commit_files(args.ascend, a["commit"])))
                       for a in data["adaptations"]]
        table = UseTable.of("ascend", index.uses, ("vllm",))
        then_facts, then_table = earlier(facts, index.uses)
        before = match_changes(then_facts, then_table, ("vllm",))
        now = score(impacts, tree, lines, touched, changed_text, adaptations)
        then = score(before, tree, lines, touched, changed_text, adaptations)
        kinds = defaultdict(int)
        for f in facts:
            kinds[f.kind] += 1
        passes = sum(1 for f in facts if f.kind == "signature" and PASSES_SAID in f.detail)
        by_name = sum(1 for u in index.uses if u.how == NEW_HOW)
        untyped = sum(1 for f in facts if f.kind == "signature" and UNTYPED + ")" in f.detail)
        with_default = sum(1 for f in facts if f.kind == "signature" and added_with_default(f.detail))
        pairs = [(f"{data['upstream_before']} → {data['upstream_after']}", now, then, len(facts))]
        rules = [(pairs[0][0], then, each_rule(facts, index.uses, lambda found: score(
            found, tree, lines, touched, changed_text, adaptations)))]
        for n, pair in enumerate(data.get("more_pairs", [])):
            more_now, more_then, count, more_rules = other_pair(pair, args.wheels, args.ascend, root / f"pair{n}")
            pairs.append((f"{pair['upstream_before']} → {pair['upstream_after']}", more_now, more_then, count))
            rules.append((pairs[-1][0], more_then, more_rules))
        load = os.getloadavg()[0]
        body = render(data, d0, d1, facts, kinds, facts_seconds, files, uses, now, then, (by_name, passes, untyped),
                      with_default,
                      impacts, before, (cold, cold_cpu, warm), (big_files, big_uses, big_cold, big_cpu, big_warm),
                      match_all, match_week, week_impacts, load, [*(render_pairs(pairs) if len(pairs) > 1 else []), "", *render_rules(rules)])
        print(f"## {TITLE}\n\n{body}")
        if args.write:
            write_section(TITLE, body)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
