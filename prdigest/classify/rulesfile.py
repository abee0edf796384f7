"""Rules files: one repo's subsystems in YAML, how to recognise each, and its vocabulary (labels, order).

The schema is :class:`Rules`; :func:`load_rules` reads one with errors naming the file and line, and
:meth:`Rules.vocabulary` turns it into the :class:`~prdigest.kernel.vocabulary.Vocabulary` that the drafter,
the renderers and readers' validation use.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from prdigest.collect.facts.surface import CodeRules
from prdigest.kernel.errors import ConfigError, RulesError
from prdigest.kernel.i18n import FALLBACK
from prdigest.kernel.patterns import check, compile_rule
from prdigest.kernel.vocabulary import (
    DraftingHints,
    FileKind,
    Shows,
    Subsystem,
    Vocabulary,
    boundary,
    generic,
    name_problem,
)
from prdigest.kernel.yamlfile import FAST_LOADER, load_yaml_model

RULES_DIR = Path(__file__).parent / "rules"


def _check_regex(pattern: str) -> str:
    # Compiled here so that a typo or a pattern that could backtrack for minutes fails at load time with the
    # rule's location, not mid-run (prdigest.kernel.patterns).
    return check(pattern)


def _check_hint(pattern: str) -> str:
    # Drafter hints run inside a lookbehind (vocabulary.boundary): always Python's engine, always bounded.
    return check(pattern, always_python=True)


def _check_name(name: str) -> str:
    problem = name_problem(name)
    if problem:
        raise ValueError(problem)
    return name


Regex = Annotated[str, Field(min_length=1), AfterValidator(_check_regex)]
HintRegex = Annotated[str, Field(min_length=1), AfterValidator(_check_hint)]
Name = Annotated[str, AfterValidator(_check_name)]


_LANGUAGE_TAG = re.compile(r"^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$")


def _check_labels(value: dict[str, str]) -> dict[str, str]:
    if FALLBACK not in value:
        raise ValueError("needs an English text (en:), which every language without its own shows")
    for language in value:
        if not _LANGUAGE_TAG.match(language):
            raise ValueError(f"'{language}' is not a language tag (zh-CN, en, fr, pt-BR)")
    return value


#: A text per language, ``{zh-CN: 内核, en: Kernels, fr: Noyaux}``: any language a catalog exists for (or
#: will: a rules file may carry a team's language before its catalog is installed). English is required: a
#: language left out shows it.
Labels = Annotated[dict[str, Annotated[str, Field(min_length=1, max_length=60)]], Field(min_length=1),
                   AfterValidator(_check_labels)]


class DrafterHints(BaseModel):
    """Where the offline drafter finds this subsystem when no rule matched (searched at token starts)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Searched in the lower-cased path of source and test files.
    paths: tuple[HintRegex, ...] = ()
    #: Searched in the title's [tags], labels and lower-cased words.
    words: tuple[HintRegex, ...] = ()


class SubsystemRule(BaseModel):
    """One subsystem: how people call it, and how to recognise it (changed paths, PR title, GitHub labels)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The label readers see, per language (default: the name).
    display: Labels | None = None
    #: Who reads changes here, for the drafter's "for whom" (default: "<label> developers").
    audience: Labels | None = None
    #: Searched (``re.search``, case-sensitive) in each changed file's path and previous path.
    paths: tuple[Regex, ...] = ()
    #: Files matching one of these never count for this subsystem, even if a ``paths`` pattern matches.
    exclude_paths: tuple[Regex, ...] = ()
    #: Searched in the PR title, case-insensitively.
    titles: tuple[Regex, ...] = ()
    #: Searched in the PR description (template comments removed), case-insensitively. Weaker evidence
    #: than a path: each match is worth the rules' ``body_share`` of the PR's changed lines.
    body: tuple[Regex, ...] = ()
    #: Exact GitHub label names.
    labels: tuple[str, ...] = ()
    drafter: DrafterHints = DrafterHints()

    @model_validator(mode="after")
    def _not_empty(self) -> "SubsystemRule":
        if not (self.paths or self.titles or self.labels or self.body):
            raise ValueError("a subsystem needs at least one of paths, titles, body or labels")
        return self


class Drafting(BaseModel):
    """What the generic offline drafter should know about this repo; every field is optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: Subsystems whose changes shape how the product runs (a change there is worth more attention).
    core: tuple[Name, ...] = ()
    #: Feature and platform areas: a narrower audience than the core.
    features: tuple[Name, ...] = ()
    #: Source files that are kernels (searched, case-sensitive, in the path).
    kernel_files: tuple[Regex, ...] = ()
    #: A file kind (doc, ci, build, dependency, bench, kernel) → the subsystem it points to.
    file_kinds: dict[FileKind, Name] = Field(default_factory=dict)


