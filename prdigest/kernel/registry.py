"""What every registry of extension points has in common (sources, drafters, media): named items, each added
once, listed in order, and an unknown name refused in one line that lists the known ones.

One mechanism for all of them: an installed distribution declares an item as an entry point in the registry's
group (``pr_digest.sources``, ``pr_digest.drafters``, ``pr_digest.media``), the entry point's name being the
name a run uses; pr-digest's own items are declared the same way in its ``pyproject.toml``. An entry point is
loaded on first use of its name, so a run imports only what it names. ``register`` adds an item in process (a
test, a team's own code) on top of them.

The items of a group live here, in the kernel, whichever :class:`Registry` object reads them: the options check
(``prdigest.kernel.options``) looks a name up in its group without importing the step that owns the group.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, Protocol, TypeVar

from prdigest.kernel.errors import ConfigError

SOURCES_GROUP = "pr_digest.sources"
DRAFTERS_GROUP = "pr_digest.drafters"
MEDIA_GROUP = "pr_digest.media"


class Named(Protocol):
    """An item a registry holds: it has a name."""

    @property
    def name(self) -> str: ...


T = TypeVar("T", bound=Named)

#: Per group: the items registered in process, by name (shared by every Registry of the group; ``Any``: each
#: group holds one registry's item type).
_REGISTERED: dict[str, dict[str, Any]] = {}
#: Per group: the entry points loaded so far, by (name, target): a name is loaded once per process.
_LOADED: dict[str, dict[tuple[str, str], Any]] = {}


#: Per group: the sys.path it was read with, and its entry points (a scan reads every distribution's metadata:
#: milliseconds, too slow once per reader; read again when sys.path changes).
_SCANNED: dict[str, tuple[tuple[str, ...], dict[str, EntryPoint]]] = {}


def _entry_points(group: str) -> dict[str, EntryPoint]:
    """The group's installed entry points by name, sorted (the first distribution on ``sys.path`` wins a name
    declared twice)."""
    path = tuple(sys.path)
    cached = _SCANNED.get(group)
    if cached is not None and cached[0] == path:
        return cached[1]
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=group):
        found.setdefault(ep.name, ep)
    _SCANNED[group] = (path, dict(sorted(found.items())))
    return _SCANNED[group][1]


class Registry(Generic[T]):
    """Items by name; ``what`` (``drafter``, ``source``) and ``flag`` (``--drafter``) word its messages.

    With a ``group``, the group's entry points are items too, loaded by name on first use; without one (a
    registry a test builds), only what is given or registered.
    """

    what = "item"
    flag = ""
    group: str | None = None

    def __init__(self, items: Iterable[T] = (), group: str | None = None) -> None:
        if group is not None:
            self.group = group
        self._items: dict[str, T] = _REGISTERED.setdefault(self.group, {}) if self.group else {}
        self._loaded: dict[tuple[str, str], T] = _LOADED.setdefault(self.group, {}) if self.group else {}
        for item in items:
            self.register(item)

    # ---- in process ------------------------------------------------------------------------------------
    def register(self, item: T) -> None:
        """Add ``item``; its name must be new (neither registered nor an installed entry point's)."""
        if item.name in self._items or item.name in self._installed():
            raise ValueError(f"{self.what} '{item.name}' is already registered")
        self._items[item.name] = item

    def unregister(self, name: str) -> None:
        """Remove the item registered as ``name`` (a team's own, e.g. after a test); other names are ignored."""
        self._items.pop(name, None)

    # ---- lookup ----------------------------------------------------------------------------------------
    def _installed(self) -> dict[str, EntryPoint]:
        return _entry_points(self.group) if self.group else {}

    def _load(self, name: str) -> T | None:
        """The item called ``name``: registered, or its entry point loaded now (once); None if neither."""
        if name in self._items:
            return self._items[name]
        ep = self._installed().get(name)
        if ep is None:
            return None
        key = (name, ep.value)
        if key not in self._loaded:
            try:
                item = ep.load()
            except Exception as exc:  # a plugin's import error, named in one line
                raise ConfigError(f"{self.flag or self.what} '{name}': its entry point {ep.value} "
                                  f"({self.group}) does not load: {type(exc).__name__}: {exc}") from exc
            if getattr(item, "name", None) is None:
                raise ConfigError(f"{self.flag or self.what} '{name}': its entry point {ep.value} ({self.group}) "
                                  f"names {type(item).__name__}, not a {self.what} registration")
            self._loaded[key] = item
        return self._loaded[key]

    def names(self) -> list[str]:
        """Every known name: the installed entry points' in name order, then those registered in process."""
        installed = list(self._installed())
        return [*installed, *(n for n in self._items if n not in installed)]

    def __iter__(self) -> Iterator[T]:
        """Every item, each entry point loaded (a listing: help text, error messages, ``digest status``)."""
        for name in self.names():
            item = self._load(name)
            if item is not None:
                yield item

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def __getitem__(self, name: str) -> T:
        """The item called ``name``; ConfigError naming the known ones otherwise."""
        item = self._load(name)
        if item is None:
            known = ", ".join(self.names()) or (f"none: no {self.group} entry points are installed (install "
                                                "pr-digest; ./scripts/setup re-installs it)")
            raise ConfigError(f"{self.flag} '{name}': unknown {self.what}; use one of {known}")
        return item

    # ---- NAME[:ARGUMENT] values (--source jsonl:PATH) --------------------------------------------------
    def forms(self) -> list[str]:
        """How a flag spells each item: ``NAME:ARGUMENT`` for an item whose ``argument`` is set, else ``NAME``."""
        return [f"{item.name}:{arg}" if (arg := getattr(item, "argument", None)) else item.name for item in self]

    def parse(self, value: str) -> tuple[T, str]:
        """The item ``value`` names and its argument (what follows the first colon); ConfigError listing the
        forms when the name is unknown or the argument missing, empty or not taken."""
        name, colon, argument = value.partition(":")
        item = self._load(name) if name else None
        takes = getattr(item, "argument", None)
        if item is None or bool(colon) != bool(takes) or (takes and not argument.strip()):
            raise ConfigError(f"{self.flag} '{value}': use {' or '.join(self.forms())}")
        return item, argument


def registry(group: str, what: str, flag: str) -> Registry[Named]:
    """A view of ``group``'s items (the same items as every other Registry of the group), worded for ``flag``."""
    view: Registry[Named] = Registry(group=group)
    view.what, view.flag = what, flag
    return view
