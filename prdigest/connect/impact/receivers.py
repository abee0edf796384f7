"""Methods a downstream calls on objects of unknown type (``self.capturer.clear()``, ``obj.m()``, ``f().m()``), by
name: what the match can say of them is "an upstream method of that name was removed or renamed, and no upstream
class keeps one" (prdigest.collect.facts.hierarchy.METHOD_GONE)."""

from __future__ import annotations

from collections.abc import Iterable

Parts = tuple[str, ...]


def unknown_receivers(calls: Iterable[tuple[Parts, int, str]], called: Iterable[tuple[str, int]],
                      imported: set[str], defined: set[str]) -> list[tuple[str, int]]:
    """(method, line) of each method a file calls on a receiver of unknown type, the first line per name: a
    chain whose root is no name the file imports (``self.m()`` is the class's own, ``self.x.m()`` is not) and an
    expression's; not a name the downstream defines itself (then it is most likely its own), nor a dunder."""
    found: list[tuple[int, str]] = [(line, name) for name, line in called]
    for chain, line, _ in calls:
        if chain[0] in imported or len(chain) < (3 if chain[0] in ("self", "cls") else 2):
            continue
        found.append((line, chain[-1]))
    out: list[tuple[str, int]] = []
    seen: set[str] = set()
    for line, name in sorted(found):
        if name in seen or name in defined or name.startswith("__"):
            continue
        seen.add(name)
        out.append((name, line))
    return out


def called_methods(calls: Iterable[tuple[Parts, int, str]], called: Iterable[tuple[str, int]],
                   imported: set[str], wanted: set[str]) -> set[str]:
    """Of the method names ``wanted``, those a file calls on objects that are no name it imports (``self.x.m()``,
    ``obj.m()``, ``f().m()``): a method the downstream keeps is still reached through these."""
    found = {name for name, _ in called if name in wanted}
    for chain, _, _ in calls:
        # the name first: most calls are of other names, and this runs for every call of the downstream
        if chain[-1] in wanted and chain[0] not in imported \
                and len(chain) >= (3 if chain[0] in ("self", "cls") else 2):
            found.add(chain[-1])
    return found