class Rules(BaseModel):
    """A whole rules file: one rule per subsystem, how path evidence is weighed, the vocabulary's order."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The subsystem of a PR that no rule recognises (declared below or not).
    fallback: Name = "other"
    #: A subsystem found only through paths needs this share of the PR's changed lines; the
    #: subsystem with the most lines always counts, and title or label matches always count.
    min_share: float = Field(default=0.15, ge=0.0, le=1.0)
    #: What one match of a subsystem's ``body`` patterns in the description is worth, as a share of the
    #: PR's changed lines; at most ``body_max_hits`` matches count. With the defaults a subsystem the
    #: description names twice counts on its own, and once it counts together with a few changed lines.
    body_share: float = Field(default=0.08, ge=0.0, le=1.0)
    body_max_hits: int = Field(default=3, ge=0, le=20)
    #: Files that follow the code they exercise (tests, examples): they add subsystems only to a
    #: PR that changes nothing else, so a PR fixing one test is still classified by that test.
    incidental_paths: tuple[Regex, ...] = ()
    #: Declared before ``order`` and ``drafting`` so that their validators can check names against it.
    subsystems: dict[Name, SubsystemRule] = Field(min_length=1)
    #: Whether emails and Slack show each entry's subsystem labels or bare names.
    digest_shows: Shows = "labels"
    #: Most specific first (headlines, audiences); every subsystem and the fallback once. Default: as declared.
    order: tuple[Name, ...] = ()
    drafting: Drafting = Drafting()
    #: Where code facts look for the configuration surface and the public API (optional).
    code: CodeRules = CodeRules()

    @property
    def names(self) -> tuple[str, ...]:
        """Declared names in file order, then the fallback if it is not declared."""
        declared = tuple(self.subsystems)
        return declared if self.fallback in declared else (*declared, self.fallback)

    @staticmethod
    def _declared(info: ValidationInfo) -> set[str] | None:
        """The names declared so far, or None when ``subsystems`` itself was invalid (reported already)."""
        if "subsystems" not in info.data:
            return None
        return set(info.data["subsystems"]) | {info.data.get("fallback", "other")}

    @field_validator("order")
    @classmethod
    def _order_lists_every_name(cls, value: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        names = cls._declared(info)
        if value and names is not None and sorted(value) != sorted(names):
            missing, extra = sorted(names - set(value)), sorted(set(value) - names)
            repeated = sorted({n for n in value if value.count(n) > 1})
            raise ValueError(f"order must list every subsystem and the fallback once: missing {missing}, "
                             f"undeclared {extra}, repeated {repeated}")
        return value

    @field_validator("drafting")
    @classmethod
    def _drafting_names_are_declared(cls, value: Drafting, info: ValidationInfo) -> Drafting:
        names = cls._declared(info)
        unknown = sorted({*value.core, *value.features, *value.file_kinds.values()} - (names or set()))
        if names is not None and unknown:
            raise ValueError(f"drafting names undeclared subsystem(s) {', '.join(unknown)}; "
                             f"declared: {', '.join(sorted(names))}")
        return value

    def vocabulary(self) -> Vocabulary:
        """The names, labels, order and drafting hints this file declares."""
        def subsystem(name: str) -> Subsystem:
            rule = self.subsystems.get(name)
            display = rule.display if rule else None
            return generic(name, display, audiences=rule.audience if rule else None, fallback=name == self.fallback)

        ordered = self.order or self.names
        hints = DraftingHints(
            core=frozenset(self.drafting.core), features=frozenset(self.drafting.features),
            kernel_files=tuple(compile_rule(p) for p in self.drafting.kernel_files),
            file_kinds={str(kind): name for kind, name in self.drafting.file_kinds.items()},
            path_areas=tuple((n, boundary(p)) for n, r in self.subsystems.items() for p in r.drafter.paths),
            word_areas=tuple((n, boundary(p)) for n, r in self.subsystems.items() for p in r.drafter.words),
        )
        return Vocabulary(tuple(subsystem(n) for n in ordered if n in self.subsystems or n == self.fallback),
                          subsystem(self.fallback), shows=self.digest_shows, hints=hints)


def _key_problem(path: Path) -> str | None:
    """An invalid or repeated subsystem name in ``path``, as ``file:line: message``.

    Checked on the YAML nodes because YAML silently keeps the last of two equal keys, and so that the
    line is the offending key's own. A file that cannot be read or parsed is left to ``load_yaml_model``.
    """
    try:
        root = yaml.compose(path.read_text(encoding="utf-8"), Loader=FAST_LOADER)
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
        problem = name_problem(key.value)
        if problem:
            return f"{where}: {problem} in rules file"
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
