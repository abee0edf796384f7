"""Vocabulary: a repo's subsystem names, their labels in each language, their order, and drafting hints.

A vocabulary comes from the repo's rules file (:func:`prdigest.classify.rulesfile.load_rules`); a repo without rules
gets an open vocabulary (:meth:`Vocabulary.open`) whose names are top-level folders, unknown in advance.
Generic code (the drafter, the renderers, readers' validation) asks the vocabulary and never names a
repo's subsystems itself.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from prdigest.kernel.i18n import FALLBACK, catalog, languages, messages
from prdigest.kernel.patterns import Pattern, bounded

#: Every subsystem name, in every rules file, readers file and folder fallback.
NAME_PATTERN = r"^[a-z0-9][a-z0-9-]*$"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]*")

#: File kinds the drafter can map onto a repo's subsystems (see :mod:`prdigest.kernel.prtext.files`);
#: ``dependency`` is a build or CI file that pins versions, ``kernel`` a source file of ``kernel_files``.
FileKind = Literal["doc", "ci", "build", "dependency", "bench", "kernel"]
Shows = Literal["labels", "names"]


def is_name(value: str) -> bool:
    """Whether ``value`` is a valid subsystem name (lower-case letters, digits, inner hyphens)."""
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def name_problem(value: object) -> str | None:
    """Why ``value`` is not a subsystem name, or None when it is one."""
    if isinstance(value, str) and is_name(value):
        return None
    return f"'{value}' is not a subsystem name: use lower-case letters, digits and '-' (^[a-z0-9][a-z0-9-]*$)"


@dataclass(frozen=True)
class Subsystem:
    """One subsystem as people see it: its labels and its readers, per language (the rules file's mappings).

    A language the rules file gives no label in shows the English one (else the name); an audience it gives
    none in is the catalog's ``vocabulary.developers`` around the label (``vocabulary.maintainers`` for the
    fallback subsystem).
    """

    name: str
    #: (language, label) pairs as the rules file gives them; kept as a tuple so that the vocabulary stays hashable.
    labels: tuple[tuple[str, str], ...] = ()
    audiences: tuple[tuple[str, str], ...] = ()
    #: The catch-all subsystem: its readers are the code's maintainers.
    fallback: bool = False

    def label(self, language: str) -> str:
        """The label in ``language``, else the English one, else the name."""
        labels = dict(self.labels)
        return labels.get(language) or labels.get(FALLBACK) or self.name

    def audience(self, language: str) -> str:
        """Who reads changes here, in ``language``."""
        given = dict(self.audiences).get(language)
        if given:
            return given
        words = messages(language, "vocabulary")
        return words["maintainers"] if self.fallback else words["developers"].format(label=self.label(language))


def generic(name: str, labels: Mapping[str, str] | None = None, *, fallback: bool = False,
            audiences: Mapping[str, str] | None = None) -> Subsystem:
    """A subsystem with the given labels (language → label; the name when absent) and audiences."""
    return Subsystem(name, tuple((labels or {}).items()), tuple((audiences or {}).items()), fallback)


@dataclass(frozen=True)
class DraftingHints:
    """What the offline drafter may know about a repo beyond its names: all optional, all compiled."""

    #: Subsystems whose changes shape how the product runs: worth more attention.
    core: frozenset[str] = frozenset()
    #: Feature and platform areas: a narrower audience than the core, more than docs or CI.
    features: frozenset[str] = frozenset()
    #: Source files that are kernels (searched, case-sensitive, in the path).
    kernel_files: tuple[Pattern, ...] = ()
    #: File kind → the subsystem a file of that kind points to when the classifier gave none.
    file_kinds: dict[str, str] = field(default_factory=dict)
    #: (subsystem, pattern) found at a boundary in a source or test file's lower-cased path.
    path_areas: tuple[tuple[str, Pattern], ...] = ()
    #: (subsystem, pattern) found at a word start in the title's tags, labels and words.
    word_areas: tuple[tuple[str, Pattern], ...] = ()

    def is_kernel_path(self, path: str) -> bool:
        """Whether ``path`` is kernel code in this repo."""
        return any(p.search(path) for p in self.kernel_files)


def boundary(pattern: str) -> Pattern:
    """``pattern`` anchored at a token start, so "tpu" does not match "output" nor "hip" "ship" (a lookbehind:
    bounded in time, :func:`prdigest.kernel.patterns.bounded`)."""
    return bounded(r"(?<![a-z0-9])(?:" + pattern + ")")


@dataclass(frozen=True)
class Vocabulary:
    """A repo's subsystems: names, labels, order (most specific first), fallback, and drafting hints."""

    subsystems: tuple[Subsystem, ...]
    fallback: Subsystem
    #: Whether emails and Slack show the labels or the bare names next to each entry.
    shows: Shows = "labels"
    #: An open vocabulary (no rules file) accepts any valid name: its names are top-level folders.
    is_open: bool = False
    hints: DraftingHints = field(default_factory=DraftingHints)

    @classmethod
    def open(cls, fallback: str = "other") -> "Vocabulary":
        """The vocabulary of a repo without rules: names are folders, shown as they are."""
        other = {language: str(catalog(language)["vocabulary.other"]) for language in languages()}
        return cls((), generic(fallback, other, fallback=True), shows="names", is_open=True)

    @property
    def names(self) -> tuple[str, ...]:
        """Declared names in order, the fallback included (last unless declared)."""
        declared = tuple(s.name for s in self.subsystems)
        return declared if self.fallback.name in declared else (*declared, self.fallback.name)

    @property
    def known(self) -> frozenset[str]:
        """Names a reader may follow; empty for an open vocabulary (not known before classifying)."""
        return frozenset() if self.is_open else frozenset(self.names)

    def get(self, name: str) -> Subsystem:
        """The subsystem called ``name``; an undeclared (folder) name gets its own name as its labels."""
        if name == self.fallback.name:
            return self.fallback
        return next((s for s in self.subsystems if s.name == name), None) or generic(name)

    def label(self, name: str, language: str) -> str:
        """``name``'s label in ``language``."""
        return self.get(name).label(language)

    def declared(self, names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
        """The declared names among ``names``, once each, in the vocabulary's order (fallback included)."""
        present = set(names)
        return tuple(n for n in self.names if n in present)

    def rank(self, name: str) -> int:
        """Position of ``name`` in the order; undeclared names after every declared one."""
        names = self.names
        return names.index(name) if name in names else len(names)

    def sort_key(self, name: str) -> tuple[int, str]:
        """Where ``name`` goes in a list readers see: by name (like an index) when names are shown, else by order."""
        return (0 if self.shows == "names" else self.rank(name), name)

    def shown(self, names: list[str], language: str) -> list[str]:
        """What readers see for an entry's subsystems: labels or names, as the rules file says."""
        return list(names) if self.shows == "names" else [self.label(n, language) for n in names]
