"""Learning the team's taste: after calibrating on one labelled week, how well do the verdicts agree with that
labeller on the next week, beside the drafter alone?

    .venv/bin/python -m benchmarks.calibration [--ao DIR] [--ascend DIR] [--clone OWNER/NAME=DIR ...]
        [--repos OWNER/NAME ...] [--write]

Weeks are real: each week's squash merges on the first-parent line of a clone (``benchmarks.facts_quality.week_prs``:
title, message, files from git), their code facts from the product's engine reading the same clone, drafted by the
offline drafter (zh-CN, no rules file: subsystems empty), then calibrated by the product's own code
(prdigest/draft/calibration.py: the features, the fit with its cross-validated strength, the verdict applied). Pairs
are consecutive labelled weeks of one repo and one labeller: fit on the first, measure on the second.

Labels: the pytorch/ao weeks of benchmarks/data/facts_week_labels.jsonl (one labeller, blind to the drafter) with
``--ao DIR`` (the search tool's fetch of pytorch/ao), and any file
``benchmarks/data/labels/<slug>-<week>.<labeller>.json`` (``{"labeller", "date", "repo", "week", "labels":
{"<number>": {"verdict", "why", "action"}}}``) with ``--ascend DIR`` for vllm-project/vllm-ascend (history up to
2026-05-31); ``--clone OWNER/NAME=DIR`` reads any other repository's label files against its clone (its surface
empty, as on a first run). ``--repos`` keeps only the named repositories' pairs (and skips the sample week). The
shipped sample week (vllm, 58 PRs, one week) has no next week: its row is the fit's own 5-fold
cross-validated agreement.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.facts_quality import LABELS, week_prs  # noqa: E402
from benchmarks.report import write_section  # noqa: E402
from prdigest.collect.facts.surface import Surface  # noqa: E402
from prdigest.collect.facts.week import week_facts  # noqa: E402
from prdigest.collect.git import open_clone  # noqa: E402
from prdigest.draft.calibration import Calibration, features, fit  # noqa: E402
from prdigest.draft.offline import OfflineDrafter  # noqa: E402
from prdigest.kernel.models import PullRequest, Verdict  # noqa: E402

LABEL_DIR = ROOT / "benchmarks" / "data" / "labels"
SAMPLE = ROOT / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
SURFACES = {
    "pytorch/ao": Surface(packages=("torchao",), config_files=(r"^torchao/quantization/quant_api\.py$",
                                                              r"^torchao/prototype/.+/config\.py$")),
    "vllm-project/vllm-ascend": Surface(packages=("vllm_ascend",)),
}
Drafted = list[tuple[PullRequest, Verdict, Verdict]]  # (PR with facts, drafted verdict, label)


def ao_labels(path: Path = LABELS) -> dict[tuple[str, str, str], dict[int, Verdict]]:
    """(repo, week, labeller) → PR number → verdict, from the facts benchmark's one-labeller file."""
    out: dict[tuple[str, str, str], dict[int, Verdict]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            out[(row["repo"], row["week"], "facts-labeller")][int(row["number"])] = Verdict(row["verdict"])
    return dict(out)


def file_labels(folder: Path = LABEL_DIR) -> dict[tuple[str, str, str], dict[int, Verdict]]:
    """(repo, week, labeller) → PR number → verdict, from every ``<slug>-<week>.<labeller>.json`` in ``folder``; a
    file that is not of that shape stops the benchmark naming it and the field."""
    out: dict[tuple[str, str, str], dict[int, Verdict]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            labels = {int(n): Verdict(v["verdict"]) for n, v in data["labels"].items()}
            out[(str(data["repo"]), str(data["week"]), str(data["labeller"]))] = labels
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}: not a label file ({type(exc).__name__}: {exc}); expected "
                             '{"labeller", "date", "repo", "week", "labels": {"<number>": {"verdict", ...}}}') from None
    return out


