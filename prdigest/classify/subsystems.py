"""Subsystems: which named areas of a repo a PR touches, from per-repo YAML rules or top-level folders."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, Protocol

from prdigest.classify.pathmatch import PathMatcher
from prdigest.classify.rulesfile import RULES_DIR, Rules, SubsystemRule, load_rules, rules_for_repo
from prdigest.kernel.models import PullRequest
from prdigest.kernel.patterns import Pattern, compile_rule
from prdigest.kernel.prtext.prose import MAX_SCAN, sentences, strip_template
from prdigest.kernel.text import slug
from prdigest.kernel.vocabulary import Vocabulary

# Rules files live in prdigest.classify.rulesfile; their names are re-exported here, where callers import them.
__all__ = ["RULES_DIR", "Classifier", "FolderClassifier", "Rules", "RulesClassifier", "SubsystemRule",
           "classifier_for", "load_rules", "rules_for_repo"]


class Classifier(Protocol):
    """Names the subsystems of a PR, primary first; the same PR always gets the same list."""

    @property
    def known_subsystems(self) -> set[str]:
        """Subsystems a reader may follow; empty when they cannot be known before classifying."""
        ...

    @property
    def vocabulary(self) -> Vocabulary:
        """The repo's names, labels and order, for the drafter, the renderers and readers' validation."""
        ...

    def classify(self, pr: PullRequest) -> list[str]:
        """The PR's subsystems, never empty, most important first."""
        ...


#: Sentences that say how a change was tested or measured name the set-up (tensor parallel, a GPU, a
#: dataset), not the area that changed: the description's evidence is read without them, in any repo.
_TEST_NOTES = re.compile(
    r"\b(test(?:ed|ing)?\s(?:plan|with|on|using|by|against)|validat(?:ed|ion)|benchmark(?:ed|s|ing)?|measured|"
    r"served|reproduc\w+|repro\b|lm[_-]eval|gsm8k|results? (?:on|with)|run (?:on|with)|ran\s)", re.IGNORECASE)


def description(body: str) -> str:
    """The part of a PR description that says what changed: no template, no test or benchmark notes."""
    text = strip_template(body[: MAX_SCAN * 2])[:MAX_SCAN]
    return "\n".join(part for part in sentences(text) if not _TEST_NOTES.search(part))


def _weight(changes: int) -> int:
    # A rename or binary file reports 0 lines but still touched the area.
    return max(changes, 1)


@dataclass(frozen=True)
class _Compiled:
    name: str
    paths: tuple[Pattern, ...]
    exclude_paths: tuple[Pattern, ...]
    titles: tuple[Pattern, ...]
    body: tuple[Pattern, ...]
    labels: frozenset[str]

    def matches_path(self, path: str) -> bool:
        return any(p.search(path) for p in self.paths) and not any(p.search(path) for p in self.exclude_paths)

    def title_position(self, title: str) -> int | None:
        found = [m.start() for p in self.titles if (m := p.search(title))]
        return min(found) if found else None

    def body_hits(self, body: str, limit: int) -> int:
        """Distinct phrases of the description this subsystem's body patterns find, at most ``limit``."""
        seen: set[str] = set()
        for pattern in self.body:
            for match in pattern.finditer(body):
                seen.add(match.group(0).lower())
                if len(seen) >= limit:
                    return limit
        return len(seen)


