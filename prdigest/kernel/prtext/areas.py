"""Areas: the subsystems a PR's files and title words point to, when the classifier gave none.

What points where is the repo's own knowledge: its rules file's ``drafting`` section and each
subsystem's ``drafter`` hints (see :class:`~prdigest.kernel.vocabulary.DraftingHints`). A repo without them
gets no inferred areas.
"""

from __future__ import annotations

from prdigest.kernel.prtext.files import BUILD, CI, SOURCE, TEST, FileFact
from prdigest.kernel.vocabulary import Vocabulary


def _dependency(path: str) -> bool:
    # Version pins look alike in every Python repo: requirements files, lock files, pyproject.toml.
    return "requirements" in path or path.endswith((".lock", "pyproject.toml"))


def areas_from(files: tuple[FileFact, ...], words: tuple[str, ...], vocabulary: Vocabulary) -> list[str]:
    """Areas the most changed files and the given title words and tags point to, repeats included."""
    hints = vocabulary.hints
    found: list[str] = []
    for fact in files[:50]:  # the most changed files decide; a 3,000-file PR is no slower
        low = fact.path.lower()
        kind = "dependency" if fact.kind in (CI, BUILD) and _dependency(low) else fact.kind
        if kind in hints.file_kinds:
            found.append(hints.file_kinds[kind])
        if fact.is_kernel and "kernel" in hints.file_kinds:
            found.append(hints.file_kinds["kernel"])
        if fact.kind in (SOURCE, TEST):
            found.extend(area for area, pattern in hints.path_areas if pattern.search(low))
    for word in words:
        found.extend(area for area, pattern in hints.word_areas if pattern.search(word))
    return found


def by_priority(areas: list[str], vocabulary: Vocabulary) -> tuple[str, ...]:
    """The declared subsystems among ``areas``, once each, in the vocabulary's order."""
    return vocabulary.declared(areas)
