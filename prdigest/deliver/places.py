"""Where each planned message is in a delivery plan, found by its ledger key (reader, medium)."""

from __future__ import annotations

from collections.abc import Iterable


class Places:
    """Each (reader, medium) of a plan at its place (its last, should one appear twice), by medium, then by reader.

    Keyed by the readers' own id strings under each medium's name: a dictionary keyed by (reader, medium) held a
    tuple of its own per message (~64 bytes, 11,549 messages at 10,000 readers) from the plan to delivery's end
    (issue 38: memory flat in readers).
    """

    def __init__(self, keys: Iterable[tuple[str, str]]) -> None:
        self._by_medium: dict[str, dict[str, int]] = {}
        for i, (reader, medium) in enumerate(keys):
            self._by_medium.setdefault(medium, {})[reader] = i

    def get(self, key: tuple[str, str]) -> int | None:
        """The place of (reader, medium) ``key``, or None when the plan has no such message."""
        readers = self._by_medium.get(key[1])
        return None if readers is None else readers.get(key[0])

    def __getitem__(self, key: tuple[str, str]) -> int:
        found = self.get(key)
        if found is None:
            raise KeyError(key)
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, tuple) and len(key) == 2 and self.get(key) is not None

    def ordered(self) -> list[int]:
        """Every place, in the plan's order."""
        return sorted(i for readers in self._by_medium.values() for i in readers.values())
