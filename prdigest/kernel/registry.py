"""What every registry of extension points has in common (drafters, sources): named items, each added
once, listed in registration order, and an unknown name refused in one line that lists the known ones."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, Protocol, TypeVar

from prdigest.kernel.errors import ConfigError


class Named(Protocol):
    """An item a registry holds: it has a name."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)


class Registry(Generic[T]):
    """Items by name; ``what`` (``drafter``, ``source``) and ``flag`` (``--drafter``) word its messages."""

    what = "item"
    flag = ""

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items: dict[str, T] = {}
        for item in items:
            self.register(item)

    def register(self, item: T) -> None:
        """Add ``item``; its name must be new."""
        if item.name in self._items:
            raise ValueError(f"{self.what} '{item.name}' is already registered")
        self._items[item.name] = item

    def unregister(self, name: str) -> None:
        """Remove the item called ``name`` (a team's own, e.g. after a test); unknown names are ignored."""
        self._items.pop(name, None)

    def __iter__(self) -> Iterator[T]:
        return iter(self._items.values())

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def names(self) -> list[str]:
        """Every registered name, in registration order."""
        return list(self._items)

    def __getitem__(self, name: str) -> T:
        """The item called ``name``; ConfigError naming the known ones otherwise."""
        try:
            return self._items[name]
        except KeyError:
            raise ConfigError(f"{self.flag} '{name}': unknown {self.what}; use one of "
                              f"{', '.join(self.names())}") from None
