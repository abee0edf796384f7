"""Subsystems: which named areas of a repo a PR touches, from per-repo YAML rules or top-level folders."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, NamedTuple, Protocol

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from prdigest.errors import ConfigError, RulesError
from prdigest.models import SUBSYSTEMS, PullRequest
from prdigest.yamlfile import load_yaml_model

RULES_DIR = Path(__file__).parent / "rules"


def _check_regex(pattern: str) -> str:
    # Compiled here so that a typo fails at load time with the rule's location, not mid-run.
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    return pattern


Regex = Annotated[str, Field(min_length=1), AfterValidator(_check_regex)]


class SubsystemRule(BaseModel):
    """How to recognise one subsystem: changed paths, PR title, GitHub labels."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Searched (``re.search``, case-sensitive) in each changed file's path and previous path.
    paths: tuple[Regex, ...] = ()
    #: Files matching one of these never count for this subsystem, even if a ``paths`` pattern matches.
    exclude_paths: tuple[Regex, ...] = ()
    #: Searched in the PR title, case-insensitively.
    titles: tuple[Regex, ...] = ()
    #: Exact GitHub label names.
    labels: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _not_empty(self) -> "SubsystemRule":
        if not (self.paths or self.titles or self.labels):
            raise ValueError("a subsystem needs at least one of paths, titles or labels")
        return self


class Rules(BaseModel):
    """A whole rules file: one rule per subsystem plus how path evidence is weighed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The subsystem of a PR that no rule recognises.
    fallback: str = "other"
    #: A subsystem found only through paths needs this share of the PR's changed lines; the
    #: subsystem with the most lines always counts, and title or label matches always count.
    min_share: float = Field(default=0.15, ge=0.0, le=1.0)
    #: Files that follow the code they exercise (tests, examples): they add subsystems only to a
    #: PR that changes nothing else, so a PR fixing one test is still classified by that test.
    incidental_paths: tuple[Regex, ...] = ()
    subsystems: dict[str, SubsystemRule] = Field(min_length=1)

    @field_validator("fallback")
    @classmethod
    def _known_fallback(cls, value: str) -> str:
        if value not in SUBSYSTEMS:
            raise ValueError(f"unknown subsystem '{value}'; known: {', '.join(SUBSYSTEMS)}")
        return value

    @field_validator("subsystems")
    @classmethod
    def _known_names(cls, value: dict[str, SubsystemRule]) -> dict[str, SubsystemRule]:
        unknown = [name for name in value if name not in SUBSYSTEMS]
        if unknown:
            raise ValueError(f"unknown subsystem(s) {', '.join(unknown)}; known: {', '.join(SUBSYSTEMS)}")
        return value


def _key_problem(path: Path) -> str | None:
    """An unknown or repeated subsystem name in ``path``, as ``file:line: message``.

    Checked on the YAML nodes because YAML silently keeps the last of two equal keys, and so that the
    line is the offending key's own. A file that cannot be read or parsed is left to ``load_yaml_model``.
    """
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(root, yaml.MappingNode):
        return None
    node = next((v for k, v in root.value if getattr(k, "value", None) == "subsystems"), None)
    if not isinstance(node, yaml.MappingNode):
        return None
    seen: set[str] = set()
    for key, _ in node.value:
        where = f"{path}:{key.start_mark.line + 1}"
        if key.value not in SUBSYSTEMS:
            return f"{where}: unknown subsystem '{key.value}' in rules file; known: {', '.join(SUBSYSTEMS)}"
        if key.value in seen:
            return f"{where}: subsystem '{key.value}' appears twice in rules file; merge the two rules"
        seen.add(key.value)
    return None


def load_rules(path: Path) -> Rules:
    """Read and validate a rules file; raise :class:`RulesError` naming the file, line and rule."""
    problem = _key_problem(path)
    if problem:
        raise RulesError(problem)
    try:
        return load_yaml_model(path, Rules, what="rules")
    except ConfigError as exc:
        raise RulesError(str(exc)) from exc


_REPO_PART = re.compile(r"[A-Za-z0-9_.-]+")


def rules_for_repo(repo: str) -> Path | None:
    """The rules file shipped for ``owner/name`` (``rules/owner__name.yaml``, lower case), if any."""
    owner, _, name = repo.strip().partition("/")
    if not (_REPO_PART.fullmatch(owner) and _REPO_PART.fullmatch(name)):
        return None
    # GitHub names are case-insensitive, so shipped files are named in lower case.
    candidate = RULES_DIR / f"{owner}__{name}.yaml".lower()
    return candidate if candidate.is_file() else None


class Classifier(Protocol):
    """Names the subsystems of a PR, primary first; the same PR always gets the same list."""

    @property
    def known_subsystems(self) -> set[str]:
        """Subsystems a reader may follow; empty when they cannot be known before classifying."""
        ...

    def classify(self, pr: PullRequest) -> list[str]:
        """The PR's subsystems, never empty, most important first."""
        ...


