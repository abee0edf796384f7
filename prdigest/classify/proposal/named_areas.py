"""An area a repository names for itself (a label, a CODEOWNERS section, a folder) and how to recognise it.

Every reader of a repository's own conventions (labeler, mergify, CODEOWNERS, the tree, recent PRs'
labels) yields :class:`Area` objects; :mod:`prdigest.classify.proposal.propose` turns them into subsystems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Origin = Literal["labeler", "mergify", "codeowners", "pr-labels", "tree", "kind"]

_NOT_NAME = re.compile(r"[^a-z0-9]+")


def name_slug(text: str) -> str:
    """A subsystem name from a label: lower case, each run of other characters one ``-`` (``module:ops``
    → ``module-ops``, ``ci/build`` → ``ci-build``); empty when nothing is left."""
    return _NOT_NAME.sub("-", text.lower()).strip("-")[:60].strip("-")


@dataclass
class Area:
    """One named area: as written by the repo, where it came from, and the evidence that recognises it."""

    #: The name as the repository writes it (a label, a section title, a folder path).
    written: str
    origin: Origin
    #: Anchored or searched regexes over changed file paths (``re.search``, like a rules file's ``paths``).
    paths: list[str] = field(default_factory=list)
    exclude_paths: list[str] = field(default_factory=list)
    titles: list[str] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    #: Exact GitHub labels that mean this area.
    labels: list[str] = field(default_factory=list)
    #: What a person should check about this area (approximations, skipped patterns), one line each.
    notes: list[str] = field(default_factory=list)
    #: The patterns as written in the source file, for the comment above the subsystem.
    written_patterns: list[str] = field(default_factory=list)

    def merge(self, other: "Area") -> None:
        """Add ``other``'s evidence (the same label from another rule or file)."""
        for mine, theirs in ((self.paths, other.paths), (self.exclude_paths, other.exclude_paths),
                             (self.titles, other.titles), (self.body, other.body), (self.labels, other.labels),
                             (self.notes, other.notes), (self.written_patterns, other.written_patterns)):
            mine.extend(x for x in theirs if x not in mine)

    @property
    def has_evidence(self) -> bool:
        """Whether a rules file can recognise this area at all."""
        return bool(self.paths or self.titles or self.labels or self.body)


def add_area(areas: dict[str, Area], area: Area) -> None:
    """Add ``area`` to ``areas`` keyed by its written name, case-insensitively (GitHub labels are)."""
    key = area.written.lower()
    if key in areas:
        areas[key].merge(area)
    else:
        areas[key] = area
