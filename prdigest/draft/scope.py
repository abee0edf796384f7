"""What a PR's files are for, as the verdict's rules need it: the code a release ships, or the repository's own
tooling, CI and tests; a docs change that adds what users learn, or one that touches up wording, links or a
translation. Read from paths, the title's verb and the line counts (prdigest/draft/verdict.py applies them).
"""

from __future__ import annotations

import re

from prdigest.kernel.prtext.signals import BUILD, CI, DOC, SOURCE, TEST, FileFact, Signals

#: The maintainers' own tooling: hidden top-level folders (``.agents/``, ``.github/``), ``tools/``,
#: ``scripts/``, shell scripts (build and install helpers).
_TOOLING = re.compile(r"^(\.[^/]+|tools?|scripts?)/|\.sh$")
#: Docs for contributors (how the repository builds, tests and is designed, who maintains it, what coding agents
#: are told), not for its users.
_CONTRIBUTOR_DOCS = re.compile(r"(^|/)(developer[_-]?guide|contributing|contribut\w*|design|internals?|dev|community|"
                               r"governance|maintainers?|agents?|claude)(/|\.)", re.IGNORECASE)
#: The docs' own build set-up (Sphinx's ``conf.py``, MkDocs' ``mkdocs.yml``): how pages are built, not what they say.
_DOCS_BUILD = re.compile(r"(^|/)docs?/(?:.*/)?conf\.py$|(^|/)mkdocs\.ya?ml$")
#: A translated copy of the docs: what they say, said again.
_TRANSLATION = re.compile(r"(^|/)locale/|\.po$")
#: A title whose verb only touches up what is there (a fix of a link, a caption, a version string, a format).
_TOUCH_UP = re.compile(r"^\W*(fix|correct|update|polish|refine|format|tidy|clean|adjust|revise|reword)\w*\b"
                       r"|\b(links?|formatting|captions?|wording|typos?)\b", re.IGNORECASE)
#: Lines a touch-up may add beyond what it removes: a word here, a line there.
TOUCH_UP_SLACK = 2
#: Lines of a new docs page that make it a page to read (a guide, a skill for coding agents), not a stub.
NEW_PAGE_LINES = 100


def tooling(path: str) -> bool:
    """Whether ``path`` is the maintainers' own tooling rather than code a release ships (the docs' build set-up
    included)."""
    return bool(_TOOLING.search(path) or _DOCS_BUILD.search(path))


def shipped(s: Signals) -> tuple[FileFact, ...]:
    """The PR's source files a release ships (its tooling, scripts and hidden folders aside)."""
    return tuple(f for f in s.of_kind(SOURCE) if not tooling(f.path))


def user_docs(s: Signals) -> tuple[FileFact, ...]:
    """Docs users read: not contributor docs, translations or the tooling's own notes."""
    return tuple(f for f in s.of_kind(DOC) if not (_CONTRIBUTOR_DOCS.search(f.path) or _TRANSLATION.search(f.path)
                                                   or tooling(f.path)))


def own_work(s: Signals) -> bool:
    """True when everything the PR changes is the repository's own work: tests, CI, build set-up, tooling and
    contributor docs, with no public fact (a pin, a setting, an exported name) a reader would meet."""
    if not s.files or shipped(s) or user_docs(s) or any(c.reach == "public" for c in s.changes):
        return False
    return all(f.kind in (TEST, CI, BUILD, DOC) or tooling(f.path) for f in s.files)


def new_pages(s: Signals) -> tuple[FileFact, ...]:
    """New docs pages of substance, whoever they are for (contributors, coding agents): a reader learns how the
    project works from them, which is worth a skim even when no user reads them."""
    return tuple(f for f in s.of_kind(DOC) if f.is_new and f.additions >= NEW_PAGE_LINES
                 and not _TRANSLATION.search(f.path))


def translation_only(s: Signals) -> bool:
    """True when every changed file is a translation of the docs."""
    return bool(s.files) and all(f.kind == DOC and _TRANSLATION.search(f.path) for f in s.files)


def touch_up(s: Signals) -> bool:
    """A docs-only change whose title says it corrects what is there and whose lines replace rather than add."""
    return s.docs_only and bool(_TOUCH_UP.search(s.core_title)) and s.additions <= s.deletions + TOUCH_UP_SLACK


def docs_and_ci(s: Signals) -> bool:
    """Docs users read, with CI or build configuration beside them (a release note and its release job)."""
    return bool(user_docs(s) or new_pages(s)) and s.only_kinds <= {DOC, CI, BUILD}


def removal_only(s: Signals) -> bool:
    """Shipped code only removed (a workaround or patch no longer needed), nothing public among its facts."""
    added, removed = _lines(shipped(s))
    return (bool(shipped(s)) and added * 20 <= removed and not s.is_bugfix
            and not any(c.reach == "public" for c in s.changes))


def adds_behaviour(s: Signals) -> bool:
    """Shipped code that gains lines (a guard, a case handled, a path taken) and does not say it changes nothing:
    a behaviour a user may notice, however small."""
    added, removed = _lines(shipped(s))
    return added > removed and not s.unchanged_behaviour


def _lines(files: tuple[FileFact, ...]) -> tuple[int, int]:
    return sum(f.additions for f in files), sum(f.deletions for f in files)
