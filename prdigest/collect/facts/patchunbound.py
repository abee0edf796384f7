"""Keywords a PR's added lines pass to a constructor through a name the patch does not bind, read from its patches
together: ``Scheduler(…, hash_block_size=h)`` where no line in sight imports ``Scheduler`` or defines it, and the
PR adds ``hash_block_size`` to an ``__init__`` of another module (``*.__init__`` where git's header hides the class).

Such a name may be the class itself, imported above the hunk (then upstream builds its own class there, never a
downstream subclass), or a variable holding whatever class is configured (``Scheduler = config.get_scheduler_cls()``:
a plugin's subclass too). A call's ``(`` may be in the hunk before the one adding the keyword, when the lines git
left out between them are more of its arguments (:func:`_chains`). A patch cannot tell what the name is, so the
``passes`` fact says ``receiver="untyped"``: prdigest.connect.impact.matchers makes it a break only for a subclass
the downstream hands upstream itself (named in a string by its dotted path, or patched over the class), a check
otherwise.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from prdigest.collect.facts.hunklines import Hunk, code, hunks, indent
from prdigest.collect.facts.patchcalls import _calls, _imported
from prdigest.kernel.models import Change

WILDCARD = "*"
#: The most lines two hunks may leave unseen between them and still be read as one call's arguments.
MAX_GAP = 6
_CLASS = re.compile(r"^\s*class\s+([A-Za-z_]\w*)\b")


def _added(detail: str) -> set[str]:
    """The parameters a signature fact's detail adds (``+p``, ``+p=None``)."""
    return {p[1:].split("=", 1)[0].strip() for p in detail.split(", ") if p.startswith("+") and not p.startswith("+*")}


def _chains(found: list[Hunk]) -> list[Hunk]:
    """The hunks, each joined with the next when it ends inside a call that the next one carries on: brackets left
    open on its new side, the next hunk at most :data:`MAX_GAP` lines further with its first line indented past the
    line that opened the innermost of them (one argument a line: the unseen lines are more of its arguments)."""
    out: list[Hunk] = []
    for hunk in found:
        if out and _continues(out[-1], hunk):
            out[-1] = Hunk(out[-1].header, out[-1].rows + hunk.rows)
        else:
            out.append(hunk)
    return out


def _continues(first: Hunk, then: Hunk) -> bool:
    """Whether ``then`` carries on a call ``first`` leaves open (see :func:`_chains`)."""
    rows, following = first.side(True), then.side(True)
    if not rows or not following or not 0 < following[0].line - rows[-1].line <= MAX_GAP + 1:
        return False
    opened: list[int] = []  # the indentation of the line holding each bracket still open
    for row in rows:
        for ch in re.findall(r"[()\[\]{}]", code(row.text)):
            if ch in "([{":
                opened.append(indent(row.text))
            elif opened:
                opened.pop()
    text = next((r.text for r in following if r.text.strip()), "")
    return bool(opened) and indent(text) > opened[-1]


def unbound_passes(files: Iterable[tuple[str, str]], facts: list[Change]) -> list[Change]:
    """``passes`` facts (symbol ``X.__init__``, path the module whose ``__init__`` gains the keyword, ``receiver``
    ``untyped``) for each keyword an added line passes to a call ``X(…)`` whose ``X`` no line of that file's patch
    imports or defines (``files``: the PR's Python API files, ``(path, patch)``)."""
    wanted: dict[str, list[tuple[str, str]]] = defaultdict(list)  # keyword → (path, class or "*") gaining it
    for f in facts:
        owner, _, leaf = f.symbol.rpartition(".")
        if f.kind == "signature" and leaf == "__init__" and owner and "." not in owner:
            for name in _added(f.detail):
                wanted[name].append((f.path, owner))
    if not wanted:
        return []
    now: dict[str, set[str]] = defaultdict(set)
    then: dict[str, set[str]] = defaultdict(set)
    passing = re.compile(r"\b(?:" + "|".join(re.escape(k) for k in sorted(wanted)) + r")\s*=(?!=)")
    for path, patch in files:
        if not passing.search(patch):
            continue
        found = _chains(hunks(patch))
        bound = set(_imported(found, path, True)) | set(_imported(found, path, False)) | {
            m[1] for h in found for r in h.rows for m in [_CLASS.match(r.text)] if m}
        for hunk in found:
            for new, into in ((True, now), (False, then)):
                for callee, keyword, sign in _calls(hunk, new):
                    if keyword in wanted and callee[:1].isupper() and callee not in bound \
                            and (sign == "+" or not new):
                        into[callee].add(keyword)
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for callee, keywords in now.items():
        for keyword in keywords - then.get(callee, set()):
            for path, owner in wanted[keyword]:
                if owner in (WILDCARD, callee):
                    out[(callee, path)].add(keyword)
    return [Change(kind="passes", symbol=f"{callee}.__init__", path=path, after=", ".join(sorted(keywords)),
                   detail=", ".join(sorted(keywords)), receiver="untyped")
            for (callee, path), keywords in sorted(out.items())]
