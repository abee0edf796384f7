"""Work a PR moves into a method a downstream may override, read from its patches together: lines one function
loses (``-`` rows) that the PR adds to a method of another module, directly or in a new helper the method now
calls (``cls._align(…)``). Before, the work ran for everyone where it was; now it runs only through that method,
so a downstream override that never calls the base's skips it (a platform's ``update_block_size_for_backend``
that only says ``pass``, when the hybrid block-size alignment moved there from a model config's check).

The fact is the method's ``body`` fact with ``moved_from`` (the functions the lines left, ``vllm.a.C.f``, or
``vllm.a.*.f`` where git's header names the method but not its class): prdigest.connect.impact.matchers then
flags an override that does not call the base's. What makes a move, not a rewrite: at least :data:`MIN_MOVED`
distinct statements of some length (:data:`MIN_LENGTH` characters, not comments, docstrings or decorators) removed
from one function and added to the other and to no other function (the same lines added in several places are a
parallel edit); the old home in another module than the method (a move inside one module, between a method and its
own helpers, changes nothing for an override) and still there after the change (a deleted module's classes went
elsewhere whole); no such lines going the other way too (a shuffle between two functions); and the method's old
lines in sight never calling the old home (work that already ran through it did not move into it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Sequence

from prdigest.collect.facts.hunklines import Hunk, Row, hunks, indent
from prdigest.collect.facts.patchsigs import _CLASS, _DEF, WILDCARD
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

#: A moved statement's least length (stripped, spaces collapsed): ``return x`` or ``block_size=1,`` is no evidence.
MIN_LENGTH = 24
#: The least number of distinct such statements one function loses and another gains.
MIN_MOVED = 6
_HEAD_DEF = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_HEAD_CLASS = re.compile(r"^class\s+([A-Za-z_]\w*)\b")
_OWN_CALL = re.compile(r"\b(?:self|cls)\.([A-Za-z_]\w*)\s*\(")


def _statement(text: str) -> str | None:
    """A line as moved code is compared (spaces collapsed), or None for one that is no evidence of a move."""
    line = " ".join(text.split())
    if len(line) < MIN_LENGTH or line.startswith(("#", '"', "'", "@", "def ", "async def ", "class ")):
        return None
    return line


def _header_method(hunk: Hunk) -> bool:
    """Whether the ``def`` git's header names is a method: its first parameter is ``self`` or ``cls``, or, out of
    sight, the hunk's lines use ``self``."""
    m = re.match(r"^(?:async\s+)?def\s+\w+\s*\(\s*(\w*)", hunk.header.strip())
    if m and m[1]:
        return m[1] in ("self", "cls")
    return any(re.search(r"\b(?:self|cls)\.", r.text) for r in hunk.rows)


def _functions(hunk: Hunk, rows: list[Row]) -> Iterator[tuple[Row, str | None, bool]]:
    """(row, qualified function holding it or None, whether that function's ``def`` is an added row) for each row
    of one side of a hunk: ``C.f`` for a method of a class in sight, ``*.f`` for a method whose class is out of
    sight (git's header names its ``def``), ``f`` at module level, None outside a function; a nested function's
    rows are the outer one's."""
    classes: list[tuple[int, str]] = []
    head_def, head_class = _HEAD_DEF.match(hunk.header.strip()), _HEAD_CLASS.match(hunk.header.strip())
    if head_class:
        classes.append((0, head_class[1]))
    # (its def's indentation, or -1 for the header's: out of sight; its name; whether its def is an added row)
    current: tuple[int, str | None, bool] | None = None
    if head_def:
        current = (-1, f"{WILDCARD}.{head_def[1]}" if _header_method(hunk) else head_def[1], False)
    least = 1 << 30  # the least indentation of the header's function's lines so far
    for row in rows:
        text = row.text
        stripped = text.strip()
        width = indent(text)
        if stripped and not stripped.startswith((")", "]", "}", "#")):
            klass, m = _CLASS.match(text), _DEF.match(text)
            if current is not None and current[0] < 0:
                # the header's function ends at a definition above its lines (a sibling) or at column 0
                if width == 0 or ((klass or m or stripped.startswith("@")) and width < least):
                    current = None
                else:
                    least = min(least, width)
            elif current is not None and width <= current[0]:
                current = None
            classes = [c for c in classes if c[0] < width]
            if klass and current is None:
                classes.append((width, klass[2]))
            elif m and current is None:
                owner = next((name for w, name in reversed(classes) if w < width), None)
                name = m[2] if width == 0 else f"{owner}.{m[2]}" if owner else f"{WILDCARD}.{m[2]}"
                current = (width, name, row.sign == "+")
        yield row, current[1] if current else None, current[2] if current else False


