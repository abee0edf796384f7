"""A unified diff's hunks, each side as the lines it holds, and what git's hunk header says: the hunk parser
of the patch facts that read more than single changed lines (multi-line signatures, class fields, re-exports).

Git writes after the second ``@@`` the last line before the hunk that its "funcname" rule picks: by default
the last line starting at column 0 (``class Scheduler(SchedulerInterface):``), with the Python driver (what
GitHub shows) the last ``def``/``class`` line at any depth, its indentation cut (``def __init__(``). Either
way the enclosing class of a method may be out of sight.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Line numbers of at most 18 digits (a header giving more is no hunk: ``int`` refuses 4,300 digits and more).
_HEADER = re.compile(r"^@@ -(\d{1,18})(?:,\d+)? \+(\d{1,18})(?:,\d+)? @@ ?(.*)$")
#: Possessive runs: a 1 MB literal is one step per run, not a backtracking frame per character (125 MB).
_STRING = re.compile(r"\"(?:[^\"\\]++|\\.)*+\"|'(?:[^'\\]++|\\.)*+'")
HEAD_DEF = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
HEAD_CLASS = re.compile(r"^class\s+([A-Za-z_]\w*)\b")


@dataclass(frozen=True)
class Row:
    """One line of a hunk on one side: its text and its 1-based line number in that side's file."""

    sign: str  # " " (context), "-" (old side only) or "+" (new side only)
    text: str
    line: int


@dataclass(frozen=True)
class Hunk:
    """One hunk: git's header text and its lines with both sides' numbers."""

    header: str
    rows: tuple[Row, ...]

    def side(self, new: bool) -> list[Row]:
        """The lines one version of the file has here, in order (context and ``+`` lines, or context and ``-``)."""
        drop = "-" if new else "+"
        return [r for r in self.rows if r.sign != drop]

    @property
    def header_def(self) -> str | None:
        """The function git's header names (``def name(``), or None."""
        m = HEAD_DEF.match(self.header.strip())
        return m[1] if m else None

    @property
    def header_class(self) -> str | None:
        """The class git's header names (``class Name``), or None."""
        m = HEAD_CLASS.match(self.header.strip())
        return m[1] if m else None


def hunks(patch: str) -> list[Hunk]:
    """The hunks of one file's unified diff (text before the first ``@@`` is skipped); a line that is none of
    context, ``+`` or ``-`` (``\\ No newline at end of file``) is left out."""
    out: list[Hunk] = []
    header = ""
    rows: list[Row] = []
    old = new = 0
    started = False
    for raw in patch.splitlines():
        m = _HEADER.match(raw)
        if m:
            if started:
                out.append(Hunk(header, tuple(rows)))
            header, rows, started = m[3], [], True
            old, new = int(m[1]), int(m[2])
            continue
        if not started or not raw or raw[0] not in " +-":
            continue
        sign, text = raw[0], raw[1:]
        rows.append(Row(sign, text, new if sign != "-" else old))
        if sign != "+":
            old += 1
        if sign != "-":
            new += 1
    if started:
        out.append(Hunk(header, tuple(rows)))
    return out


def python_headers(found: list[Hunk]) -> bool:
    """Whether a file's hunk headers read as git's Python driver wrote them (every header empty or a ``def`` /
    ``class`` line): then a header's ``def`` is the last definition before the hunk at any depth. A header
    that is another statement (``logger = …``, ``from x import (``) shows the default rule: column 0 only."""
    return all(not h.header.strip() or HEAD_DEF.match(h.header.strip()) or HEAD_CLASS.match(h.header.strip())
               for h in found)


def code(text: str) -> str:
    """A line with its string literals emptied and its comment cut, for counting brackets."""
    text = _STRING.sub("''", text)
    return text.split("#", 1)[0]


def indent(text: str) -> int:
    return len(text) - len(text.lstrip())
