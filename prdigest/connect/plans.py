"""The variant plan made once per run: the connect step's grouping of readers by filter, and each filter's
selection, kept for the render step, which selects again only the variants its review changed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from prdigest.kernel.models import Entry
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import Reader

#: One entry as a plan reads it (``prdigest.connect.variants._Facts``): the entry, its subsystems, its primary
#: subsystem, its verdict's rank and the downstreams it affects.
_Facts = tuple[Entry, frozenset[str], "str | None", int, frozenset[str]]


class Selects(Protocol):
    """A reader filter as a plan uses it (:class:`prdigest.connect.variants.Filter`)."""

    @property
    def key(self) -> str: ...

    def select(self, facts: list[Any]) -> list[Entry]: ...


#: One filter's part of a plan: the filter, the entries it selects (reading order), its readers.
Group = tuple[Selects, list[Entry], list[Reader]]

#: What selects and orders an entry (:meth:`Filter.select`, :func:`ordered`): its number, subsystems, primary
#: subsystem, verdict rank and the downstreams it affects.
_Signature = tuple[int, frozenset[str], "str | None", int, frozenset[str]]


def _signature(fact: _Facts) -> _Signature:
    entry, subsystems, primary, rank, downstreams = fact
    return entry.number, subsystems, primary, rank, downstreams


@dataclass(frozen=True, slots=True)
class _Group:
    """One filter of the connect step's plan: its readers and the entries it selected, as a bit mask over the
    plan's numbers in reading order (bit i: the i-th): a few dozen bytes per filter where a tuple of the numbers
    took eight per entry selected, for each of thousands of filters (issue 38: memory flat in readers)."""

    filter: Selects
    readers: list[Reader]
    selected: int


def _mask(places: dict[int, int], numbers: Iterable[int]) -> int:
    """The bit mask of ``numbers`` (those with a place) over the numbers whose places are ``places``."""
    mask = 0
    for n in numbers:
        if n in places:
            mask |= 1 << places[n]
    return mask


def _numbers(order: tuple[int, ...], mask: int) -> list[int]:
    """The numbers of ``mask``'s bits, in ``order``'s order (a selection keeps the reading order)."""
    bits = bin(mask)[:1:-1]  # the lowest bit first
    return [order[i] for i, bit in enumerate(bits) if bit == "1"]


@dataclass
class Plans:
    """The connect step's plan of one run, for its render step (:func:`prdigest.connect.variants.plan_variants`
    with ``plans``). A render of the same readers over entries the review left as drafted reuses every filter's
    selection; an entry rejected or re-judged (verdict, subsystems) has exactly the variants that held it or
    now select it selected again. Read-first and ledes are always made again (the review may rank or rewrite)."""

    _readers: Sequence[Reader] | None = None
    _vocabulary: Vocabulary | None = None
    _signatures: frozenset[_Signature] = frozenset()
    _groups: list[_Group] = field(default_factory=list)
    #: The numbers of the entries planned over, in reading order: the groups' masks index it.
    _order: tuple[int, ...] = ()
    #: Keys of the variants the last reuse selected again (the rest kept the connect step's selection).
    reselected: list[str] = field(default_factory=list)
    #: How many of the last reuse's variants kept the connect step's selection.
    reused: int = 0

    def keep(self, readers: Sequence[Reader], vocabulary: Vocabulary | None, facts: list[_Facts],
             groups: list[Group]) -> None:
        """Remember the connect step's plan: every filter's group (the empty ones too) over ``facts``."""
        self._readers, self._vocabulary = readers, vocabulary
        self._signatures = frozenset(_signature(f) for f in facts)
        self._order = tuple(f[0].number for f in facts)
        places = {n: i for i, n in enumerate(self._order)}
        self._groups = [_Group(flt, members, _mask(places, (e.number for e in entries)))
                        for flt, entries, members in groups]

    def groups(self, readers: Sequence[Reader], vocabulary: Vocabulary | None,
               facts: list[_Facts]) -> list[Group] | None:
        """Every filter's group over ``facts`` (in the connect step's order), or None when the readers or the
        vocabulary are not the connect step's (the caller plans anew)."""
        if self._readers is None or vocabulary is not self._vocabulary or not (
                readers is self._readers or list(readers) == list(self._readers)):
            return None
        now = {_signature(f) for f in facts}
        # An entry whose selection or place may differ: rejected, added, or re-judged since the connect step.
        changed = {s[0] for s in now.symmetric_difference(self._signatures)}
        entries = {f[0].number: f[0] for f in facts}
        moved = [f for f in facts if f[0].number in changed]
        planned: list[Group] = []
        self.reselected, self.reused = [], 0
        # the planned entries rejected or re-judged since (an added one is in no group's mask: select() finds it)
        touched = _mask({n: i for i, n in enumerate(self._order)}, changed)
        # equal selections (filters that differ by budget, or by what selects nothing here) share one list: held
        # by their variants to the run's end, once per selection rather than once per filter; each variant holds
        # its group's list of readers, not a copy (the plan's lists are never changed once kept)
        lists: dict[int, list[Entry]] = {}
        for group in self._groups:
            flt = group.filter
            if changed and (group.selected & touched or flt.select(moved)):
                planned.append((flt, flt.select(facts), group.readers))
                self.reselected.append(flt.key)
            else:  # the entries unchanged keep their relative reading order
                selection = lists.get(group.selected)
                if selection is None:
                    selection = lists[group.selected] = [entries[n] for n in _numbers(self._order, group.selected)]
                planned.append((flt, selection, group.readers))
                self.reused += 1
        return planned
