"""A model's field values kept in a dictionary that shares its keys with every other model of its class.

Pydantic keeps a model's fields in the instance's ``__dict__``, a dictionary of its own per model: for a reader's
eleven fields a table of 32 slots, ~460 bytes, made for each of 10,000 readers and held to the run's end, and ~270
and ~180 bytes for each of 3,088 variant records and their filters' (issue 38: memory flat in readers). The
interpreter's instance dictionaries share one table of keys between the instances of a class (a "split" dictionary:
only the values are per instance, ~170 bytes for a reader). :func:`compact` gives a model such a dictionary, with
the same keys, values and order: the model reads, compares, copies and dumps as before.
"""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

#: One plain class per model class: its instances' dictionaries share that model's field names.
_HOLDERS: dict[type, type] = {}


def compact(model: M) -> M:
    """``model`` with its field values in a key-sharing dictionary (the same mapping); returns it."""
    kind = type(model)
    holder = _HOLDERS.get(kind)
    if holder is None:
        holder = _HOLDERS[kind] = type(f"_{kind.__name__}Fields", (), {"__doc__": "field values of one model"})
    values = holder()
    # Set as attributes, in the model's order: the way the interpreter builds a dictionary on the class's shared
    # keys (a dictionary filled any other way gets a table of its own).
    for name, value in model.__dict__.items():
        setattr(values, name, value)
    object.__setattr__(model, "__dict__", values.__dict__)
    return model