class RulesClassifier:
    """Classifies PRs with a repo's YAML rules (see :class:`Rules` for how evidence is weighed)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._vocabulary = rules.vocabulary()
        self._incidental = tuple(compile_rule(p) for p in rules.incidental_paths)
        self._subsystems = tuple(
            _Compiled(
                name=name,
                paths=tuple(compile_rule(p) for p in rule.paths),
                exclude_paths=tuple(compile_rule(p) for p in rule.exclude_paths),
                titles=tuple(compile_rule(p, ignore_case=True) for p in rule.titles),
                body=tuple(compile_rule(p, ignore_case=True) for p in rule.body),
                labels=frozenset(rule.labels),
            )
            for name, rule in rules.subsystems.items()
        )
        # every subsystem's path rules over a path at once (the _Compiled ones, one by one, were the PR's cost)
        self._paths = PathMatcher([(rule.paths, rule.exclude_paths) for rule in rules.subsystems.values()])

    @property
    def known_subsystems(self) -> set[str]:
        """Every subsystem the rules can produce, the fallback included."""
        return set(self._vocabulary.known)

    @property
    def vocabulary(self) -> Vocabulary:
        """The vocabulary the rules file declares."""
        return self._vocabulary

    def _is_incidental(self, path: str) -> bool:
        return any(p.search(path) for p in self._incidental)

    def classify(self, pr: PullRequest) -> list[str]:
        """Subsystems by path share, title, labels and description; primary (most changed lines) first."""
        files = [f for f in pr.files if not self._is_incidental(f.path)] or pr.files
        total = sum(_weight(f.changes) for f in files)
        labels = set(pr.labels)
        body = description(pr.body) if pr.body else ""
        rules = self.rules
        found: list[_Evidence] = []
        weights = [0] * len(self._subsystems)
        for f in files:  # one pass over the files: each path against every rule at once
            taken = self._paths.matching(f.path)
            if f.previous_path is not None:
                taken = taken | self._paths.matching(f.previous_path)
            for index in taken:
                weights[index] += _weight(f.changes)
        for order, sub in enumerate(self._subsystems):
            weight = weights[order]
            position = sub.title_position(pr.title)
            declared = position is not None or bool(sub.labels & labels)
            hits = sub.body_hits(body, rules.body_max_hits) if sub.body else 0
            if weight or declared or hits:
                found.append(_Evidence(weight, hits, position, order, declared, sub.name))
        # Paths rank first; ties go to the one the title names first, then the description's, then file order.
        found.sort(key=lambda e: (-e.weight, e.position if e.position is not None else len(pr.title), -e.hits,
                                  e.order))
        keep = [
            e.name for rank, e in enumerate(found)
            # The primary counts even when a PR is spread thin; what the author declared always counts; the
            # description adds a little evidence per distinct phrase, less than a path would.
            if (rank == 0 and e.weight) or e.declared
            or e.weight + rules.body_share * e.hits * max(total, 1) >= rules.min_share * max(total, 1)
        ]
        return keep or [rules.fallback]


class _Evidence(NamedTuple):
    weight: int
    hits: int
    position: int | None
    order: int
    declared: bool
    name: str


class FolderClassifier:
    """The fallback for repos without rules: a PR's subsystems are the top-level folders it changes."""

    fallback = "other"

    @property
    def known_subsystems(self) -> set[str]:
        """Empty: folder names are not known before PRs are seen; readers' names are checked for form only."""
        return set()

    @property
    def vocabulary(self) -> Vocabulary:
        """An open vocabulary: any valid name, shown as it is."""
        return Vocabulary.open(self.fallback)

    @staticmethod
    def folder_of(path: str) -> str:
        """``src/Foo_Bar/x.py`` → ``src``; ``.github/x`` → ``github``; a root file → ``other``."""
        head, sep, _ = path.strip("/").partition("/")
        return (slug(head) if sep else "") or FolderClassifier.fallback

    def classify(self, pr: PullRequest) -> list[str]:
        """Top-level folders by lines changed (most first, then by name)."""
        weights: dict[str, int] = {}
        for f in pr.files:
            folder = self.folder_of(f.path)
            weights[folder] = weights.get(folder, 0) + _weight(f.changes)
        return sorted(weights, key=lambda name: (-weights[name], name)) or [self.fallback]


def classifier_for(repo: str, rules_path: Path | None = None) -> Classifier:
    """The repo's rules classifier (``rules_path``, else the shipped rules), else the folder fallback."""
    path = rules_path or rules_for_repo(repo)
    return RulesClassifier(load_rules(path)) if path is not None else FolderClassifier()
