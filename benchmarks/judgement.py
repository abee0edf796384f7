"""Judgement: the offline drafts of real weeks beside independent labellers' verdicts and actions.

    .venv/bin/python -m benchmarks.judgement --git DIR --repo OWNER/NAME --weeks 2026-W13 2026-W21 [--write]
    .venv/bin/python -m benchmarks.judgement --source WEEK.jsonl --repo OWNER/NAME --weeks LABEL [--write]

``--git DIR`` is a clone of the repository (the search tool's ``fetch`` puts one under /work/.mirror; nothing of
it is committed): each week's squash merges on the first-parent line are its PRs (benchmarks/facts_quality.py
week_prs, history up to 2026-05-31 only), their facts read from the clone as ``digest run --git`` reads them,
drafted offline in zh-CN with no rules file (subsystems empty, as on a first run of an unseen repo), and each
entry's ``action[]`` made as the draft step makes it. ``--source`` drafts a source JSONL instead (facts from its
patches). Labels are ``benchmarks/data/labels/<owner-name>-<week>.<labeller>.json``::

    {"labeller": str, "date": str, "repo": str, "week": str,
     "labels": {"<number>": {"verdict": "deep-read|skim|skip", "why": str, "action": [str, ...]}}}

Per week and labeller: verdict agreement and Cohen's κ, deep-read precision and recall (against the
labeller), and between labellers their agreement and κ (the ceiling); the Action required entry count and how
many of them the labellers also gave actions; dependency upgrades missed (a labelled action asking for an upgrade
by its meaning, :func:`upgrade_action`, on an entry with no action of ours); zh-CN headlines wholly Chinese; headlines that list or count
changes. ``--write`` writes the section of BENCHMARKS.md with the command and the load average.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402
from benchmarks.shipped import as_shipped  # noqa: E402
from prdigest.collect.facts.surface import Surface  # noqa: E402
from prdigest.collect.facts.week import week_facts  # noqa: E402
from prdigest.collect.git import open_clone  # noqa: E402
from prdigest.collect.sources import read_jsonl  # noqa: E402
from prdigest.draft.language import code_words, mixes_languages  # noqa: E402
from prdigest.draft.offline import OfflineDrafter  # noqa: E402
from prdigest.kernel.actions import actions  # noqa: E402
from prdigest.kernel.models import DraftEntry, PullRequest  # noqa: E402
from prdigest.kernel.prtext.signals import extract  # noqa: E402

LABELS = ROOT / "benchmarks" / "data" / "labels"
VERDICTS = ("deep-read", "skim", "skip")
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: A headline that lists or counts changes instead of saying the point ("等 161 项改动", "and 3 more").
LIST_HEADLINE = re.compile(r"等\s*\d+\s*项|\d+\s*(?:项|处)改动|\band \d+ more\b|\b\d+ changes\b|等多项改动", re.IGNORECASE)
#: A version as labellers write one (``v0.20.1``, ``3.2.0.dev20260105``, ``9.1.0-beta.1``) or a commit (``35141a7e``).
_VERSION = re.compile(r"(?<![\w.])v?\d+\.\d+[\w.+-]*|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,40}\b")
#: A verb of installing, upgrading or moving to a release (or "with vLLM v0.16.0": the release main runs with).
_VERB = re.compile(r"\b(?:upgrad\w*|downgrad\w*|(?:re)?install(?:s|ed|ing)?|bump\w*|pin(?:ned|s)?|move\w*(?: \w+){0,2} to|"
                   r"check\w* out|use|with|build\w* against)\b|升级|安装|回退", re.IGNORECASE)
#: "install clang", "upgrade torch": a named package to install or upgrade, with or without a version; not the
#: condition an action is under ("If you install vllm-ascend via the wheel index, switch --extra-index-url": the
#: action is the index, the install is what the reader already does).
_NAMED_INSTALL = re.compile(r"(?<!\bif you )(?<!\bwhen you )\b(?:(?:re)?install(?:/upgrade)?|upgrade)\s+(?!(?:from|it|them|the|to|with|a|an|and|or|"
                            r"outside|inside|main|that|this)\b)[A-Za-z][\w.+-]*", re.IGNORECASE)


def upgrade_action(text: str) -> bool:
    """Whether a labelled action asks for a dependency upgrade, by its meaning: a verb of installing or moving to
    a release beside a version or a commit ("Upgrade CANN to 8.5.0", "check out vLLM at commit 14acf429"), or a
    named package to install ("install clang"). A word alone is not enough: "your own IRQ/NUMA pinning" asks to
    set a config key, "_cann_ops_custom" names a folder, and "set VLLM_X=0" a setting."""
    return bool(_VERSION.search(text) and _VERB.search(text)) or bool(_NAMED_INSTALL.search(text))


@dataclass
class Drafted:
    """One PR's draft as the run makes it, and its actions."""

    pr: PullRequest
    draft: DraftEntry
    action: list[str]


