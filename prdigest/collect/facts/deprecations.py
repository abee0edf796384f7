"""Deprecations a PR announces: a line it adds to shipped Python code (a warning's message or a comment) that
says a name is deprecated, with the release that removes it when the line says one and what to use instead.

``# DEPRECATED: VLLM_ASCEND_X will be removed in v0.21.0. Use --additional-config '{"x": true}' instead.``
gives a ``deprecated`` fact of ``VLLM_ASCEND_X`` (``after`` ``v0.21.0``, ``detail`` the replacement). Only the
lines the PR adds count: a deprecation already announced is old news.
"""

from __future__ import annotations

import re
from collections import Counter

from prdigest.kernel.models import Change

_DEPRECATED = re.compile(r"deprecat", re.IGNORECASE)
#: What is deprecated: an environment variable, a code span or a quoted name, an option.
_SUBJECT = re.compile(r"`([A-Za-z_][\w.\-]*)`|[\"']([A-Za-z_][\w.]*)[\"']|(--[a-z][\w-]+)"
                      r"|\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")
_REMOVAL = re.compile(r"\b(?:be\s+)?(?:removed|dropped|deleted)\s+(?:in|from|by|after|with)\s+(?:the\s+|an?\s+)?"
                      r"(?:(?:vllm|release|version)[-\s]*(?:ascend\s*)?)?(v?\d+\.\d+(?:\.\d+)?(?:rc\d+)?)",
                      re.IGNORECASE)
#: The replacement is bounded (it is cut at 120 characters anyway): ``(.+?)`` tried from every "use" of a
#: 1 MB line is quadratic.
_INSTEAD = re.compile(r"\buse\s+(.{1,200}?)(?:\s+for\s+now)?\s+instead\b", re.IGNORECASE)
#: Lines after the one that says "deprecated" read with it: a message split over a few lines.
_FOLLOWING = 2


def _added(before: str | None, after: str | None) -> list[tuple[int, list[str]]]:
    """Each line ``after`` adds (by content: a moved line is not added), with the lines following it."""
    old = Counter((before or "").splitlines())
    lines = (after or "").splitlines()
    out: list[tuple[int, list[str]]] = []
    for i, line in enumerate(lines):
        if old[line] > 0:
            old[line] -= 1
            continue
        if _DEPRECATED.search(line):
            following = lines[i + 1:i + 1 + _FOLLOWING]
            cut = next((j for j, t in enumerate(following) if _DEPRECATED.search(t)), len(following))
            out.append((i + 1, [line, *following[:cut]]))  # up to the next deprecation: that one is its own
    return out


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One ``deprecated`` fact per name a line added to ``path`` deprecates: the first name the line gives
    (else the lines after it: a comment above the entry it deprecates), never the one to use instead."""
    facts: list[Change] = []
    seen: set[str] = set()
    for line, text in _added(before, after):
        said = " ".join(t.strip().lstrip("#").strip() for t in text)
        instead = _INSTEAD.search(said)
        replacement = instead[1].strip(" .`'\"")[:120] if instead else ""
        subject = next((name for t in text for name in _names(t) if name not in replacement), "")
        if not subject:
            continue
        removal = _REMOVAL.search(said)
        if subject in seen:
            # said again further on (a comment "deprecated env var handling" above the warning that names the
            # release and the replacement): the first fact takes what it did not say
            i = next(i for i, c in enumerate(facts) if c.symbol == subject)
            facts[i] = facts[i].model_copy(update={"after": facts[i].after or (removal[1] if removal else ""),
                                                   "detail": facts[i].detail or replacement})
            continue
        seen.add(subject)
        facts.append(Change(kind="deprecated", symbol=subject, path=path, line=line,
                            after=removal[1] if removal else "", detail=replacement, language="python"))
    return facts


def _names(text: str) -> list[str]:
    """The names a line gives, in order (the word "deprecated" itself aside)."""
    names = [next(g for g in m.groups() if g) for m in _SUBJECT.finditer(text)]
    return [n for n in names if not n.lower().startswith("deprecat")]
