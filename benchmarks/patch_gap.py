"""Patch facts against full-file facts: for a release pair of vLLM wheels (the upstream repository
benchmarks.impact_downstreams builds: the two releases' Python files as two commits), the facts engine on the whole
files and the facts a run without a clone has (the REST patches, Python hunk headers as GitHub writes them), compared
without any downstream.

Two lists, by fact kind:
- the full-file facts that can break a downstream's use (removed, renamed, moved, a module deleted or renamed, a
  signature whose change a call or an override cannot absorb, a return type, an attribute gone, a keyword newly
  passed to a constructor, a new method that only raises ``NotImplementedError``, a container of another kind, a
  new registry) and what the patches say of the same symbol: a breaking patch fact (the same qualified name, a
  method of any class ``*.f`` of the module, the class or module holding it removed, moved or renamed: what leads
  the matcher to the same uses), only a weaker one (a ``body`` or ``added`` fact: a check at most), or nothing;
- the breaking patch facts with no full-file fact on a symbol they name (likely false: a patch reads a line out of
  its context).

Run: .venv/bin/python -m benchmarks.patch_gap --wheels DIR [--pair 0.19.1 0.20.1 ...] [--examples N]
[--show KIND] (every gap of a kind, not N) [--write] (the section "Patch facts against full-file facts" of
BENCHMARKS.md, with the command and the load average)
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.impact_downstreams import upstream_facts
from benchmarks.report import write_section
from prdigest.collect.facts.patchnewfields import KIND_UNSEEN
from prdigest.collect.facts.pyapi import UNIMPLEMENTED
from prdigest.connect.impact.matchers import WILDCARD, fact_module
from prdigest.kernel.models import Change

TITLE = "Patch facts against full-file facts"
#: The release pairs fitted on (the 0.17.1 wheel and its labels are held out: never read here).
PAIRS = (("0.18.1", "0.19.0"), ("0.19.0", "0.19.1"), ("0.19.1", "0.20.1"))
HELD_OUT = "0.17.1"
FULL, PATCHES = "full files", "patches alone (Python hunk headers)"
#: Kinds whose fact names a whole module (``symbol`` is a path).
_MODULES = frozenset({"file-deleted", "file-renamed"})
#: Patch kinds that make every name under their symbol unreachable (a class removed takes its methods).
_HOLDERS = frozenset({"removed", "moved", "renamed"})


def _signature_kind(detail: str) -> str | None:
    """The breaking part of a signature detail (``+x`` required, ``-x``, ``a→b``, an order or kind), or None
    when a call or an override that worked still binds (a parameter added with a default, a default changed)."""
    if KIND_UNSEEN in detail:
        return None  # a field whose class's kind a patch does not show: the match says check
    # ``self``/``cls`` gained or dropped is a decorator's change (``@staticmethod`` → ``@classmethod``), no caller's
    parts = [p.strip() for p in detail.split(" (upstream passes", 1)[0].split(", ")
             if p.strip() and p.strip()[1:] not in ("self", "cls")]
    for part in parts:
        if part.startswith("+") and "=" not in part and not part.startswith("+*"):
            return "parameter added, required"
        if part.startswith("-") and "→**" not in part:
            return "parameter removed"
        if "→" in part and "=" not in part and ":" not in part and not part.startswith(("+", "-")):
            return "parameter renamed"
        if part == "reordered" or ": position" in part:
            return "parameters reordered"
        if re.match(r"^\w+: .*→(keyword-only|positional-only)$", part):
            return "parameter kind changed"
        if "→required" in part:
            return "default removed"
    if " (upstream passes" in detail:
        return "parameter added, upstream passes it"
    return None


def breaking_kind(fact: Change) -> str | None:
    """What of ``fact`` can break a downstream's use, as a label (its kind, refined by its detail), or None."""
    kind, detail = fact.kind, fact.detail
    if fact.language != "python" and kind not in _MODULES:
        return None
    if kind == "removed":
        if fact.symbol.startswith(WILDCARD + "."):
            return None  # a method whose class is out of sight: the match says check (it may still inherit it)
        return "re-export removed" if detail == "re-export removed" else "removed"
    if kind == "moved":
        return None if detail == "re-exported" else "moved"
    if kind == "renamed":
        return "renamed"
    if kind in _MODULES:
        return ("module deleted" if kind == "file-deleted" else "module renamed") \
            if (fact.before or fact.path).endswith(".py") or fact.path.endswith(".py") else None
    if kind == "signature":
        found = _signature_kind(detail)
        return f"signature: {found}" if found else None
    if kind == "returns":
        return "return type"
    if kind == "attribute":
        return "attribute " + (detail.split()[0] if detail else "changed")
    if kind == "passes":
        return "keyword newly passed"
    if kind == "abstract":
        return UNIMPLEMENTED if UNIMPLEMENTED in detail else "abstract method"
    if kind in ("retyped", "registry"):
        return {"retyped": "container retyped", "registry": "new registry"}[kind]
    return None