@dataclass
class WeekResult:
    """One week's drafts and the labels found for it."""

    week: str
    drafts: dict[int, Drafted]
    labels: dict[str, dict[int, dict[str, object]]] = field(default_factory=dict)


def slug(repo: str) -> str:
    return repo.replace("/", "-")


def read_labels(repo: str, week: str, folder: Path = LABELS) -> dict[str, dict[int, dict[str, object]]]:
    """labeller → PR number → its label, from every label file of that repo and week."""
    found: dict[str, dict[int, dict[str, object]]] = {}
    for path in sorted(folder.glob(f"{slug(repo)}-{week}.*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("repo") != repo or data.get("week") != week:
            raise SystemExit(f"{path}: its repo/week ({data.get('repo')}, {data.get('week')}) is not {repo} {week}")
        labels = {}
        for number, label in data["labels"].items():
            if label.get("verdict") not in VERDICTS:
                raise SystemExit(f"{path}: PR {number}: verdict {label.get('verdict')!r} is not one of {VERDICTS}")
            labels[int(number)] = label
        found[str(data.get("labeller") or path.stem.rsplit(".", 1)[-1])] = labels
    return found


def draft_week(prs: list[PullRequest], language: str = "zh-CN") -> dict[int, Drafted]:
    """Each PR drafted offline as the run drafts it (its facts attached), with its ``action[]``."""
    drafter = OfflineDrafter()
    return {pr.number: Drafted(pr, drafter.draft(pr, [], language), actions(pr.changes, language)) for pr in prs}


def shipped(drafts: dict[int, Drafted], repo: str) -> dict[int, Drafted]:
    """The drafts with their verdicts as the connect step leaves them (a PR reverted within the week demoted:
    benchmarks/shipped.py); their actions as the draft step makes them (benchmarks.actions scores those shipped)."""
    verdicts = as_shipped([d.pr for d in drafts.values()], {n: d.draft.verdict for n, d in drafts.items()}, repo)
    return {n: d if verdicts[n] is d.draft.verdict else
            Drafted(d.pr, d.draft.model_copy(update={"verdict": verdicts[n]}), d.action) for n, d in drafts.items()}


def from_git(git_dir: Path, repo: str, week: str) -> dict[int, Drafted]:
    from benchmarks.facts_quality import week_prs

    prs, _ = week_prs(git_dir, repo, week)
    with tempfile.TemporaryDirectory() as state:
        facts = week_facts(prs, surface=Surface(), clone=open_clone(str(git_dir), state_dir=Path(state)))
    return draft_week([pr.model_copy(update={"changes": facts.changes.get(pr.number, [])}) for pr in prs])


def from_source(path: Path) -> dict[int, Drafted]:
    prs = read_jsonl(path)
    facts = week_facts(prs, surface=Surface(), clone=None)
    return draft_week([pr.model_copy(update={"changes": facts.changes.get(pr.number, [])}) for pr in prs])


def kappa(a: list[str], b: list[str]) -> float:
    """Cohen's κ of two raters over the same items (nan when chance agreement is total)."""
    n = len(a)
    if not n:
        return float("nan")
    observed = sum(x == y for x, y in zip(a, b)) / n
    ca, cb = Counter(a), Counter(b)
    chance = sum(ca[v] * cb[v] for v in set(a) | set(b)) / (n * n)
    return float("nan") if chance == 1 else (observed - chance) / (1 - chance)


def chinese(d: Drafted) -> bool:
    """A zh-CN headline wholly Chinese: Chinese characters, no plain English word outside code, not the title."""
    words = code_words([f.path for f in d.pr.files], extract(d.pr, []).identifiers)
    body = d.draft.headline
    return bool(_CJK.search(body)) and not mixes_languages(body, words) and d.pr.title.strip() not in body


def measure(result: WeekResult) -> dict[str, object]:
    """The week's figures (see the module's docstring)."""
    drafts = result.drafts
    out: dict[str, object] = {"entries": len(drafts)}
    marked = [n for n, d in drafts.items() if d.action]
    out["action entries"] = len(marked)
    out["chinese"] = sum(chinese(d) for d in drafts.values()) / (len(drafts) or 1)
    out["list headlines"] = sum(bool(LIST_HEADLINE.search(d.draft.headline)) for d in drafts.values())
    per: dict[str, dict[str, float]] = {}
    for who, labels in result.labels.items():
        common = sorted(n for n in labels if n in drafts)
        ours = [drafts[n].draft.verdict.value for n in common]
        theirs = [str(labels[n]["verdict"]) for n in common]
        deep_ours = {n for n in common if drafts[n].draft.verdict.value == "deep-read"}
        deep_theirs = {n for n in common if labels[n]["verdict"] == "deep-read"}
        asked = {n for n in common if labels[n].get("action")}
        upgrades = {n for n in asked if any(upgrade_action(str(a)) for a in labels[n]["action"])}  # type: ignore[union-attr]
        per[who] = {
            "labelled": len(common),
            "agreement": sum(x == y for x, y in zip(ours, theirs)) / len(common) if common else float("nan"),
            "kappa": kappa(ours, theirs),
            "precision": len(deep_ours & deep_theirs) / len(deep_ours) if deep_ours else float("nan"),
            "recall": len(deep_ours & deep_theirs) / len(deep_theirs) if deep_theirs else float("nan"),
            "actions confirmed": len([n for n in marked if n in asked]),
            "labelled actions": len(asked),
            "upgrades missed": len([n for n in upgrades if not drafts[n].action]),
            "labelled upgrades": len(upgrades),
        }
    out["labellers"] = per
    pairs = {}
    for (a, la), (b, lb) in itertools.combinations(sorted(result.labels.items()), 2):
        common = sorted(set(la) & set(lb))
        va, vb = [str(la[n]["verdict"]) for n in common], [str(lb[n]["verdict"]) for n in common]
        pairs[f"{a} vs {b}"] = {"labelled": len(common), "kappa": kappa(va, vb),
                                "agreement": sum(x == y for x, y in zip(va, vb)) / len(common) if common else float("nan")}
    out["between labellers"] = pairs
    return out


#: What a reader of the section must know about a week of vllm-project/vllm-ascend (the only repository they are
#: about): fitted (read while developing) or held out.
NOTES_REPO = "vllm-project/vllm-ascend"
NOTES = {
    "2026-W11": "fitted: its drafts were read while developing issue 35 (no label file; the figures without "
                "labels are the drafts' own). Before issue 35 (commit 6e6517a, the same drafts and checks): 11 "
                "entries marked breaking (the Action required block then), 82 % wholly Chinese, 38 listing changes",
    "2026-W13": "fitted, as 2026-W11. Before: 8 marked breaking, 85 % wholly Chinese, 54 listing changes "
                "('等 N 项改动')",
    "2026-W21": "fitted, as 2026-W11. Before: 10 marked breaking, 84 % wholly Chinese, 49 listing changes",
    "2026-W14": "FITTING now, no longer held out: measured blind once (agreement 0.68 with each labeller, deep-read "
                "P/R 0/0, 4 Action required entries, 3 of 4 labelled upgrades missed by ben's count), then its "
                "disagreements with both labellers were read to find the rules of issue 35's second round. Its "
                "labellers agree with each other on 0.69 only, and on none of their deep reads",
    "2026-W20": "FITTING now, as 2026-W14. Measured blind once: agreement 0.68 with each labeller, deep-read P/R "
                "0.50 / 0.57-0.67, 3 Action required entries, upgrades missed 1 of 3 (ana) and 2 of 5 (ben)",
    "2026-W07": "FITTING since the third round: measured blind once (agreement 0.78 / 0.76, deep-read P/R 0.60 / 0.50 "
                "and 0.80 / 0.57), then its disagreements were read for issue 35's third and fourth rounds",
    "2026-W19": "FITTING since the third round, as 2026-W07. Measured blind once: agreement 0.58 / 0.60, deep-read "
                "P/R 0.20 / 0.20 and 0.40 / 0.33",
    "2026-W09": "FITTING since the fifth round: measured blind once on the fourth round's code (agreement 0.67 / 0.61, "
                "deep-read P/R 0.33 / 0.25 with each labeller; 0.72 / 0.67 on the code before that round), then its "
                "disagreements were read for issue 35's fifth round",
    "2026-W16": "FITTING since the fifth round, as 2026-W09. Measured blind once on the fourth round's code: agreement "
                "0.66 / 0.66, deep-read P/R 0.22 / 0.50 and 0.33 / 0.60 (0.72 / 0.69 on the code before that round)",
}


def report(results: list[WeekResult], command: str, repo: str = NOTES_REPO) -> str:
    lines = [f"Command: `{command}`", "",
             "| week | labeller | PRs labelled | agreement | κ | deep-read P / R | Action required entries "
             "(labellers also asked) | upgrades missed | zh headlines wholly Chinese | list headlines |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        f = measure(r)
        per = f["labellers"] or {"(no labels)": {}}  # type: ignore[truthy-bool]
        for who, m in per.items():  # type: ignore[union-attr]
            lines.append(
                f"| {r.week} | {who} | {m.get('labelled', 0)} | {m.get('agreement', float('nan')):.2f} | "
                f"{m.get('kappa', float('nan')):.2f} | {m.get('precision', float('nan')):.2f} / "
                f"{m.get('recall', float('nan')):.2f} | {f['action entries']} ({m.get('actions confirmed', 0)} of "
                f"{m.get('labelled actions', 0)} labelled) | {m.get('upgrades missed', 0)} of "
                f"{m.get('labelled upgrades', 0)} | {f['chinese']:.0%} of {f['entries']} | {f['list headlines']} |")
        for pair, m in f["between labellers"].items():  # type: ignore[union-attr]
            lines.append(f"| {r.week} | {pair} (ceiling) | {m['labelled']} | {m['agreement']:.2f} | "
                         f"{m['kappa']:.2f} | | | | | |")
    lines += ["", "Targets: agreement ≥ 0.70 with each labeller, deep-read recall ≥ 0.65 with precision ≥ 0.6, "
              "Action required ≤ 10 entries a week with no upgrade missed, ≥ 85 % of zh-CN headlines wholly "
              "Chinese and none a list of changes.", "",
              *[f"- {r.week}: {NOTES[r.week]}" for r in results if r.week in NOTES and repo == NOTES_REPO], "",
              f"Load average: {os.getloadavg()[0]:.2f} (2 cores, shared)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git", type=Path, help="a clone of the repository (never committed)")
    parser.add_argument("--source", type=Path, help="a source JSONL instead of a clone (one 'week')")
    parser.add_argument("--repo", required=True)
    parser.add_argument("--weeks", nargs="+", required=True)
    parser.add_argument("--labels", type=Path, default=LABELS, help="the folder of label files")
    parser.add_argument("--show", action="store_true", help="print each draft's verdict, headline and actions")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args(argv)
    if bool(args.git) == bool(args.source):
        parser.error("give exactly one of --git and --source")
    results = []
    for week in args.weeks:
        drafts = shipped(from_git(args.git, args.repo, week) if args.git else from_source(args.source), args.repo)
        results.append(WeekResult(week, drafts, read_labels(args.repo, week, args.labels)))
        if args.show:
            for n, d in sorted(drafts.items()):
                print(f"#{n} [{d.draft.verdict.value}] {d.draft.headline}" + "".join(f"\n    ! {a}" for a in d.action))
    shown = " ".join(f"--{k} {v}" for k, v in (("repo", args.repo),) if v)
    command = (f".venv/bin/python -m benchmarks.judgement {'--git DIR' if args.git else '--source FILE'} {shown} "
               f"--weeks {' '.join(args.weeks)}" + (" --write" if args.write else ""))
    text = report(results, command, args.repo)
    print(text)
    if args.write:
        write_section(f"Judgement ({args.repo} {', '.join(args.weeks)})", text)
    return text


if __name__ == "__main__":
    main()
