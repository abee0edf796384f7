"""Action required on labelled weeks: each week's entries with an ``action[]`` beside what the labellers asked.

    .venv/bin/python -m benchmarks.actions --git DIR --repo OWNER/NAME --weeks 2026-W07 2026-W09 [--show]
        [--json OUT] [--before OUT_OF_AN_EARLIER_RUN --before-label TEXT] [--write]

The drafts and actions are made as ``benchmarks.judgement`` makes them (the week's squash merges read from the
clone ``DIR``, offline drafter, zh-CN, no rules file), then a PR reverted within the week and its revert lose
their items as the connect step drops them; the labels are its label files. Per week: the entries of the
Action required block, how many of them at least one labeller also gave an action (and how many both did), the
PRs a labeller gave an action that we give none (per labeller, and PRs both labellers asked for), and the
dependency upgrades among those (a labelled action that asks for one by its meaning: a verb of installing or
moving to a release beside a version or a commit, or a named package to install: ``judgement.upgrade_action``). ``--show`` prints each of our entries with its sentences beside the labellers'
actions, then each miss. ``--json`` keeps the figures; ``--before`` puts an earlier run's figures beside them.
``--write`` writes the section "Action required on the labelled weeks" of BENCHMARKS.md with the command and
the load average; ``--figures`` writes a run's ``--json`` (and the load average it kept) instead of reading the weeks
again, so the notes can be written once its entries were read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.judgement import LABELS, Drafted, from_git, read_labels, upgrade_action  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from prdigest.connect.relations import revert_targets  # noqa: E402
from prdigest.kernel.superseded import kept_actions, superseded  # noqa: E402

TITLE = "Action required on the labelled weeks"
Labels = dict[str, dict[int, dict[str, object]]]
#: One week's figures (see :func:`figures`), as JSON keeps them.
Figures = dict[str, Any]


#: What a reader of the section must know about a repository's weeks (read by hand beside ``--show``).
NOTES = {
    "vllm-project/vllm-ascend": [
        "All fourteen weeks are fitting weeks: their labels were read while writing these rules (issue 35; W04 "
        "and W22 since their held-out measure, seventh round; W02 and W05 since theirs, eighth round; W03 and W18"
        " since theirs, ninth). Before: main at f246b30 measured by this script as it is now (its 'said on a "
        "later PR' is 0: main had no such rule), so the two tables differ only by the product's code (the before "
        "run: 10:13-10:45 UTC, load average 2.95 at its start, 8.0 at its end; the after run: 10:58-11:10 UTC, "
        "3.7 at its start).",
        "Now said as a move, not a removal (configmoves.py): W03 #5533 (eight EPLB keys 'removed' become seven "
        "moved under `eplb_config`, three renamed: `num_iterations_eplb_update` -> "
        "`expert_heat_collection_interval`, `num_wait_worker_iterations` -> `algorithm_execution_interval`, "
        "`init_redundancy_expert` -> `num_redundant_experts`, read off the user docs' table rows; "
        "`eplb_policy_type`, undocumented, off EplbConfig's defaults; `gate_eplb`, which nothing replaced, stays "
        "a removal: both labellers' action, hand-checked right), W04 #5775 (`enable_npugraph_ex` -> "
        "`npugraph_ex_config.enable`: both labellers' action; their 'set enable_static_kernel if you relied on "
        "static kernels' is not said).",
        "Said once, on the later PR (superseded.py, as an upgrade and its revert): W04 #6067 (triton-ascend 3.2.0"
        " in the tutorials, said on #6070 which makes it a requirement the next day: mia asked both), #6069 "
        "(VLLM_TAG v0.14.0 and vllm 0.13.0 dropped, said on #6222's v0.14.1 two days later: both labellers asked "
        "#6069, mia #6222 too), W12 #7502 (vllm 0.17.0 dropped, said on #7523's VLLM_TAG v0.18.0 14 minutes "
        "later: the labellers put it on #7502, not #7523, so W12's 'a labeller asked too' falls from 2 to 1 while"
        " the sentence a reader gets is theirs), W19 #8855 (VLLM_TAG v0.19.1 replaced by commit d886c26d4d, "
        "which #8983 moves to v0.20.1 two days later: 'install VLLM at commit d886c26d4d' was stale at the end of"
        " the week; both labellers asked both PRs, cy noting the move to v0.20.1). Hand-checked: each is what a "
        "reader pulling main at the end of the week does once.",
        "W04 now has 10 entries (12 before): the two it lost are the upgrades said again later that week (above);"
        " the other ten are each a different thing to do (clang, npugraph_ex_config, --profiler-config, xlite, "
        "MLAPO, CANN + triton-ascend, torch/torch-npu, xgrammar, fuse_qknorm_rope, vLLM v0.14.1), nine of them "
        "asked by a labeller.",
        "W18 #8338 (the UCM guide's examples move from UcmNfsStore to PipelineStore with a YAML file): the "
        "deprecation is told only in the PR's description; the page calls PipelineStore 'recommended' and changes"
        " the example's value, and no warning or docs note names UcmNfsStore deprecated. Docs examples moving off"
        " a deprecated value in the fourteen weeks' labels: W05 #6248 (max_tokens), #6385 (task), W12 #7434 "
        "(use_ascend_direct) asked by 0 of 6 labeller judgements, W18 #8338 by 2 of 2: such a rule would give 4 "
        "entries with 1 asked, so none is built. A deprecation the docs or a warning tell with its replacement "
        "(W22 #9557's table) is said already (migrations.py, deprecations.py).",
        "Release notes (a release's notes added to docs/source/user_guide/release_notes.md: W04 #6207, W05 #6225,"
        " W09 #6839, #6859, W14 #7638, W18 #8825, W19 #8879): 5 of 14 labeller judgements asked, both labellers "
        "only on W05 #6225; left unasked, as the labellers mostly do.",
        "Entries no labeller asked for, hand-checked: W04 #6201 (fuse_qknorm_rope, documented in "
        "additional_config.md, now on by default: an action for installs without Triton, though before the PR it "
        "was already forced on wherever Triton imports), W07 #6664 (npugraph_ex on by default, a documented key: "
        "real), W12 #7523 (the Dockerfiles' VLLM_TAG v0.17.0 -> v0.18.0: real, the labellers put it on #7502), "
        "W14 #7870 (numactl now installed by every image: CPU binding's migratepages needs it on bare metal: "
        "real), W20 #9156 (patch added to the openEuler images to fix their build: a build tool for source builds"
        " on openEuler, borderline).",
        "Still missed: the CANN an mrope Triton path needs by its author's word (W03 #5664: no pin moved), a new "
        "required key of kv_transfer_params (W04 #6051: no fact reads request mappings), release notes (W04 "
        "#6207, W05 #6225, W09 #6839, W18 #8825), commit pins moving along the upstream's main (W05 #6169, W14 "
        "#7787, W16 #8172: by design), a contributor's CI registry (W05 #6379), behaviour no code fact shows (W09"
        " #6785, #5632, #6803), gates on a release older than the pin (W09 #6852: the upgrade is said on #6813), "
        "a contributor pre-commit hook (W12 #7446), a dev tool dropped from requirements-dev (W14 #7760), the "
        "docs index (W14 #7895), a submodule moved (W16 #7779), an internal EPLB policy constructor (W16 #8269), "
        "a deprecation told only in a PR's description (W18 #8338), a build script's option value (W20 #9103), a "
        "vendor folder renamed (W20 #8146).",
    ],
}


def asked(labels: Labels) -> dict[int, dict[str, list[str]]]:
    """PR number → labeller → the actions that labeller gave it (only PRs some labeller gave one)."""
    out: dict[int, dict[str, list[str]]] = {}
    for who, by_number in labels.items():
        for number, label in by_number.items():
            given: Any = label.get("action") or []
            items = [str(a) for a in given]
            if items:
                out.setdefault(number, {})[who] = items
    return out


def reverted_within(drafts: dict[int, Drafted], repo: str) -> dict[int, Drafted]:
    """The drafts as the connect step leaves them (prdigest/connect/relations.py demote_reverted): a PR reverted
    within the week, and its revert, ask nothing of a reader pulling main at the end of it."""
    undone: set[int] = set()
    for number, d in drafts.items():
        targets = [n for n in revert_targets(d.pr, repo)[0] if n in drafts]
        if targets:
            undone |= {number, *targets}
    return {n: Drafted(d.pr, d.draft, []) if n in undone else d for n, d in drafts.items()}


def said_later(drafts: dict[int, Drafted], language: str = "zh-CN") -> tuple[dict[int, Drafted], dict[int, list[int]]]:
    """The drafts as the connect step leaves them (prdigest/kernel/superseded.py): an upgrade a later PR of the week
    asks again is said there; and PR number → the later PRs that say it."""
    found = superseded([d.pr for d in drafts.values()])
    out = {n: Drafted(d.pr, d.draft, kept_actions(d.action, d.pr, language, found[n].keys))
           if n in found and d.action else d for n, d in drafts.items()}
    return out, {n: list(s.by) for n, s in found.items() if drafts[n].action and out[n].action != drafts[n].action}


def figures(drafts: dict[int, Drafted], labels: Labels, later: dict[int, list[int]] | None = None) -> Figures:
    """One week's figures: entries, entries confirmed by one / both labellers, misses per labeller and both (a PR
    whose every upgrade a later PR of the week asks again, said there, is counted apart: ``later``)."""
    wanted = asked(labels)
    ours = sorted(n for n, d in drafts.items() if d.action)
    labellers = sorted(labels)
    said = {n: by for n, by in (later or {}).items() if not drafts[n].action and any(b in ours for b in by)}

    def unsaid(n: int) -> bool:
        return n in drafts and not drafts[n].action and n not in said

    missed = {who: sorted(n for n, by in wanted.items() if who in by and unsaid(n)) for who in labellers}
    both = sorted(n for n, by in wanted.items() if len(by) == len(labellers) >= 2 and unsaid(n))
    upgrades = sorted(n for n, by in wanted.items() if unsaid(n)
                      and any(upgrade_action(a) for items in by.values() for a in items))
    return {"entries": ours, "confirmed": [n for n in ours if n in wanted],
            "said later": sorted(n for n in said if n in wanted),
            "confirmed by both": [n for n in ours if len(wanted.get(n, {})) >= 2],
            "missed": missed, "missed by both": both, "upgrades missed": upgrades,
            "labelled": sorted(n for n in wanted if n in drafts)}


def show(week: str, drafts: dict[int, Drafted], labels: Labels, later: dict[int, list[int]] | None = None) -> str:
    """Each entry with an action beside the labellers' actions, then the labellers' actions with none of ours
    (``LATER``: its upgrade is said on a later PR of the week)."""
    wanted = asked(labels)
    later = later or {}
    lines = [f"== {week}"]
    for n in sorted(set(wanted) | {n for n, d in drafts.items() if d.action}):
        if n not in drafts:
            continue
        mark = "ok " if drafts[n].action and n in wanted else "NEW" if drafts[n].action else \
            "LATER" if n in later else "MISS"
        said = f" (said on {_numbers(later[n])})" if n in later else ""
        lines.append(f"{mark} #{n} {drafts[n].pr.title}{said}")
        lines += [f"      ours: {a}" for a in drafts[n].action]
        lines += [f"      {who}: {a}" for who, items in sorted(wanted.get(n, {}).items()) for a in items]
    return "\n".join(lines)


def _row(week: str, f: Figures, labellers: list[str]) -> str:
    missed: dict[str, list[int]] = f["missed"]
    entries: list[int] = f["entries"]
    per = ", ".join(f"{who} {len(missed.get(who, []))}" for who in labellers)
    return (f"| {week} | {len(entries)} | {len(f['confirmed'])} ({len(f['confirmed by both'])}) | "
            f"{len(f['labelled'])} | {len(f.get('said later', []))} | {per} | {len(f['missed by both'])} | "
            f"{len(f['upgrades missed'])} | {_numbers(f['missed by both'])} |")


def _numbers(numbers: list[int]) -> str:
    return " ".join(f"#{n}" for n in numbers) or "-"


def table(results: dict[str, Figures], labellers: dict[str, list[str]]) -> list[str]:
    """The figures of every week as a markdown table, with totals."""
    lines = ["| week | entries | a labeller asked too (both) | PRs labellers asked | said on a later PR | "
             "missed per labeller | missed, both asked | upgrades missed | missed, both asked (PRs) |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |"]
    lines += [_row(week, f, labellers.get(week, [])) for week, f in results.items()]
    total = {k: sum(len(f.get(k, [])) for f in results.values())
             for k in ("entries", "confirmed", "confirmed by both", "labelled", "said later", "missed by both",
                       "upgrades missed")}
    missed = sum(len(v) for f in results.values() for v in f["missed"].values())
    lines.append(f"| all | {total['entries']} | {total['confirmed']} ({total['confirmed by both']}) | "
                 f"{total['labelled']} | {total['said later']} | {missed} in all | {total['missed by both']} | "
                 f"{total['upgrades missed']} | |")
    return lines


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git", type=Path, required=True, help="a clone of the repository (never committed)")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--weeks", nargs="+", required=True)
    parser.add_argument("--labels", type=Path, default=LABELS, help="the folder of label files")
    parser.add_argument("--show", action="store_true", help="print each entry's actions beside the labellers'")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--before", type=Path, help="figures of an earlier run (its --json), shown first")
    parser.add_argument("--before-label", default="before", help="what the earlier run was (a commit)")
    parser.add_argument("--figures", type=Path, help="write the figures of an earlier run (its --json, with its "
                        "load average) instead of reading the weeks again: the notes are written after the run")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    results: dict[str, Figures] = {}
    labellers: dict[str, list[str]] = {}
    load = os.getloadavg()[0]
    if args.figures:
        kept = json.loads(args.figures.read_text(encoding="utf-8"))
        results, labellers, load = kept["weeks"], kept["labellers"], kept.get("load", load)
    for week in [] if args.figures else args.weeks:
        drafts, later = said_later(reverted_within(from_git(args.git, args.repo, week), args.repo))
        labels = read_labels(args.repo, week, args.labels)
        labellers[week] = sorted(labels)
        results[week] = figures(drafts, labels, later)
        if args.show:
            print(show(week, drafts, labels, later), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"labellers": labellers, "weeks": results, "load": os.getloadavg()[0]},
                                        indent=1), encoding="utf-8")
    command = (f".venv/bin/python -m benchmarks.actions --git DIR --repo {args.repo} --weeks {' '.join(args.weeks)}"
               + (" --write" if args.write else ""))
    lines = [f"Command: `{command}` (DIR: a clone of the repository, history up to 2026-05-31)", ""]
    if args.before:
        earlier = json.loads(args.before.read_text(encoding="utf-8"))
        lines += [f"Before ({args.before_label}):", "", *table(earlier["weeks"], earlier["labellers"]), "",
                  "After:", ""]
    lines += [*table(results, labellers), "",
              "entries: PRs of the week whose Action required item we give; a labeller asked too: of those, PRs at "
              "least one labeller (both) also gave an action; said on a later PR: PRs a labeller gave an action whose "
              "upgrade a later PR of the week asks again, said there once (prdigest/kernel/superseded.py), not "
              "counted as missed; missed: PRs a labeller gave an action that we give none; upgrades missed: "
              "those whose labelled action asks for an upgrade by its meaning (a verb of "
              "installing or moving to a release beside a version or a commit, or a package named to install: "
              "judgement.upgrade_action). Targets: at most 10 "
              "entries a week, at least 0.8 of them actions a reader must take, no upgrade missed.", "",
              *(f"- {note}" for note in NOTES.get(args.repo, [])), "",
              f"Load average: {load:.2f} (2 cores, shared)."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(TITLE, text)
    return text


if __name__ == "__main__":
    main()