def _modules(fact: Change) -> set[str]:
    """The modules a downstream reaches the fact's symbol through (a moved name: its old module too)."""
    out = {m for m in (fact_module(fact.path),) if m}
    if fact.kind == "moved" and fact.before:
        out.add(fact.before)
    return out


def _files(fact: Change) -> set[str]:
    """The modules a module fact names (a renamed file: both)."""
    return {m for p in (fact.path, fact.before, fact.symbol) if p.endswith(".py") for m in [fact_module(p)] if m}


def _names(symbol: str, other: str) -> bool:
    """Whether ``symbol`` (a patch's, possibly ``*.f``) names ``other`` (a full file's qualified name)."""
    if WILDCARD not in symbol:
        return symbol == other
    return re.fullmatch(re.escape(symbol).replace(re.escape(WILDCARD), r"[A-Za-z_][\w.]*"), other) is not None


def _holds(patch: Change, symbol: str) -> bool:
    """Whether a patch fact removing, moving or renaming ``patch.symbol`` takes ``symbol`` with it."""
    return patch.kind in _HOLDERS and symbol.startswith(patch.symbol + ".")


@dataclass
class Gap:
    """One kind's full-file breaking facts, by what the patches say of each."""

    total: int = 0
    breaking: int = 0
    weaker: list[tuple[Change, list[Change]]] = field(default_factory=list)
    missing: list[Change] = field(default_factory=list)


class Facts:
    """One fact set keyed by module, for the lookups of a comparison."""

    def __init__(self, facts: Iterable[Change]) -> None:
        self.by_module: dict[str, list[Change]] = defaultdict(list)
        self.modules: list[Change] = []
        for f in facts:
            if f.kind in _MODULES:
                self.modules.append(f)
            for m in _modules(f):
                self.by_module[m].append(f)

    def about(self, fact: Change) -> list[Change]:
        """The facts of this set on the same symbol as ``fact`` (either side may be a wildcard or hold it)."""
        if fact.kind in _MODULES:
            return [f for f in self.modules if f.kind == fact.kind and _files(f) & _files(fact)]
        # a rename's uses are of the old name (``before``): a patch's removal of it leads the match to them
        symbols = [fact.symbol] + ([fact.before.rpartition(".")[2] if "." not in fact.symbol else fact.before]
                                   if fact.kind == "renamed" and fact.before else [])
        out = [f for m in _modules(fact) for f in self.by_module.get(m, ()) for s in symbols
               if _names(f.symbol, s) or _names(s, f.symbol) or _holds(f, s) or _holds(fact, f.symbol)
               or (f.kind == "renamed" and _names(s, f.before))]
        out += [f for f in self.modules if _modules(fact) & _files(f)]
        return out

    def new_holder(self, fact: Change) -> bool:
        """Whether this set says the class or module holding ``fact``'s symbol is new (no downstream uses it yet)."""
        return any(f.kind == "added" and fact.symbol.startswith(f.symbol + ".")
                   for m in _modules(fact) for f in self.by_module.get(m, ()))


def compare(full: Sequence[Change], patches: Sequence[Change]) -> tuple[dict[str, Gap], dict[str, list[Change]]]:
    """Each breaking kind's full-file facts by the patches' word on them, and the breaking patch facts with no
    full-file fact on their symbol (by kind)."""
    patch_set, full_set = Facts(patches), Facts(full)
    gaps: dict[str, Gap] = defaultdict(Gap)
    for fact in full:
        label = breaking_kind(fact)
        if label is None or not fact.public:
            continue
        gap = gaps[label]
        gap.total += 1
        said = patch_set.about(fact)
        if any(breaking_kind(p) for p in said):
            gap.breaking += 1
        elif said:
            gap.weaker.append((fact, said))
        else:
            gap.missing.append(fact)
    unbacked: dict[str, list[Change]] = defaultdict(list)
    for fact in patches:
        label = breaking_kind(fact)
        if label is not None and fact.public and not full_set.about(fact):
            # a method of a class full files call new: no downstream can use it yet (harmless, said apart)
            unbacked[label + (" (of a new class)" if full_set.new_holder(fact) else "")].append(fact)
    return dict(gaps), dict(unbacked)


