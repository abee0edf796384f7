"""How a rules file classifies a week (``digest rules check``): PRs per subsystem, the PRs left in the
catch-all, and the largest subsystem's share, so a team can tune a file before its first edition."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from prdigest.classify.rulesfile import Rules
from prdigest.classify.subsystems import RulesClassifier
from prdigest.kernel.models import PullRequest
from prdigest.kernel.patterns import compile_rule

#: What a useful vocabulary looks like on a week (the targets of `digest rules init`).
MAX_LARGEST_SHARE = 0.40
MAX_CATCH_ALL_SHARE = 0.10


@dataclass
class CheckReport:
    """One week classified by one rules file."""

    prs: int
    fallback: str
    #: Subsystem → PRs carrying it (a PR counts once for each of its subsystems), most first.
    per_subsystem: dict[str, int]
    #: Subsystem → PRs for which it is the primary (first) subsystem.
    primary: dict[str, int]
    #: (number, title) of the PRs no rule recognised.
    catch_all: list[tuple[int, str]]
    #: PR number → its subsystems, primary first.
    classified: dict[int, list[str]] = field(default_factory=dict)
    #: Subsystems shown as a folder path that none of their own path patterns covers, one line each.
    misnamed: list[str] = field(default_factory=list)

    @property
    def largest(self) -> tuple[str, float]:
        """The subsystem (not the catch-all) on the most PRs, and its share of the week."""
        counts = [(n, c) for n, c in self.per_subsystem.items() if n != self.fallback]
        if not counts or not self.prs:
            return ("", 0.0)
        name, count = max(counts, key=lambda x: (x[1], x[0]))
        return name, count / self.prs

    @property
    def catch_all_share(self) -> float:
        """The share of the week's PRs in the catch-all."""
        return len(self.catch_all) / self.prs if self.prs else 0.0

    def problems(self) -> list[str]:
        """What falls outside the targets, one line each (empty when the file looks useful)."""
        out = []
        name, share = self.largest
        if share > MAX_LARGEST_SHARE:
            out.append(f"'{name}' holds {share:.0%} of the week's PRs (target ≤ {MAX_LARGEST_SHARE:.0%}): split it "
                       "into narrower subsystems")
        if self.catch_all_share > MAX_CATCH_ALL_SHARE:
            out.append(f"{len(self.catch_all)} PRs ({self.catch_all_share:.0%}) are in the catch-all "
                       f"'{self.fallback}' (target ≤ {MAX_CATCH_ALL_SHARE:.0%}): add paths for what they change")
        return out + self.misnamed

    def as_json(self) -> dict[str, object]:
        """The report as plain data (``--json``)."""
        name, share = self.largest
        return {"prs": self.prs, "per_subsystem": self.per_subsystem, "primary": self.primary,
                "catch_all": [{"number": n, "title": t} for n, t in self.catch_all],
                "catch_all_share": round(self.catch_all_share, 4), "largest": name,
                "largest_share": round(share, 4), "problems": self.problems()}


def check_rules(rules: Rules, prs: list[PullRequest]) -> CheckReport:
    """Classify ``prs`` with ``rules`` and count the outcome."""
    classifier = RulesClassifier(rules)
    per: Counter[str] = Counter()
    primary: Counter[str] = Counter()
    catch_all: list[tuple[int, str]] = []
    classified: dict[int, list[str]] = {}
    for pr in prs:
        names = classifier.classify(pr)
        classified[pr.number] = names
        per.update(set(names))
        primary[names[0]] += 1
        if names == [rules.fallback]:
            catch_all.append((pr.number, pr.title))
    ordered = dict(sorted(per.items(), key=lambda x: (-x[1], x[0])))
    return CheckReport(len(prs), rules.fallback, ordered, dict(primary), catch_all, classified, misnamed(rules))


#: A subsystem shown as a folder path (``/vllm_ascend/eplb``, ``src/pkg/``): one word with a ``/``, no spaces.
_PATH_SHOWN = re.compile(r"^/?[\w.-]+(?:/[\w.-]+)+/?$|^/[\w.-]+/?$")


def misnamed(rules: Rules) -> list[str]:
    """A line per subsystem shown as a folder whose files none of its own path patterns recognise: what a
    commented-out CODEOWNERS rule read as a section title makes (an "eplb" holding lora and kv_offload)."""
    out = []
    for name, rule in rules.subsystems.items():
        shown = rule.display["en"] if rule.display else ""
        if not rule.paths or not _PATH_SHOWN.match(shown):
            continue
        probe = shown.strip("/") + "/__init__.py"
        if not any(compile_rule(p).search(probe) for p in rule.paths):
            out.append(f"'{name}' is shown as the folder {shown} but none of its paths is in that folder: it holds "
                       "another area's files (a commented-out CODEOWNERS rule taken for a section?); rename it or "
                       "move its paths")
    return out


@dataclass(frozen=True)
class LabelAgreement:
    """How often a PR its own labeler gave exactly one label carries the subsystem shown as that label."""

    agreed: int
    single_label: int
    #: (number, label, subsystems) of the PRs that did not.
    missed: list[tuple[int, str, list[str]]]

    @property
    def share(self) -> float:
        """The agreed share (1.0 for a week with no single-label PR)."""
        return self.agreed / self.single_label if self.single_label else 1.0


def label_agreement(rules: Rules, prs: list[PullRequest], classified: dict[int, list[str]]) -> LabelAgreement:
    """Compare ``classified`` with the PRs' own labels, through the subsystems shown as a label."""
    by_label = {rule.display["en"].lower(): name for name, rule in rules.subsystems.items() if rule.display}
    agreed, total, missed = 0, 0, []
    for pr in prs:
        mapped = [by_label[label.lower()] for label in pr.labels if label.lower() in by_label]
        if len(pr.labels) != 1 or not mapped:
            continue
        total += 1
        if mapped[0] in classified.get(pr.number, []):
            agreed += 1
        else:
            missed.append((pr.number, pr.labels[0], classified.get(pr.number, [])))
    return LabelAgreement(agreed, total, missed)
