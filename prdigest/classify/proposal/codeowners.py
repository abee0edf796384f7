"""CODEOWNERS sections as areas: a short comment line (``# Attention backends``) or a GitLab-style
``[Section]`` header names the patterns that follow it, up to the next header.

Long comments are prose (a licence, "this file lists…"), not names: only a comment of a few words heads
a section. A commented-out rule (``# /vllm_ascend/eplb``, ``# *.md @docs``) is a rule switched off, neither a
name nor the end of the section around it. Patterns before any section have no name and are left to the tree.
"""

from __future__ import annotations

import re

from prdigest.classify.proposal.globs import GlobError, compile_codeowners
from prdigest.classify.proposal.named_areas import Area, add_area

MAX_TITLE_WORDS = 5
MAX_TITLE = 40
_GITLAB = re.compile(r"^\^?\[(?P<name>[^\]]{1,80})\](?:\[\d+\])?(?:\s+@.*)?$")
_DECORATION = re.compile(r"^[#=\-*~_\s]+|[#=\-*~_:\s]+$")
#: The first word of a rule: a path from the root (``/x``), a folder (``x/``), a glob, or a nested path with a
#: file or folder name of the kind titles do not use (``vllm_ascend/eplb``, ``a/b/c``, ``setup.py``).
_RULE = re.compile(r"^(?:[/*!]\S*|\S+/|\S*[*?\[]\S*|[^\s/]+/[^\s/]+/\S*|\S*/\S*[_.]\S*|\S*[_.]\S*/\S*"
                   r"|[\w-]+\.\w{1,5})$")


def commented_rule(comment: str) -> bool:
    """Whether a comment line is a CODEOWNERS rule switched off (``# /docs @a``): its first word is a pattern."""
    text = comment.lstrip("#").strip()
    if not text:
        return False
    first = text.split()[0]
    return bool(_RULE.match(first)) or (len(text.split()) > 1 and text.split()[1].startswith("@"))


def section_title(comment: str) -> str | None:
    """The area a comment line names, or None when it reads as prose or decoration."""
    text = _DECORATION.sub("", comment.lstrip("#"))
    if not text or len(text) > MAX_TITLE or len(text.split()) > MAX_TITLE_WORDS:
        return None
    if text.endswith((".", "?", "!")) or "@" in text or "http" in text.lower():
        return None
    return text


def read_codeowners(text: str, path: str = "CODEOWNERS") -> list[Area]:
    """Named sections with the patterns they own; the section title is the area as written."""
    areas: dict[str, Area] = {}
    current: Area | None = None
    pending: str | None = None  # the last short comment, heading the next patterns
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        gitlab = _GITLAB.match(stripped)
        if gitlab:
            current, pending = Area(written=gitlab["name"].strip(), origin="codeowners"), None
            add_area(areas, current)
            current = areas[current.written.lower()]
            continue
        if stripped.startswith("#"):
            if commented_rule(stripped):  # switched off: the section around it goes on
                continue
            title = section_title(stripped)
            if title is not None:
                pending = title
            continue
        if pending is not None:
            add_area(areas, Area(written=pending, origin="codeowners"))
            current, pending = areas[pending.lower()], None
        if current is None:
            continue
        pattern = stripped.split()[0].replace("\\ ", " ")
        current.written_patterns.append(pattern)
        try:
            regex = compile_codeowners(pattern).regex
        except GlobError as exc:
            current.notes.append(f"pattern {pattern!r} skipped: {exc}")
            continue
        if regex not in current.paths:
            current.paths.append(regex)
    return [a for a in areas.values() if a.paths or a.notes]
