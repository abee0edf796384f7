r"""Whether a repeated part of a regular expression can match the same text in more than one way, the other
shape (beside nested quantifiers) that makes Python's backtracking engine exponential.

``(\w\w|\w)*\[kernel\]`` nests no quantifier, yet on a 49-character title that has no ``[kernel]`` the
engine tries every way of cutting the word into pieces of one and two letters: 2^40 and more. Each
iteration of the group can start with either alternative, and both accept the same letter.

The test is the one for deterministic (one-unambiguous) content models: build the Glushkov automaton of the
repeated body (one *position* per character matcher; ``first``, ``last`` and ``follow`` sets; the loop adds
``last → first``) and require that, wherever the engine stands, the positions it can go to next accept
disjoint sets of characters. Then each prefix of the text is read by at most one path through the body, so
the engine backtracks over how many iterations to take (linear), never over how to cut them (exponential).

What is approximated only makes the test stricter, never laxer:

* a character matcher's set is computed with Python's own engine over every code point, as if the pattern
  were case-insensitive and ``.`` matched a newline (a superset of what it matches);
* lookarounds and anchors count as matching the empty string (they can only prune paths);
* a counted repeat up to 8 (``x{3}``, ``x{2,5}``) is unrolled into copies, a larger one counts as ``x+``
  (more paths than it has);
* a loop whose body can match the empty string counts as ambiguous (an empty iteration can be taken or not),
  and so does an edge between two positions that one iteration and two iterations both make;
* a back-reference counts as a position that accepts any character.

Together with :func:`prdigest.kernel.patterns`' refusal of a variable-length quantifier under another
repeat (``(a+)+``), what remains under a loop is fixed-count repeats, optional parts and alternatives, and
with the body deterministic the work per starting point is polynomial in the length of the text.
"""

from __future__ import annotations

import re
import re._constants as c
import re._parser as parser
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)
_CATEGORIES = {c.CATEGORY_DIGIT: r"\d", c.CATEGORY_NOT_DIGIT: r"\D", c.CATEGORY_SPACE: r"\s",
               c.CATEGORY_NOT_SPACE: r"\S", c.CATEGORY_WORD: r"\w", c.CATEGORY_NOT_WORD: r"\W"}
_ANY = "(?s:.)"


@lru_cache(maxsize=1)
def _every_character() -> str:
    return "".join(map(chr, range(0x110000)))


@lru_cache(maxsize=1024)
def _mask(source: str) -> int:
    """The code points the one-character regex ``source`` matches (case-insensitively), as a bit mask."""
    mask = 0
    for run in re.finditer(f"(?:{source})+", _every_character(), re.IGNORECASE | re.DOTALL):
        mask |= ((1 << (run.end() - run.start())) - 1) << run.start()
    return mask


def _char(code: int) -> str:
    return f"\\U{code:08x}"


def _matcher(op: Any, arg: Any) -> str:
    """The one-character regex of a position in the parsed pattern."""
    if op is c.LITERAL:
        return _char(arg)
    if op is c.NOT_LITERAL:
        return f"[^{_char(arg)}]"
    if op is c.CATEGORY:
        return _CATEGORIES.get(arg, _ANY)
    if op is c.IN:
        parts, negate = [], False
        for item_op, item in arg:
            if item_op is c.NEGATE:
                negate = True
            elif item_op is c.LITERAL:
                parts.append(_char(item))
            elif item_op is c.RANGE:
                parts.append(f"{_char(item[0])}-{_char(item[1])}")
            elif item_op is c.CATEGORY and item in _CATEGORIES:
                parts.append(_CATEGORIES[item])
            else:  # NOT_LITERAL inside a class, or anything new: assume it may match anything
                return _ANY
        return f"[{'^' if negate else ''}{''.join(parts)}]" if parts else ("[^\\s\\S]" if not negate else _ANY)
    return _ANY


#: A counted repeat up to this many times is unrolled into copies (``x{2,3}`` is ``xx(?:x)?``); a larger one
#: is modelled as a loop, like ``*``.
_UNROLL = 8
#: Past this many positions the pattern is too large to tell: it counts as ambiguous.
_MAX_POSITIONS = 4000


