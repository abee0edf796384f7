"""Environment setup the user docs tell readers to run, replaced: ``source /usr/local/Ascend/8.5.0/bisheng_toolkit/
set_env.sh`` in a tutorial becoming ``export PATH=/usr/local/Ascend/tools/bishengir/bin:$PATH``.

Readers copied the old line into their shell profile or job scripts; main now expects the new one (a toolkit moved,
its script gone), so one ``dependency`` fact (detail :data:`SETUP`) per page says "run the new instead of the old".
Only a line the page dropped and another it added count: a line only added is a new step of a new route, one only
dropped asks nothing. A setup line is sourcing a shell script (``source X.sh``, ``. X.sh``) or exporting a search
path (``PATH``, ``LD_LIBRARY_PATH``, ``PYTHONPATH``, ``LD_PRELOAD``; a ``MODEL_PATH`` is a placeholder the reader
fills in, no setup); the page is one of the user docs
(prdigest/collect/facts/docpins.py; contributor pages are internal: prdigest/collect/facts/reach.py).
"""

from __future__ import annotations

import re

from prdigest.kernel.actions import SETUP
from prdigest.kernel.models import Change

_LINE = re.compile(r"^[ \t>$]*((?:source|\.)[ \t]+[^\s;&|`]+\.sh"
                   r"|export[ \t]+(?:PATH|LD_LIBRARY_PATH|LIBRARY_PATH|PYTHONPATH|CPATH|LD_PRELOAD)=[^\s;&|`]+)",
                   re.MULTILINE)


def setup_lines(text: str | None) -> list[str]:
    """The setup lines of ``text`` in their order (each once), spaces squeezed."""
    seen: dict[str, None] = {}
    for found in _LINE.finditer(text or ""):
        seen.setdefault(" ".join(found[1].split()), None)
    return list(seen)


def compare(path: str, before: str | None, after: str | None) -> list[Change]:
    """One fact when the page dropped a setup line and added another (the first of each, as the page orders them)."""
    if not before or not after:
        return []
    old, new = setup_lines(before), setup_lines(after)
    gone, added = [x for x in old if x not in new], [x for x in new if x not in old]
    if not gone or not added:
        return []
    line = next((n for n, text in enumerate(after.splitlines(), 1) if added[0] in " ".join(text.split())), 0)
    return [Change(kind="dependency", symbol=added[0], path=path, line=line, before=gone[0], after=added[0],
                   detail=SETUP, language="text")]
