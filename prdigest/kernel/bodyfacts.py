"""What a ``body`` fact says a function's code now does differently, beside its body changing: the dtype casts it
makes (``numerics``) and how many values its returns give (``returns``).

prdigest/collect/facts/bodyaspects.py writes them into the fact's ``detail`` (``numerics: +x→float32 | returns: 1→2``);
the verdict's lessons (prdigest/draft/learn.py) read them back here, so the two agree on one format.
"""

from __future__ import annotations

import re

#: A changed function's body, nothing more said: the detail a ``body`` fact had before these aspects.
BODY_CHANGED = "body changed"
#: Between two aspects of one detail.
SEPARATOR = " | "
#: The aspects, in the order a detail says them.
NUMERICS = "numerics"
RETURNS = "returns"
#: A cast to a type at least as wide as single precision: where a computation stops rounding early.
_WIDE = re.compile(r"→(?:float32|float64|fp32|f32|double|float)$")


def detail(**aspects: str) -> str:
    """A ``body`` fact's detail with these aspects (the empty ones left out), or :data:`BODY_CHANGED`."""
    said = [f"{name}: {value}" for name in (NUMERICS, RETURNS) if (value := aspects.get(name))]
    return SEPARATOR.join(said) or BODY_CHANGED


def aspects(text: str) -> dict[str, str]:
    """The aspects a ``body`` fact's detail says (``{"numerics": "+x→float32", "returns": "1→2"}``)."""
    out: dict[str, str] = {}
    for part in text.split(SEPARATOR):
        name, sep, value = part.partition(": ")
        if sep and name in (NUMERICS, RETURNS):
            out[name] = value
    return out


def widened(numerics: str) -> bool:
    """Whether a numerics aspect adds a cast to single precision or wider (``+s→float32``): the function now
    computes part of its work in a wider type than before."""
    return any(part.startswith("+") and _WIDE.search(part) for part in numerics.split("; "))


def arity_changed(returns: str) -> bool:
    """Whether a returns aspect says the number of returned values changed (``1→2``), not only that a function
    started or stopped returning (``0→1``: a value nobody received before)."""
    old, _, new = returns.partition("→")
    return "0" not in (old, new) and old != new
