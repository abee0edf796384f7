"""A readers file read one reader at a time: each reader's YAML nodes are composed, built and validated, then
dropped, instead of the whole file's node tree held at once (10,000 readers: ~60 MiB of nodes at the peak)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent
from yaml.resolver import Resolver

from prdigest.kernel.errors import ConfigError, first_problem
from prdigest.kernel.yamlfile import node_line
from prdigest.state.compact import compact

#: libyaml's event parser (the events in C; one item's nodes composed in Python); None without libyaml, when the
#: file is read whole as before.
_PARSER: type | None = getattr(getattr(yaml, "cyaml", None), "CParser", None)


class _Events(_PARSER or object, Composer, SafeConstructor, Resolver):  # type: ignore[misc]
    """A safe loader whose caller composes one node at a time (PyYAML's composer over libyaml's events)."""

    def __init__(self, text: str) -> None:
        super().__init__(text)  # type: ignore[call-arg]  # libyaml's parser (mypy sees the composer)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)

    def node(self) -> yaml.Node:
        """The next node, composed (aliases to earlier anchors resolve: the anchors are kept)."""
        node = Composer.compose_node(self, None, None)  # type: ignore[arg-type]
        if node is None:  # pragma: no cover - the caller asks only where an event starts a node
            raise yaml.YAMLError("a node was expected")
        return node

    def data(self, node: yaml.Node) -> Any:
        """The node as Python data, the safe constructor's way."""
        data = self.construct_document(node)
        self.constructed_objects, self.recursive_objects = {}, {}  # kept by construct_document: not per file
        return data


def stream_model(path: Path, text: str, item: type[BaseModel], field: str, *,
                 what: str, name_of: str = "id", label: str = "reader",
                 shared: Shared | None = None) -> dict[str, Any] | None:
    """The top-level mapping of ``text`` with ``field``'s list validated item by item as ``item`` (the other
    keys as plain data), or None when the file is not a plain mapping holding a list at ``field`` (the caller
    reads it whole: its errors are named as they always were).

    An item that does not validate raises :class:`ConfigError` naming the file, the line, the field and the
    item (``field[i]`` and its ``name_of`` value, as ``label``). ``shared``: each item's repeated values kept once.
    """
    if _PARSER is None:
        return None
    loader = _Events(text)
    try:
        try:
            return _mapping(loader, path, item, field, what, name_of, label, shared)
        except yaml.YAMLError:
            return None  # read whole: PyYAML's own parser names the line and the problem
    finally:
        loader.dispose()


def _mapping(loader: _Events, path: Path, item: type[BaseModel], field: str, what: str, name_of: str,
             label: str, shared: Shared | None) -> dict[str, Any] | None:
    loader.get_event()  # stream start
    if not loader.check_event(yaml.events.DocumentStartEvent):
        return None
    loader.get_event()
    if not loader.check_event(MappingStartEvent):
        return None
    loader.get_event()
    found: dict[str, Any] = {}
    while not loader.check_event(MappingEndEvent):
        if not loader.check_event(ScalarEvent):
            return None
        key = loader.node()
        name = loader.data(key)
        if not isinstance(name, str) or name in found or key.tag != Resolver.DEFAULT_SCALAR_TAG:
            return None  # a merge key, a repeated key, a key that is not text: the whole-file path decides
        if name == field and loader.check_event(SequenceStartEvent) and not loader.peek_event().anchor:
            loader.get_event()
            found[name] = _items(loader, path, item, field, what, name_of, label, shared)
        else:
            found[name] = loader.data(loader.node())
    loader.get_event()  # mapping end
    loader.get_event()  # document end
    if not loader.check_event(yaml.events.StreamEndEvent):
        return None  # a second document: refused by the whole-file path, as before
    if field not in found:
        return None
    return found


class Shared:
    """One copy of each equal value the items of a file repeat: ten thousand readers follow a few hundred lists
    of subsystems and set the same few fields. Only for frozen models (pydantic copies, never changes, their
    set of fields set), whose values are equal tuples or strings. Each model's values are kept in a dictionary
    sharing its keys with the others' (:func:`prdigest.state.compact.compact`), as it is made."""

    def __init__(self, fields: Iterable[str]) -> None:
        self._fields = tuple(fields)
        self._values: dict[object, object] = {}

    def __call__(self, model: BaseModel) -> BaseModel:
        values = self._values
        kept = model.__pydantic_fields_set__
        object.__setattr__(model, "__pydantic_fields_set__", values.setdefault(frozenset(kept), kept))
        for name in self._fields:
            value = model.__dict__[name]
            model.__dict__[name] = values.setdefault((name, value), value)
        return compact(model)


def _items(loader: _Events, path: Path, item: type[BaseModel], field: str, what: str, name_of: str,
           label: str, shared: Shared | None) -> list[Any]:
    items: list[Any] = []
    while not loader.check_event(SequenceEndEvent):
        node = loader.node()
        data = loader.data(node)
        try:
            made = item.model_validate(data)
            items.append(shared(made) if shared is not None else made)
        except ValidationError as exc:
            index = len(items)
            problem = first_problem(exc, under=(field, str(index)))
            line = node_line(node, problem.loc)
            named = data.get(name_of) if isinstance(data, dict) else None
            who = f" ({label} {named!r})" if isinstance(named, str) else ""  # repr: one line, whatever it holds
            raise ConfigError(f"{path}{f':{line}' if line else ''}: {what} field '{problem.field}'{who}: "
                              f"{problem.message}{problem.and_more('problem(s)')}") from None
    loader.get_event()  # sequence end
    return items
