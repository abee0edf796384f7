"""The class a hunk's lines are in when git's header names only a method, told by the hunk before it.

With git's Python driver (GitHub's), a hunk inside a method gets the method's ``def`` as its header, without its
class: the class is out of sight (``*``). But the header is the last ``def``/``class`` line above the hunk; when
the hunk before it, in the same file, shows that very ``def`` last (no other ``def`` or ``class`` line after it),
and shows the class holding it (a ``class`` line above it at a smaller indent, or its own header's class for a
method at indent 4), the two hunks are in the same method: its class is known. (vLLM 0.18.1's
``OffloadingSpec.__init__``: its first hunk shows ``class OffloadingSpec`` and ``def __init__(``, the next one,
headed ``def __init__(``, drops ``self.offloaded_block_size``.) A bare name a method's body assigns
(``offloaded_block_size = …``, a local) is no attribute: :func:`attribute_lines` leaves such lines out of what
still declares an attribute.
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hunklines import HEAD_DEF, Hunk, code, indent

_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_CLASS = re.compile(r"^(\s*)class\s+([A-Za-z_]\w*)\b")
_LOCAL = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=(?!=)")


def _last_def(hunk: Hunk, owner: str | None) -> tuple[str, str | None] | None:
    """The last ``def`` or ``class`` line the hunk shows (new side): a ``def``'s name and its class (None when
    not in sight); None when that last line is a ``class`` or the hunk shows none."""
    classes: list[tuple[int, str]] = [(4, owner)] if owner else []  # (body indent, name)
    last: tuple[str, str | None] | None = None
    shown = False
    for row in hunk.side(True):
        text = row.text
        if not text.strip() or text.lstrip().startswith(("#", ")", "]", "}", "@")):
            continue
        width = indent(text)
        c, d = _CLASS.match(text), _DEF.match(text)
        if c:
            classes = [k for k in classes if k[0] <= width] + [(width + 4, c[2])]
            last, shown = None, True
        elif d:
            holder = next((name for body, name in reversed(classes) if body == width), None)
            last, shown = (d[2], holder), True
    return last if shown else ((hunk.header_def or "", owner) if hunk.header_def and owner else None)


def continued_classes(found: list[Hunk]) -> list[str | None]:
    """For each hunk of one file (in order), the class holding the method its header names when the hunk before
    it proves it (see the module's doc); else None."""
    out: list[str | None] = []
    before: tuple[str, str | None] | None = None
    for hunk in found:
        name = HEAD_DEF.match(hunk.header.strip())
        owner = before[1] if name and not hunk.header_class and before and before[0] == name[1] else None
        out.append(owner)
        before = _last_def(hunk, owner or hunk.header_class)
    return out


def attribute_lines(found: list[Hunk], owners: list[str | None]) -> list[str]:
    """The lines the hunks show after the change, but for those inside a method whose class a continued hunk
    tells that assign a bare name (a local, not an attribute)."""
    out: list[str] = []
    for hunk, owner in zip(found, owners):
        for row in hunk.side(True):
            if owner and indent(row.text) > 4 and _LOCAL.match(code(row.text)):
                continue
            out.append(row.text)
    return out