def drafted_week(git_dir: Path, repo: str, week: str, labels: dict[int, Verdict]) -> Drafted:
    """The week's labelled PRs with their facts, the offline drafter's verdict and the label."""
    prs, _ = week_prs(git_dir, repo, week)
    with tempfile.TemporaryDirectory() as state:
        facts = week_facts(prs, surface=SURFACES.get(repo, Surface()),
                           clone=open_clone(str(git_dir), state_dir=Path(state)))
    drafter = OfflineDrafter()
    out = []
    for pr in prs:
        if pr.number in labels:
            shown = pr.model_copy(update={"changes": facts.changes.get(pr.number, []),
                                          "facts_source": facts.source.get(pr.number)})
            out.append((shown, drafter.draft(shown, [], "zh-CN").verdict, labels[pr.number]))
    return out


def examples(week: Drafted) -> list[tuple[set[str], Verdict]]:
    return [(features(pr, [], drafted), label) for pr, drafted, label in week]


def agreement(week: Drafted, calibration: Calibration | None) -> float:
    right = 0
    for pr, drafted, label in week:
        verdict = drafted if calibration is None else calibration.verdict(features(pr, [], drafted))
        right += verdict is label
    return right / len(week)


def sample_week() -> tuple[int, float | None, float | None]:
    """The shipped week's 5-fold cross-validated agreement (calibrated, the drafter's own)."""
    from prdigest.classify.subsystems import classifier_for
    from prdigest.collect.facts.patches import patch_facts
    from prdigest.evaluation.gold import load_gold

    gold = load_gold(SAMPLE)
    classifier = classifier_for("vllm-project/vllm")
    drafter = OfflineDrafter(classifier.vocabulary)
    rows = []
    for item in gold.items:
        pr = item.pr.model_copy(update={"changes": patch_facts(item.pr, Surface()), "facts_source": "patches"})
        subsystems = classifier.classify(pr)
        drafted = drafter.draft(pr, subsystems, "zh-CN").verdict
        rows.append((features(pr, subsystems, drafted), item.gold.verdict))
    c = fit(rows, source="sample week")
    return len(rows), c.cv_calibrated, c.cv_drafter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ao", type=Path, default=Path("/work/.mirror/pytorch+ao/repo"))
    parser.add_argument("--ascend", type=Path, default=Path("/work/.mirror/vllm-project+vllm-ascend/repo"))
    parser.add_argument("--clone", action="append", default=[], metavar="OWNER/NAME=DIR",
                        help="another repository's clone, for its label files")
    parser.add_argument("--repos", nargs="+", help="only these repositories' pairs")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    clones = {"pytorch/ao": args.ao, "vllm-project/vllm-ascend": args.ascend}
    for item in args.clone:
        repo, sep, folder = item.partition("=")
        if not sep or not Path(folder).exists():
            raise SystemExit(f"--clone {item!r}: expected OWNER/NAME=DIR with DIR a clone")
        clones[repo] = Path(folder)
    sets = {**(ao_labels() if args.ao.exists() else {}),
            **{k: v for k, v in file_labels().items() if k[0] in clones and clones[k[0]].exists()}}
    if args.repos:
        sets = {k: v for k, v in sets.items() if k[0] in args.repos}
    started = time.perf_counter()
    by_source: dict[tuple[str, str], list[str]] = defaultdict(list)
    for repo, week, labeller in sets:
        by_source[(repo, labeller)].append(week)
    rows, pooled, fit_seconds = [], [], []
    cache: dict[tuple[str, str, str], Drafted] = {}
    for (repo, labeller), weeks in sorted(by_source.items()):
        weeks.sort()
        for week in weeks:
            cache[(repo, week, labeller)] = drafted_week(clones[repo], repo, week, sets[(repo, week, labeller)])
        for first, second in zip(weeks, weeks[1:]):
            train, test = cache[(repo, first, labeller)], cache[(repo, second, labeller)]
            t0 = time.perf_counter()
            c = fit(examples(train), source=f"{repo} {first}")
            fit_seconds.append(time.perf_counter() - t0)
            moved = sum(1 for pr, d, _ in test if c.verdict(features(pr, [], d)) is not d)
            rows.append((repo, labeller, first, second, len(train), len(test), agreement(test, None),
                         agreement(test, c), moved, c.strength))
        if len(weeks) > 2:  # every earlier week pooled, measured on the last: what more labels do
            train = [x for week in weeks[:-1] for x in cache[(repo, week, labeller)]]
            test = cache[(repo, weeks[-1], labeller)]
            c = fit(examples(train), source=f"{repo} {weeks[0]}..{weeks[-2]}")
            moved = sum(1 for pr, d, _ in test if c.verdict(features(pr, [], d)) is not d)
            pooled.append((repo, labeller, f"{weeks[0]}..{weeks[-2]}", weeks[-1], len(train), len(test),
                           agreement(test, None), agreement(test, c), moved, c.strength))
    n, cv_cal, cv_draft = sample_week() if not args.repos else (0, None, None)
    table = ["| repo | labeller | fit on | measured on | labels | PRs | drafter alone | calibrated | verdicts moved |",
             "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for repo, labeller, first, second, n_train, n_test, before, after, moved, _ in rows:
        table.append(f"| {repo} | {labeller} | {first} | {second} | {n_train} | {n_test} | {before:.2f} | "
                     f"**{after:.2f}** | {moved} |")
    for repo, labeller, first, second, n_train, n_test, before, after, moved, _ in pooled:
        table.append(f"| {repo} | {labeller} | {first} (pooled) | {second} | {n_train} | {n_test} | {before:.2f} | "
                     f"**{after:.2f}** | {moved} |")
    pooled_before = sum(r[6] * r[5] for r in rows) / max(1, sum(r[5] for r in rows))
    pooled_after = sum(r[7] * r[5] for r in rows) / max(1, sum(r[5] for r in rows))
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    body = f"""
Command: `.venv/bin/python -m benchmarks.calibration{' --write' if args.write else ''}` (load average {load}; the
clones: the search tool's fetch of pytorch/ao and vllm-project/vllm-ascend, history up to 2026-05-31)

Fit on one labelled week, measured on the labeller's next week (offline drafter with code facts, zh-CN, no rules file):

{chr(10).join(table)}

Over the {len(rows)} next weeks (the one-week rows) ({sum(r[5] for r in rows)} PRs): drafter alone {pooled_before:.2f},
calibrated **{pooled_after:.2f}** (target ≥ 0.72). The shipped sample week ({n} PRs, vllm, one week, so no next
week): 5-fold cross-validated agreement {cv_cal or 0:.2f} calibrated vs {cv_draft or 0:.2f} the drafter's own. Fitting one
week takes {statistics.fmean(fit_seconds) if fit_seconds else 0:.2f} s (pure Python, cross-validation included);
the whole benchmark {time.perf_counter() - started:.0f} s.

The offline drafter's rules were adjusted reading pytorch/ao 2026-W13 and 2026-W14 (the code-facts section
says so), so its own agreement there is partly in-sample; no ao week showed a pattern the drafter misses that the
next week confirms, so the calibration moved nothing there. The target's own case, an editor whose taste
differs from the drafter's, is the held-out vllm-ascend weeks the lead labels (read from the label files above).

A week of about 35 labels puts about ±15 points of margin on an agreement near 0.75, and one week's labels are
few for a model of ~100 features: the regularisation keeps the drafter's verdict unless the week shows a pattern
(the strength chosen by cross-validation on the fitting week). Label files for more weeks
(`benchmarks/data/labels/<slug>-<week>.<labeller>.json`) are read as they are added.
"""
    print(body)
    if args.write:
        write_section("Calibration: the team's taste, learnt from one week", body)


if __name__ == "__main__":
    main()
