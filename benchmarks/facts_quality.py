"""What code facts do to the offline drafts of a real week the drafter was never fitted to.

    .venv/bin/python -m benchmarks.facts_quality --git DIR [--week 2026-W13] [--labels FILE] [--write] [--show N]

``--git DIR`` is a clone of the repository (the search tool's ``fetch`` puts one under /work/.mirror; nothing of
it is committed). The week's commits on the default branch's first-parent line are the week's merged PRs
(squash merges: title = subject, body = the rest of the message, files and line counts from git, the PR number
from the subject's ``(#N)``); their facts come from the product's engine (prdigest/collect/facts/) reading the
same clone. Every figure is measured twice, on the same PRs, with the facts and without them (the drafter as it
was before them), in zh-CN:

- **pure template**: an entry whose headline, rationale and focus name no code identifier taken from the PR's
  code facts or its diff beyond what the title already names. An identifier is a name with an underscore, a
  dot, a digit or an inner capital, or a backticked name; the facts' identifiers are their symbols (and dotted
  parts), old and new names; the diff's are the identifiers on its added and removed lines. File paths and
  folders do not count: the template's size clause cites one for every entry ("集中在 `torchao/dtypes`").
  Target: at most 30 %.
- **zh-CN headlines in Chinese**: after the subsystem prefix the headline holds Chinese and no plain English
  word (prdigest/draft/language.py) and is not the title kept whole. **Mixing**: Chinese and a plain English
  word at once (target 0). Target: at least 60 % in Chinese.
- **mixing in the rest of the entry**: the zh-CN rationale and focus sentences that mix Chinese with a plain
  English word (the same check; reported, no target of its own).
- **verdict agreement** with labels written blind to the drafter (benchmarks/data/facts_week_labels.jsonl:
  committed before any draft of that week was made). Target: at least 0.70.

No rules file is used (the repo has none): subsystems are empty and the vocabulary open, as for a first run on
an unseen repo.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.report import write_section  # noqa: E402
from prdigest.collect.facts.surface import Surface  # noqa: E402
from prdigest.collect.facts.week import week_facts  # noqa: E402
from prdigest.collect.git import open_clone  # noqa: E402
from prdigest.draft.language import code_words, mixes_languages, statement  # noqa: E402
from prdigest.draft.offline import OfflineDrafter  # noqa: E402
from prdigest.kernel.links import pr_link  # noqa: E402
from prdigest.kernel.models import Change, DraftEntry, FileChange, PullRequest, Verdict  # noqa: E402
from prdigest.kernel.prtext.signals import extract  # noqa: E402
from prdigest.kernel.text import CODE_SPAN  # noqa: E402

LABELS = ROOT / "benchmarks" / "data" / "facts_week_labels.jsonl"
_NUMBER = re.compile(r"\(#(\d+)\)\s*$")
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")
_IDENT = re.compile(r"_|\.|\d|[a-z][A-Z]")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def git(git_dir: Path, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, check=True,
                          text=True, errors="replace").stdout


def week_bounds(week: str) -> tuple[datetime, datetime]:
    year, number = week.split("-W")
    monday = date.fromisocalendar(int(year), int(number), 1)
    since = datetime(monday.year, monday.month, monday.day, tzinfo=timezone.utc)
    sunday = date.fromisocalendar(int(year), int(number), 7)
    return since, datetime(sunday.year, sunday.month, sunday.day, 23, 59, 59, tzinfo=timezone.utc)


def week_prs(git_dir: Path, repo: str, week: str) -> tuple[list[PullRequest], dict[int, str]]:
    """The week's squash merges on the first-parent line as PR records, and each PR's diff text."""
    since, until = week_bounds(week)
    if until.date() >= date(2026, 6, 1):
        raise SystemExit(f"{week}: measure on history up to 2026-05-31")
    # A day either side: the week is the ISO week of each commit's date in its own time zone (as git shows it).
    log = git(git_dir, "log", "--first-parent", f"--since={(since - timedelta(days=1)).isoformat()}",
              f"--until={(until + timedelta(days=1)).isoformat()}",
              "--format=%H%x00%an%x00%cI%x00%B%x1e", "HEAD")
    prs, diffs = [], {}
    for record in filter(str.strip, log.split("\x1e")):
        sha, author, when, message = record.strip("\n").split("\x00", 3)
        subject, _, body = message.partition("\n")
        found = _NUMBER.search(subject)
        year, number_of_week, _ = datetime.fromisoformat(when).isocalendar()
        if not found or f"{year}-W{number_of_week:02d}" != week:
            continue
        number = int(found.group(1))
        numstat = git(git_dir, "show", "--numstat", "--format=", "-M", sha)
        # ``A\tpath``, ``R100\told\tnew``: the status letter of the path the commit leaves (the last field).
        statuses = {line.split("\t")[-1]: line.split("\t")[0] for line in
                    git(git_dir, "show", "--name-status", "--format=", "-M", sha).splitlines() if "\t" in line}
        files = []
        for line in numstat.splitlines():
            parts = line.split("\t")
            if len(parts) != 3:
                continue
            added, deleted, path = parts
            if " => " in path:  # a rename: {a => b}/c or a => b
                path = re.sub(r"\{[^{}]* => ([^{}]*)\}", r"\1", path).replace("//", "/")
                path = path.split(" => ")[-1]
            status = statuses.get(path, "M")[:1]
            files.append(FileChange(path=path, additions=int(added) if added.isdigit() else 0,
                                    deletions=int(deleted) if deleted.isdigit() else 0,
                                    status={"A": "added", "D": "removed", "R": "renamed"}.get(status, "modified")))
        prs.append(PullRequest(
            number=number, url=pr_link(repo, number), title=subject.strip(), body=body.strip(),
            author=author, merged_at=datetime.fromisoformat(when), files=files,
            additions=sum(f.additions for f in files), deletions=sum(f.deletions for f in files), merge_commit=sha))
        diffs[number] = git(git_dir, "show", "--format=", "--unified=0", sha)[:400_000]
    return prs, diffs


_DIFF_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$", re.M)


def with_patches(pr: PullRequest, git_dir: Path, budget: int = 16_000) -> PullRequest:
    """``pr`` with the hunks the GitHub source would give: the most changed files' patches within ``budget``."""
    text = git(git_dir, "show", "--format=", "-M", pr.merge_commit or "HEAD")
    starts = list(_DIFF_FILE.finditer(text))
    patches = {}
    for i, m in enumerate(starts):
        chunk = text[m.start(): starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        at = chunk.find("\n@@")
        patches[m.group(2)] = chunk[at + 1:] if at >= 0 else ""
    left, kept = budget, set()
    for f in sorted(pr.files, key=lambda f: -(f.additions + f.deletions)):
        size = len(patches.get(f.path, ""))
        if 0 < size <= left:
            kept.add(f.path)
            left -= size
    return pr.model_copy(update={"files": [f.model_copy(update={"patch": patches[f.path] if f.path in kept else None})
                                           for f in pr.files]})


def identifiers(text: str) -> set[str]:
    """Identifier-like names in ``text`` (and every backticked name), with their dotted parts."""
    found = {m.group(1).strip() for m in CODE_SPAN.finditer(text) if "/" not in m.group(1)}
    found |= {t for t in _TOKEN.findall(text) if _IDENT.search(t) and len(t) >= 4 and "/" not in t}
    return found | {part for name in found for part in name.split(".") if len(part) >= 4}


def code_tokens(changes: list[Change], diff: str) -> set[str]:
    """The identifiers of the PR's code: its facts' names and those on the diff's changed lines."""
    names: set[str] = set()
    for c in changes:
        for value in (c.symbol, c.before, c.after):
            if value and "/" not in value and " " not in value.strip():
                names.add(value)
                names.update(p for p in value.split(".") if len(p) >= 4)
    changed = "\n".join(line[1:] for line in diff.splitlines()
                        if line[:1] in "+-" and not line.startswith(("+++", "---")))
    return names | {t for t in _TOKEN.findall(changed) if _IDENT.search(t) and len(t) >= 4}


def pure_template(draft: DraftEntry, pr: PullRequest, changes: list[Change], diff: str) -> bool:
    said = identifiers("\n".join([draft.headline, draft.rationale, *draft.focus]))
    beyond_title = code_tokens(changes, diff) - identifiers(pr.title) - {p for f in pr.files for p in f.path.split("/")}
    return not (said & beyond_title)


def zh_kind(head: str, pr: PullRequest, drafter: OfflineDrafter) -> str:
    """"chinese", "mixed" or "title" (kept whole, or English) for a zh-CN headline."""
    s = extract(pr, [], drafter.vocabulary)
    said = statement(head, ["变更"])
    if mixes_languages(said, code_words([f.path for f in pr.files], s.identifiers)):
        return "mixed"
    unquoted = CODE_SPAN.sub(" ", said)
    if _CJK.search(unquoted) and not (s.core_title and s.core_title[:20] in said):
        return "chinese"
    return "title"


def measure(prs: list[PullRequest], facts: dict[int, list[Change]], diffs: dict[int, str],
            labels: dict[int, Verdict], with_facts: bool, patched: dict[int, PullRequest] | None = None,
            ) -> tuple[dict[str, float], list[str]]:
    drafter = OfflineDrafter()
    counts: Counter[str] = Counter()
    agree = labelled = 0
    confusion: Counter[tuple[str, str]] = Counter()
    examples = []
    for pr in prs:
        changes = facts.get(pr.number, []) if with_facts else []
        shown = (patched or {}).get(pr.number, pr).model_copy(update={"changes": changes})
        zh = drafter.draft(shown, [], "zh-CN")
        counts["entries"] += 1
        template = pure_template(zh, pr, facts.get(pr.number, []), diffs.get(pr.number, ""))
        counts["pure template"] += template
        counts[zh_kind(zh.headline, shown, drafter)] += 1
        words = code_words([f.path for f in pr.files], extract(shown, [], drafter.vocabulary).identifiers)
        for sentence in (zh.rationale, *zh.focus):
            counts["sentences"] += 1
            counts["mixed sentences"] += mixes_languages(sentence, words)
        if pr.number in labels:
            labelled += 1
            agree += zh.verdict is labels[pr.number]
            confusion[(labels[pr.number].value, zh.verdict.value)] += 1
        mark = f"{' T' if template else ''}{' !' if pr.number in labels and zh.verdict is not labels[pr.number] else ''}"
        examples.append(f"#{pr.number} [{zh.verdict.value}]{mark} {zh.headline} ({len(changes)} facts)")
    n = counts["entries"] or 1
    figures = {"entries": counts["entries"], "pure": counts["pure template"] / n,
               "chinese": counts["chinese"] / n, "mixed": counts["mixed"], "title": counts["title"],
               "agreement": agree / labelled if labelled else float("nan"), "labelled": labelled,
               "sentences": counts["sentences"], "mixed sentences": counts["mixed sentences"]}
    figures.update({f"{gold}->{got}": k for (gold, got), k in confusion.items()})
    return figures, examples


SESSION_5 = ("Then (issue 27, session 5) the facts gained tests changed in place, bodies of C++/CUDA and private "
             "Python functions, CI jobs and triggers and CMake variables; the offline rationale and focus name the "
             "facts (those the title does not name first); the verdict weighs an API fact that only adds at 0.25, "
             "no longer counts a parameter given a default as breaking, and caps at skim a diff under 40 lines that "
             "breaks nothing and touches no kernel. Those changes were developed reading the drafts of 2026-W13 "
             "and 2026-W14, so both weeks are fitted now; 2026-W15 and 2026-W12 were labelled blind before any of "
             "them (one commit, alone) and are the held-out weeks.")
NOTES = {
    "2026-W13": "2026-W13 was the first week measured, and is fitted: after measuring it the headline's choice of "
                "fact changed (the one the title names, source before tests, one that fits) and the config files "
                "above were declared (the drafts showed #4174's new config field missing; without them: pure "
                "template 34 %, Chinese 71 %, agreement 0.87). The fact weights of prdigest/draft/verdict.py were "
                "written before drafting it and not changed after. " + SESSION_5,
    "2026-W14": "2026-W14 was the held-out week of the first measurement, labelled after every choice above was "
                "made, measured once: pure template 54 % (49 % with patches), Chinese 63 %, agreement 0.77 with "
                "facts (0.80 without): #4188 and #4208 went to deep-read (labels: skim), small changes whose one "
                "API fact outweighed their size; #4224 goes to skim: it does rename a parameter of the public "
                "`gptq_quantize` (the fact is right; the label, written from the title, took it for a variable). "
                "Corrected after that measurement: the mixing check excused \"to\" before a version, so #4202's "
                "\"从 0.17.0 to 0.18.0 升级 version\" counted as Chinese (66 % then; now the title is kept whole). "
                + SESSION_5 + " The figures above are therefore in-sample.",
    "2026-W15": "2026-W15 is held out: labelled blind from title, message and file list (in their own commit, "
                "'verdict labels for pytorch/ao 2026-W15 … and 2026-W12', before "
                "any draft or facts of the week and before any change of session 5), measured once after every "
                "change above. It is a thin week (18 squash merges): an agreement near 0.8 has about ±18 points "
                "of margin, so 2026-W12 (19) was labelled and measured the same way beside it. " + SESSION_5,
    "2026-W12": "2026-W12 is held out, labelled with 2026-W15 (same commit, blind, before any change of "
                "session 5) and measured once after every change above. " + SESSION_5,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--git", required=True, type=Path, help="a clone of the repository (never committed)")
    parser.add_argument("--repo", default="pytorch/ao")
    parser.add_argument("--week", default="2026-W13")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--package", default="torchao", help="the import package whose public names are API")
    parser.add_argument("--config-files", nargs="*", default=[r"^torchao/quantization/quant_api\.py$",
                                                               r"^torchao/prototype/.+/config\.py$"],
                        help="where the repo's config dataclasses live, as its rules file's code: section would say")
    parser.add_argument("--show", type=int, default=0, help="print the drafted headlines")
    parser.add_argument("--patches", action="store_true",
                        help="also measure with the hunks the GitHub source gives (16,000 characters, most changed first)")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    prs, diffs = week_prs(args.git, args.repo, args.week)
    labels = {}
    for line in args.labels.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row["repo"] == args.repo and row["week"] == args.week:
                labels[int(row["number"])] = Verdict(row["verdict"])
    with tempfile.TemporaryDirectory() as state:
        clone = open_clone(str(args.git), state_dir=Path(state))
        started = time.perf_counter()
        week = week_facts(prs, surface=Surface(packages=(args.package,), config_files=tuple(args.config_files)), clone=clone)
        seconds = time.perf_counter() - started
    sources = Counter(week.source.values())
    n_facts = sum(len(v) for v in week.changes.values())
    breaking = sum(1 for v in week.changes.values() if any(c.breaks for c in v))
    rows = []
    for name, flag in (("without facts (before)", False), ("with facts", True)):
        figures, examples = measure(prs, week.changes, diffs, labels, flag)
        rows.append((name, figures, examples))
    if args.patches:
        patched = {pr.number: with_patches(pr, args.git) for pr in prs}
        for name, flag in (("without facts, with patches", False), ("with facts and patches", True)):
            figures, examples = measure(prs, week.changes, diffs, labels, flag, patched)
            rows.append((name, figures, examples))
    lines = [
        f"Command: `.venv/bin/python -m benchmarks.facts_quality --git DIR --repo {args.repo} --week {args.week}"
        + (" --patches" if args.patches else "") + (" --write`" if args.write else "`") + f" (DIR: the search tool's fetch of {args.repo})", "",
        f"Week {args.week} of {args.repo}: {len(prs)} squash merges on the first-parent line; {len(labels)} labelled "
        f"blind ({args.labels.relative_to(ROOT) if args.labels.is_relative_to(ROOT) else args.labels}, committed "
        "before the first draft of that week). "
        f"Facts: {n_facts} for {sum(1 for v in week.changes.values() if v)} PRs ({dict(sources)}), {breaking} PRs "
        f"breaking, computed in {seconds:.1f} s (code surface: package `{args.package}`, config files "
        f"{', '.join(f'`{c}`' for c in args.config_files) or 'none'}).", "",
        "| drafts (offline, zh-CN) | entries | pure template | zh headlines in Chinese | mixing | title kept "
        "whole | verdict agreement |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, f, _ in rows:
        lines.append(f"| {name} | {f['entries']} | {f['pure']:.0%} | {f['chinese']:.0%} | {f['mixed']} | "
                     f"{f['title']} | {f['agreement']:.2f} ({f['labelled']}) |")
    lines += ["", "Targets: pure template ≤ 30 %, Chinese ≥ 60 % with 0 mixing, agreement ≥ 0.70.", ""]
    for name, f, _ in rows:
        lines.append(f"- zh-CN rationale and focus sentences mixing Chinese with a plain English word, {name}: "
                     f"{f['mixed sentences']} of {f['sentences']}")
    for name, f, _ in rows:
        cells = ", ".join(f"{k} {v}" for k, v in sorted(f.items()) if "->" in k and k.split("->")[0] != k.split("->")[1])
        lines.append(f"- disagreements {name}: {cells or 'none'}")
    lines += ["", "Rows: the PR records as the brief builds them (title, message, files from git, no hunks), then "
              "with the hunks the GitHub source would add (its 16,000-character budget, most changed files first). "
              "One labeller, from title, message and file list, before any draft of the week existed. Weeks of "
              "about 35 PRs put about ±13 points of margin on an agreement near 0.8. The issue asked for a vLLM "
              "week: its snapshot (1.1 GB) is over what the search tool's fetch brings, so the weeks are pytorch/ao's "
              "(Python API, Triton and CUDA). Entries left pure template are mostly PRs with no fact (docs, "
              "READMEs, version files, repository files such as CODEOWNERS, shell scripts) and PRs whose facts "
              "only restate the title.", "", NOTES.get(args.week, "")]
    lines.append(f"\nLoad average: {os.getloadavg()[0]:.2f} (2 cores, shared).")
    text = "\n".join(lines)
    print(text)
    if args.show:
        for name, _, examples in rows:
            print(f"\n{name} (T: pure template, !: verdict differs from the label):")
            print("\n".join(examples[: args.show]))
    if args.write:
        write_section(f"Code facts in the drafts ({args.repo} {args.week}, labelled blind)", text)


if __name__ == "__main__":
    main()