def _shown(fact: Change) -> str:
    what = fact.detail or (f"{fact.before} → {fact.after}" if fact.before or fact.after else "")
    return f"`{fact.symbol}` ({fact.path}{f':{fact.line}' if fact.line else ''}){': ' + what[:90] if what else ''}"


def render_pair(pair: tuple[str, str], full: Sequence[Change], patches: Sequence[Change], examples: int,
                show: str | None) -> list[str]:
    """One release pair's tables and examples (markdown)."""
    gaps, unbacked = compare(full, patches)
    out = [f"### vLLM {pair[0]} → {pair[1]}", "",
           f"Facts: full files {len(full)}, patches alone {len(patches)}.", "",
           "| full-file breaking fact | facts | patch breaking fact on the symbol | only a weaker one | none | "
           "recall |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    order = sorted(gaps.items(), key=lambda kv: (-(len(kv[1].weaker) + len(kv[1].missing)), kv[0]))
    totals = Counter[str]()
    for label, gap in order:
        totals.update(total=gap.total, breaking=gap.breaking, weaker=len(gap.weaker), missing=len(gap.missing))
        out.append(f"| {label} | {gap.total} | {gap.breaking} | {len(gap.weaker)} | {len(gap.missing)} | "
                   f"{gap.breaking / gap.total:.2f} |")
    if totals["total"]:
        out.append(f"| **all** | {totals['total']} | {totals['breaking']} | {totals['weaker']} | "
                   f"{totals['missing']} | {totals['breaking'] / totals['total']:.2f} |")
    out += ["", "Examples of the gap (full-file fact; what the patches say of it):", ""]
    for label, gap in order:
        n = None if show == label else examples
        for fact, said in gap.weaker[:n]:
            out.append(f"- {label}, weaker: {_shown(fact)}; patches: "
                       + ", ".join(sorted({f'{p.kind} `{p.symbol}`' for p in said})))
        for fact in gap.missing[:n]:
            out.append(f"- {label}, none: {_shown(fact)}")
    out += ["", "| patch breaking fact with no full-file fact on its symbol (likely false) | facts |",
            "| --- | ---: |"]
    out += [f"| {label} | {len(facts)} |" for label, facts in sorted(unbacked.items(), key=lambda kv: -len(kv[1]))]
    out.append(f"| **all** | {sum(len(v) for v in unbacked.values())} |")
    out += [""] + [f"- {label}: {_shown(f)}" for label, facts in sorted(unbacked.items())
                   for f in facts[:None if show == label else examples]]
    return out + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheels", type=Path, required=True, help="folder with the vLLM release wheels")
    parser.add_argument("--pair", nargs=2, action="append", metavar=("BEFORE", "AFTER"),
                        help="a release pair (repeatable; default: 0.18.1 → 0.19.0, 0.19.0 → 0.19.1, 0.19.1 → 0.20.1)")
    parser.add_argument("--examples", type=int, default=3, help="examples per kind and list (default 3)")
    parser.add_argument("--show", metavar="KIND", help="every example of this kind (a label of the tables)")
    parser.add_argument("--write", action="store_true", help="replace the section of BENCHMARKS.md")
    args = parser.parse_args()
    pairs = [tuple(p) for p in args.pair] if args.pair else list(PAIRS)
    if any(HELD_OUT in p for p in pairs):
        parser.error(f"vLLM {HELD_OUT} is held out: give another release pair")
    load = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="patch-gap-"))
    body: list[str] = []
    try:
        for n, (before, after) in enumerate(pairs):
            sets = upstream_facts(root / f"pair{n}", args.wheels, before, after, python_headers=True)
            section = render_pair((before, after), sets[FULL], sets[PATCHES], args.examples, args.show)
            print("\n".join(section), flush=True)
            body += section
            shutil.rmtree(root / f"pair{n}", ignore_errors=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    head = [f"Command: `.venv/bin/python -m benchmarks.patch_gap {' '.join(sys.argv[1:])}`"
            .replace(str(args.wheels), "DIR") + " (DIR: the vLLM release wheels). "
            f"Load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end (2 cores, shared).", "",
            "No downstream: per release pair, the facts engine on the wheels' whole files (as a `--git` run reads "
            "them) against the facts of the same change's patches alone (what a run without a clone has). A "
            "full-file fact counts as said by the patches when a breaking patch fact names the same symbol (or "
            "`*.f` of its module, or removes, moves or renames what holds it); \"only a weaker one\" is a "
            "`body`/`added`/`bases` fact there (a check at most); \"none\" is nothing. Only public facts.", ""]
    print("\n".join(head))
    if args.write:
        write_section(TITLE, "\n".join(head + body))


if __name__ == "__main__":
    main()