def rehomed_facts(patches: Sequence[tuple[str, str]]) -> list[Change]:
    """A ``body`` fact with ``moved_from`` for each method a PR's patches move another module's work into
    (``patches``: the PR's Python API files, ``(path, patch)``)."""
    lost: dict[tuple[str, str], set[str]] = defaultdict(set)  # (path, function) → statements removed
    gained: dict[tuple[str, str], set[str]] = defaultdict(set)  # (path, function) → statements added
    new: set[tuple[str, str]] = set()  # functions whose ``def`` the PR adds
    old_calls: dict[tuple[str, str], set[str]] = defaultdict(set)  # names a function's old lines call
    own_calls: dict[tuple[str, str], set[str]] = defaultdict(set)  # ``self.h(`` / ``cls.h(`` its added lines make
    kept: set[tuple[str, str]] = set()  # functions the new side still shows (context or added rows, an old def)
    for path, patch in patches:
        for hunk in hunks(patch):
            for row, function, added in [*_functions(hunk, hunk.side(False)), *_functions(hunk, hunk.side(True))]:
                sign = row.sign
                if function is None or (sign == " " and added):
                    continue
                key = (path, function)
                if added:
                    new.add(key)
                statement = _statement(row.text)
                if sign != "-" and not added:
                    kept.add(key)
                if sign == "-" and statement:
                    lost[key].add(statement)
                elif sign == "+" and statement:
                    gained[key].add(statement)
                if sign != "+":
                    old_calls[key].update(re.findall(r"\b([A-Za-z_]\w*)\s*\(", row.text))
                if sign == "+":
                    own_calls[key].update(_OWN_CALL.findall(row.text))
    # a new helper's work belongs to the methods of its module whose added lines call it
    hosts: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for key in gained:
        path, function = key
        leaf = function.rpartition(".")[2]
        if key in new and leaf.startswith("_"):
            hosts[key] |= {k for k, called in own_calls.items() if k[0] == path and leaf in called and k != key
                           and "." in k[1] and k not in new}
        elif "." in function and not leaf.startswith("_") and key not in new:
            hosts[key].add(key)
    landed: dict[str, int] = defaultdict(int)  # statement → how many functions gain it
    for statements in gained.values():
        for statement in statements:
            landed[statement] += 1
    moved: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for key, statements in gained.items():
        alone = {s for s in statements if landed[s] == 1}  # added to one function only: not a parallel edit
        for (old_path, old_function), gone in lost.items():
            if old_path == key[0] or (old_path, old_function) not in kept:
                continue  # a move inside one module (a method and its own helpers), or its old home is gone
            if len(gained.get((old_path, old_function), set()) & lost.get(key, set())) >= MIN_MOVED:
                continue  # lines went both ways: a shuffle between the two, not a move
            shared = len(alone & gone)
            if shared < MIN_MOVED:
                continue
            for host in hosts.get(key, ()):
                if old_function.rpartition(".")[2] in old_calls.get(host, set()):
                    continue  # the method already ran it: nothing moved into it
                name = f"{module_of(old_path)}.{old_function}"
                moved[host][name] = max(moved[host].get(name, 0), shared)
    facts = []
    for (path, function), sources in sorted(moved.items()):
        names = tuple(sorted(sources, key=lambda n: (-sources[n], n)))
        facts.append(Change(kind="body", symbol=function, path=path, detail="now runs what the PR moved out of "
                            + " and ".join(names), moved_from=names,
                            public=not function.rpartition(".")[2].startswith("_")))
    return facts
