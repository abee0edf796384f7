"""One set of fields set per record class: pydantic makes a set of the fields given for each model it builds (728
bytes for six names), and the variant records, one per variant held to the run's end (3,088 at 10,000 readers),
are all built with every field given (issue 38: memory flat in readers)."""

from __future__ import annotations

from typing import TypeVar

from pydantic import BaseModel

_Model = TypeVar("_Model", bound=BaseModel)

#: Each class's set of all its field names, shared by every model of it built with all of them.
_SETS: dict[type, set[str]] = {}


def one_fields_set(model: _Model) -> _Model:
    """``model`` holding its class's one shared set of fields set when every field was given (else unchanged).

    pydantic only adds a field's name to the set when it is assigned, and every name is in the set already: the
    shared set never changes, and the model compares and serialises (``exclude_unset`` too) as before."""
    kept = model.__pydantic_fields_set__
    cls = type(model)
    if len(kept) == len(cls.model_fields) and kept == cls.model_fields.keys():
        object.__setattr__(model, "__pydantic_fields_set__", _SETS.setdefault(cls, kept))
    return model