def _weight(changes: int) -> int:
    # A rename or binary file reports 0 lines but still touched the area.
    return max(changes, 1)


@dataclass(frozen=True)
class _Compiled:
    name: str
    paths: tuple[re.Pattern[str], ...]
    exclude_paths: tuple[re.Pattern[str], ...]
    titles: tuple[re.Pattern[str], ...]
    labels: frozenset[str]

    def matches_path(self, path: str) -> bool:
        return any(p.search(path) for p in self.paths) and not any(p.search(path) for p in self.exclude_paths)

    def title_position(self, title: str) -> int | None:
        found = [m.start() for p in self.titles if (m := p.search(title))]
        return min(found) if found else None


class RulesClassifier:
    """Classifies PRs with a repo's YAML rules (see :class:`Rules` for how evidence is weighed)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._incidental = tuple(re.compile(p) for p in rules.incidental_paths)
        self._subsystems = tuple(
            _Compiled(
                name=name,
                paths=tuple(re.compile(p) for p in rule.paths),
                exclude_paths=tuple(re.compile(p) for p in rule.exclude_paths),
                titles=tuple(re.compile(p, re.IGNORECASE) for p in rule.titles),
                labels=frozenset(rule.labels),
            )
            for name, rule in rules.subsystems.items()
        )

    @property
    def known_subsystems(self) -> set[str]:
        """Every subsystem the rules can produce, the fallback included."""
        return {s.name for s in self._subsystems} | {self.rules.fallback}

    def _is_incidental(self, path: str) -> bool:
        return any(p.search(path) for p in self._incidental)

    def classify(self, pr: PullRequest) -> list[str]:
        """Subsystems by path share, title and labels; primary (most changed lines) first."""
        files = [f for f in pr.files if not self._is_incidental(f.path)] or pr.files
        total = sum(_weight(f.changes) for f in files)
        labels = set(pr.labels)
        found: list[_Evidence] = []
        for order, sub in enumerate(self._subsystems):
            weight = sum(
                _weight(f.changes) for f in files
                if sub.matches_path(f.path) or (f.previous_path is not None and sub.matches_path(f.previous_path))
            )
            position = sub.title_position(pr.title)
            declared = position is not None or bool(sub.labels & labels)
            if weight or declared:
                found.append(_Evidence(weight, position, order, declared, sub.name))
        # Ties (two subsystems matching the same files) go to the one the title names first, then file order.
        found.sort(key=lambda e: (-e.weight, e.position if e.position is not None else len(pr.title), e.order))
        keep = [
            e.name for rank, e in enumerate(found)
            # The primary counts even when a PR is spread thin; what the author declared always counts.
            if rank == 0 or e.declared or e.weight >= self.rules.min_share * total
        ]
        return keep or [self.rules.fallback]


class _Evidence(NamedTuple):
    weight: int
    position: int | None
    order: int
    declared: bool
    name: str


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


class FolderClassifier:
    """The fallback for repos without rules: a PR's subsystems are the top-level folders it changes."""

    fallback = "other"

    @property
    def known_subsystems(self) -> set[str]:
        """Empty: folder names are not known before PRs are seen, so readers' filters cannot be checked."""
        return set()

    @staticmethod
    def folder_of(path: str) -> str:
        """``src/Foo_Bar/x.py`` → ``src``; ``.github/x`` → ``github``; a root file → ``other``."""
        head, sep, _ = path.strip("/").partition("/")
        slug = _NOT_SLUG.sub("-", head.lower()).strip("-") if sep else ""
        return slug or FolderClassifier.fallback

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
