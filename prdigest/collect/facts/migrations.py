"""Settings the user docs say are migrating: a table a PR adds to a page whose section announces a migration or a
deprecation, each row pairing an environment variable with what replaces it.

| Environment Variable | Config Key |
|---|---|
| `VLLM_ASCEND_ENABLE_FLASHCOMM1` | `enable_flashcomm1` |

under "## Migration Guide … environment variables will be removed in a future release" gives a ``deprecated``
fact of ``VLLM_ASCEND_ENABLE_FLASHCOMM1`` whose ``detail`` is ``enable_flashcomm1`` (no removal release: ``after``
is empty), as a warning in code would (prdigest/collect/facts/deprecations.py). Only rows the PR adds count, only
in the user docs (not the contributor docs), and only where the section says the old names are going: a table of
the variables a config also reads is documentation, not a deprecation.
"""

from __future__ import annotations

import re
from collections import Counter

from prdigest.kernel.models import Change
from prdigest.kernel.text import CODE_SPAN

#: What a section says when its table lists settings on their way out.
_GOING = re.compile(r"deprecat|migrat|will be removed|no longer (?:be )?supported|replaced by|renamed", re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,2})\s")
_ENV = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]+")
_KEY = re.compile(r"(?:--)?[A-Za-z_][\w.-]*(?:=\S+)?")


def _rows(lines: list[str]) -> list[tuple[int, int]]:
    """Each markdown table of ``lines`` as (first line, last line), 0-based."""
    tables: list[tuple[int, int]] = []
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.lstrip().startswith("|"):
            start = i if start is None else start
        elif start is not None:
            tables.append((start, i - 1))
            start = None
    return tables


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One ``deprecated`` fact per row a PR adds to a migration table of ``path`` (a page of the user docs)."""
    lines = (after or "").splitlines()
    old = Counter((before or "").splitlines())
    # Each line's section (from its ``#`` / ``##`` heading) and whether the section says the names are going: one
    # pass, so a page of many tables under one heading is read once.
    section, going, top = [0] * len(lines), {0: False}, 0
    for i, line in enumerate(lines):
        if _HEADING.match(line):
            top = i
            going[top] = False
        section[i] = top
        going[top] = going[top] or bool(_GOING.search(line))
    facts: list[Change] = []
    for first, last in _rows(lines):
        if not going[section[first]]:
            continue
        for i in range(first, last + 1):
            if old[lines[i]] > 0:
                old[lines[i]] -= 1
                continue  # a row the page had: old news
            cells = [cell.strip() for cell in lines[i].strip().strip("|").split("|")]
            spans = [CODE_SPAN.fullmatch(cell) for cell in cells[:2]]
            if len(cells) < 2 or not all(spans):
                continue
            name, instead = (m[1].strip() for m in spans if m)
            if _ENV.fullmatch(name) and _KEY.fullmatch(instead) and instead != name:
                facts.append(Change(kind="deprecated", symbol=name, path=path, line=i + 1, detail=instead,
                                    language="text"))
    return facts
