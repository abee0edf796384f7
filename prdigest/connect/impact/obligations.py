"""Matchers of the facts that add an obligation rather than change a name (``OBLIGATIONS``): a new registry a
downstream has to enter, a module-level container whose kind changed under the downstream's calls.

``registry`` (prdigest.collect.facts.registries): a downstream that enters a sibling registry of the same
module (``R[k] = …``, ``R.append(…)``, ``R.add(…)``…) is told to enter the new one too, a ``check``; it
``breaks`` when the evidence is exact: the sibling's key it uses (``PlatformEnum.OOT``) is no key of the new
registry, and upstream looks the new one up with ``[key]`` (``Change.needed_by``): a ``KeyError`` there. A
downstream subclass of a class the new registry lists is told to check (register yours if upstream should pick
it). ``retyped``: a call of a method the new kind lacks (``.add()`` on what is now a tuple, ``R[k] = v`` on a
tuple) breaks, decided by Python's builtin types; a patch assigning over the name is told to check.
"""

from __future__ import annotations

from collections.abc import Iterator

from prdigest.collect.facts.registries import missing
from prdigest.connect.impact.index import ENTRY, KEY, Use
from prdigest.connect.impact.matchers import Context, Hit, Matcher, matches
from prdigest.kernel.models import Change

#: Calls that put an entry into a registry (a mapping's ``R[k] = v`` is ``R.__setitem__``, ``R[k].append(v)`` is
#: ``R.__entry__``: prdigest.connect.impact.index).
ENTERS = frozenset({"__setitem__", ENTRY, "append", "add", "update", "setdefault", "extend", "insert"})


def entered_key(use: Use) -> str:
    """The key an entry ``R[k] = v`` or ``R[k].append(v)`` uses, as the index kept it (a dotted name or a string),
    else ""."""
    return use.detail.split(KEY, 1)[1].split(";", 1)[0] if KEY in use.detail else ""


def _leaf(key: str) -> str:
    """``PlatformEnum.OOT`` and ``vllm.platforms.PlatformEnum.OOT`` are one key: ``OOT``."""
    return key if key[:1] in "'\"" else key.rpartition(".")[2]


def _registry(change: Change, ctx: Context) -> Iterator[Hit]:
    """A new registry: a downstream entering one of its siblings (a check; a break when its key is missing from the
    new registry and upstream looks that up with ``[key]``), a downstream subclass of a class it lists (a check)."""
    full = f"{ctx.module}.{change.symbol}"
    keys = {_leaf(k.strip()) for k in change.after.split(", ") if k.strip()}
    where = ", ".join(n.rpartition(".")[2] for n in change.needed_by)
    for sibling in change.siblings:
        for use in ctx.table.named(sibling):
            rest = matches(use, ctx.prefixes, sibling, deeper=True)
            if use.how != "calls" or not rest or rest[1:].split(".")[0] not in ENTERS:
                continue
            key = entered_key(use)
            if key and keys and _leaf(key) not in keys and change.needed_by:
                yield Hit(use, "breaks", f"{change.symbol} is new beside {sibling}, which you enter under {key}; it "
                          f"has no entry for {key} and upstream looks it up with [key] in {where}: register yours "
                          f"in {change.symbol}", full)
            else:
                yield Hit(use, "check", f"{change.symbol} is new beside {sibling}, which you enter: register yours "
                          f"in {change.symbol} too", full)
    roots = tuple(u + "." for u in ctx.upstream)
    for cls in change.listed:
        leaf = cls.rpartition(".")[2]
        for use in ctx.table.named(leaf):
            if use.how == "subclasses" and use.symbol.rpartition(".")[2] == leaf and use.symbol.startswith(roots):
                yield Hit(use, "check", f"{change.symbol} is new and lists {leaf}, which you subclass: register yours "
                          f"in {change.symbol} if upstream should pick it", full)


def _retyped(change: Change, ctx: Context) -> Iterator[Hit]:
    """A module-level container of another kind: a call of a method the new kind lacks breaks; a patch of the
    name is a check."""
    was, now = change.before, change.after
    full = f"{ctx.module}.{change.symbol}"
    for use in ctx.table.named(change.symbol.rpartition(".")[2]):
        rest = matches(use, ctx.prefixes, change.symbol, deeper=True)
        if rest is None:
            continue
        method = rest[1:].split(".")[0]
        if method and use.how == "calls" and missing(now, method) and not missing(was, method):
            shown = "[k] = …" if method == "__setitem__" else f".{method}()"
            yield Hit(use, "breaks", f"{change.symbol} is a {now} now (was a {was}): a {now} has no {shown}", full)
        elif not method and use.how == "patches":
            yield Hit(use, "check", f"{change.symbol} is a {now} now (was a {was}): assign a {now} over it", full)


#: The matcher of each obligation kind (prdigest.connect.impact.match reads them beside ``MATCHERS``).
OBLIGATIONS: dict[str, Matcher] = {"registry": _registry, "retyped": _retyped}