@dataclass
class _Automaton:
    """Glushkov positions of the whole pattern and who may follow whom."""

    sources: list[str] = field(default_factory=list)
    follow: dict[int, set[int]] = field(default_factory=dict)
    #: Edges made by two routes (``q`` follows ``p`` inside one iteration and again across two).
    twice: set[tuple[int, int]] = field(default_factory=set)
    ambiguous: bool = False

    def position(self, source: str) -> int:
        if len(self.sources) >= _MAX_POSITIONS:
            self.ambiguous = True
        self.sources.append(source)
        self.follow[len(self.sources) - 1] = set()
        return len(self.sources) - 1

    def link(self, froms: frozenset[int], tos: frozenset[int]) -> None:
        for p in froms:
            self.twice.update((p, q) for q in self.follow[p] & tos)
            self.follow[p] |= tos

    def overlapping(self, positions: set[int]) -> bool:
        """Whether two of ``positions`` accept a common character."""
        if len(positions) < 2:  # the common case: nothing to compare, no character set to compute
            return False
        seen = 0
        for mask in sorted((_mask(self.sources[p]) for p in positions), key=int.bit_length):
            if seen & mask:
                return True
            seen |= mask
        return False


@dataclass(frozen=True)
class _Part:
    nullable: bool
    first: frozenset[int]
    last: frozenset[int]
    positions: frozenset[int]
    #: It can match the empty string in two ways (``(?:|)``, ``(?:a?|b?)``, ``(?:a?)?``): a loop around it
    #: doubles its paths at every iteration although no position shows it.
    empty_twice: bool = False


_EMPTY = _Part(True, frozenset(), frozenset(), frozenset())


def _concat(auto: _Automaton, a: _Part, b: _Part) -> _Part:
    auto.link(a.last, b.first)
    return _Part(a.nullable and b.nullable, a.first | b.first if a.nullable else a.first,
                 b.last | a.last if b.nullable else b.last, a.positions | b.positions,
                 a.empty_twice or b.empty_twice)


def _optional(a: _Part) -> _Part:
    return _Part(True, a.first, a.last, a.positions, a.empty_twice or a.nullable)


def _sequence(auto: _Automaton, items: Any) -> _Part:
    part = _EMPTY
    for op, arg in items:
        part = _concat(auto, part, _node(auto, op, arg))
    return part


def _alternatives(auto: _Automaton, branches: Any) -> _Part:
    parts = [_sequence(auto, b) if b is not None else _EMPTY for b in branches]
    return _Part(any(p.nullable for p in parts), frozenset().union(*(p.first for p in parts)),
                 frozenset().union(*(p.last for p in parts)), frozenset().union(*(p.positions for p in parts)),
                 sum(p.nullable for p in parts) > 1 or any(p.empty_twice for p in parts))


def _repeat(auto: _Automaton, low: int, high: Any, sub: Any) -> _Part:
    if high is not c.MAXREPEAT and high <= _UNROLL:  # copies: x{2,3} is x x (x)?, each with its own positions
        copies = [_sequence(auto, sub) for _ in range(high)]
        tail = _EMPTY
        for copy in reversed(copies[low:]):
            tail = _optional(_concat(auto, copy, tail))
        part = _EMPTY
        for copy in copies[:low]:
            part = _concat(auto, part, copy)
        return _concat(auto, part, tail)
    body = _sequence(auto, sub)
    auto.link(body.last, body.first)
    inside = body.positions
    if (body.nullable or body.empty_twice  # an iteration that matches nothing can be taken or not
            or auto.overlapping(set(body.first))
            or any(auto.overlapping(auto.follow[p] & inside) for p in inside)
            or any(p in inside and q in inside for p, q in auto.twice)):
        auto.ambiguous = True
    return _Part(body.nullable or low == 0, body.first, body.last, body.positions, body.empty_twice)


def _node(auto: _Automaton, op: Any, arg: Any) -> _Part:
    if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN, c.CATEGORY):
        p = auto.position(_matcher(op, arg))
        return _Part(False, frozenset({p}), frozenset({p}), frozenset({p}))
    if op is c.GROUPREF:  # any text of any length: a position that accepts anything, looping on itself
        p = auto.position(_ANY)
        auto.follow[p].add(p)
        return _Part(True, frozenset({p}), frozenset({p}), frozenset({p}))
    if op is c.SUBPATTERN:
        return _sequence(auto, arg[-1])
    if op is c.ATOMIC_GROUP:
        return _sequence(auto, arg)
    if op is c.BRANCH:
        return _alternatives(auto, arg[1])
    if op is c.GROUPREF_EXISTS:
        return _alternatives(auto, arg[1:])
    if op in (c.ASSERT, c.ASSERT_NOT):
        _sequence(auto, arg[1])  # its repeats are checked; it consumes nothing where it stands
        return _EMPTY
    if op in _REPEATS:
        return _repeat(auto, *arg)
    return _EMPTY  # AT (anchors) and anything zero-width


def ambiguous_repeat(pattern: str) -> bool:
    """Whether a repeated part of ``pattern`` can read the same text in two ways (``(\\w\\w|\\w)*``,
    ``(\\w\\w?)+``, ``(?:b?){2}`` under a loop); ``pattern`` must compile."""
    auto = _Automaton()
    _sequence(auto, parser.parse(pattern))
    return auto.ambiguous
