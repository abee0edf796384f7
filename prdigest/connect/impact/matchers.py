"""One matcher per fact kind (``MATCHERS``): which downstream uses an upstream fact touches, and how badly.

A matcher reads one :class:`~prdigest.kernel.models.Change` and the downstream's :class:`UseTable` and yields
:class:`Hit` rows (the use, ``breaks`` or ``check``, what to say); prdigest.connect.impact.match turns them into
impacts, one per upstream fact and downstream function. A new fact kind is one function here and one line in
``MATCHERS``.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from prdigest.collect.facts.hierarchy import BASE_UNREAD, BUILTIN_METHODS, METHOD_GONE, METHOD_GONE_CHANGED
from prdigest.collect.facts.patchnewfields import FIELD_ADDED, KIND_UNSEEN
from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE, UNIMPLEMENTED, type_names
from prdigest.connect.impact.index import (
    CALLED,
    CALLS_SUPER,
    CONFIGURED,
    NO_VALUE,
    OWN_INIT,
    RETURNS,
    SPREAD,
    USED,
    Use,
)
from prdigest.connect.impact.members import receiver_of
from prdigest.connect.impact.signature import Signature, SignatureChange, call_shape, fits
from prdigest.kernel.models import Change, ImpactSeverity
from prdigest.kernel.pymodule import is_python, module_of

#: A class name (``FusedMoE``) as the step before a method in a dotted name.
WILDCARD = "*"


@dataclass(frozen=True)
class UseTable:
    """A downstream's uses keyed by their last dotted component, for matching one fact in a few lookups."""

    name: str
    by_tail: dict[str, list[Use]]
    #: The upstream's import packages as this downstream sees them (``vllm``).
    upstream: tuple[str, ...] = ()
    #: Every use, by symbol (for the uses of a whole module: a range of it).
    by_symbol: tuple[Use, ...] = ()

    @classmethod
    def of(cls, name: str, uses: Iterable[Use], upstream: Sequence[str] = ()) -> "UseTable":
        table: dict[str, list[Use]] = defaultdict(list)
        uses = list(uses)
        for use in uses:
            for part in set(use.symbol.split(".")[1:]):
                table[part].append(use)
        return cls(name, dict(table), tuple(upstream), tuple(sorted(uses, key=lambda u: u.symbol)))

    def named(self, name: str) -> list[Use]:
        return self.by_tail.get(name, [])

    def under(self, module: str) -> list[Use]:
        """The uses of names inside ``module`` (``vllm.a.b.X``, ``vllm.a.b.X.f``)."""
        prefix = module + "."
        start = bisect_left(self.by_symbol, prefix, key=lambda u: u.symbol)
        end = bisect_left(self.by_symbol, module + "/", key=lambda u: u.symbol)  # "/" sorts right after "."
        return list(self.by_symbol[start:end])


@dataclass(frozen=True)
class Hit:
    """One use a fact touches: how badly, what to say (after the fact's kind), and the symbol to show."""

    use: Use
    severity: ImpactSeverity
    words: str
    symbol: str = ""


@dataclass(frozen=True)
class Context:
    """What every matcher needs besides the fact: the uses, the upstream's packages, the fact's module."""

    table: UseTable
    upstream: tuple[str, ...]
    module: str
    #: The fact's module and the upstream packages above it (where an ``__init__`` may re-export it).
    prefixes: tuple[str, ...] = ()

    @classmethod
    def of(cls, table: UseTable, upstream: Sequence[str], module: str) -> "Context":
        return cls(table, tuple(upstream), module, tuple(_prefixes(module, upstream, ancestors=True)))


Matcher = Callable[[Change, Context], Iterator[Hit]]


# --- which upstream names a fact touches ------------------------------------------------------------------------


def fact_module(path: str) -> str | None:
    """``vllm/a/b.py`` → ``vllm.a.b``; ``vllm/a/__init__.py`` → ``vllm.a``; None for a file Python cannot
    import (docs, C++, YAML)."""
    return module_of(path) if is_python(path) else None


def _module_of(text: str) -> str | None:
    """A module named as a path (``vllm/a/b.py``) or dotted (``vllm.a.b``)."""
    text = text.strip()
    if is_python(text) or "/" in text:
        return fact_module(text if is_python(text) else text + ".py")
    return text if re.fullmatch(r"[A-Za-z_][\w.]*", text) else None


def _prefixes(module: str, upstream: Sequence[str], ancestors: bool) -> list[str]:
    """The module, and the packages above it inside the upstream (where an ``__init__`` may re-export)."""
    parts = module.split(".")
    out = [module]
    if ancestors:
        for i in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:i])
            if any(prefix == u or prefix.startswith(u + ".") for u in upstream):
                out.append(prefix)
    return out


def _name(text: str) -> str:
    """A bare name from a fact's before/after (``def foo(x)`` → ``foo``; ``a.b.Foo`` → ``Foo``)."""
    text = re.sub(r"^\s*(?:async\s+)?(?:def|class)\s+", "", text.strip())
    return re.split(r"[(\s:]", text, maxsplit=1)[0]


@lru_cache(maxsize=8192)
def _wildcard(head: str) -> re.Pattern[str]:
    """A fact's symbol with a wildcard part as a pattern, compiled once (a week's match tries it on every use)."""
    return re.compile(re.escape(head).replace(re.escape(WILDCARD), r"[A-Za-z_]\w*") + r"(?=\.|$)")


def matches(use: Use, prefixes: Sequence[str], symbol: str, deeper: bool) -> str | None:
    """The use's symbol relative to the fact's (``""`` exact, ``".attr"`` deeper), or None."""
    for prefix in prefixes:
        head = f"{prefix}.{symbol}" if symbol else prefix
        if symbol and head in prefixes:  # ``config`` of vllm.config.utils under ``vllm``: the package, not a name
            continue
        if WILDCARD in head:
            m = _wildcard(head).match(use.symbol)
            if m:
                rest = use.symbol[m.end():]
                return rest if (deeper or not rest) else None
            continue
        if use.symbol == head:
            return ""
        if deeper and use.symbol.startswith(head + "."):
            return use.symbol[len(head):]
    return None


def returned(use: Use) -> str | None:
    """An override's or installed function's return annotation as the index read it; None without one."""
    if RETURNS not in use.detail:
        return None
    return use.detail.split(RETURNS, 1)[1].split(";", 1)[0]


def _exact(change: Change, ctx: Context, *hows: str) -> Iterator[Use]:
    """The uses of the fact's own symbol (not deeper), of the given kinds (any when none given)."""
    for use in ctx.table.named(change.symbol.rsplit(".", 1)[-1]):
        if (not hows or use.how in hows) and matches(use, ctx.prefixes, change.symbol, deeper=False) is not None:
            yield use


# --- one matcher per kind ---------------------------------------------------------------------------------------


def _file_gone(change: Change, ctx: Context) -> Iterator[Hit]:
    """A deleted or renamed module: every use of it or of a name in it breaks."""
    renamed = change.kind == "file-renamed"
    old = fact_module(change.before if renamed and change.before else change.path)
    if old is None:
        return
    new = fact_module(change.after or change.path) if renamed else None
    words = f"{old} → {new}" if new and new != old else old
    for use in ctx.table.named(old.rsplit(".", 1)[-1]) + _module_users(ctx.table, old):
        if use.symbol == old or use.symbol.startswith(old + "."):
            yield Hit(use, "breaks", words)


def _moved(change: Change, ctx: Context) -> Iterator[Hit]:
    """A name moved to another module: imports and uses through the old module break (not when the old module
    still imports it: a re-export)."""
    if change.detail == "re-exported":
        return
    old = _module_of(change.before) or ctx.module
    new = _module_of(change.after) or ""
    symbol = change.symbol
    for use in ctx.table.named(symbol.split(".")[0]):
        if matches(use, [old], symbol, deeper=True) is not None:
            yield Hit(use, "breaks", f"{symbol} → {new}.{symbol}" if new else symbol)


def _renamed(change: Change, ctx: Context) -> Iterator[Hit]:
    """A renamed class, function or method: every use of the old name breaks."""
    symbol = change.symbol
    old_name = _name(change.before) if change.before else symbol
    new_name = _name(change.after) if change.after else symbol
    if "." in symbol and "." not in old_name:  # a method: the class is the symbol's
        old_name = f"{symbol.rsplit('.', 1)[0]}.{old_name}"
    for use in ctx.table.named(old_name.rsplit(".", 1)[-1]):
        if matches(use, ctx.prefixes, old_name, deeper=True) is not None:
            yield Hit(use, "breaks", f"{old_name} → {new_name.rsplit('.', 1)[-1]}")
    yield from _by_name(change, ctx, old_name, f"{old_name} → {new_name.rsplit('.', 1)[-1]}")


def _removed(change: Change, ctx: Context) -> Iterator[Hit]:
    """A removed name: every use of it, or of anything under it, breaks. An override of a removed method breaks
    when it calls the base's (``super().m(…)``: gone) or when only upstream called it (what it changed no longer
    runs); one the downstream calls itself (``self.m()``, ``obj.m()``) and that does not call the base's is its
    own method now: its calls still reach it, and what upstream does instead is a ``check``."""
    # without the upstream's tree, a method whose class has a base that was not read may still be inherited;
    # so may one whose class a patch does not show (``*.m``: which class lost it, and what it inherits, unknown)
    unread = BASE_UNREAD.split("{}", 1)[0] in change.detail
    unseen = change.symbol.startswith(WILDCARD + ".")
    for use in ctx.table.named(change.symbol.rsplit(".", 1)[-1]):
        if matches(use, ctx.prefixes, change.symbol, deeper=True) is not None:
            if unread or unseen:
                why = change.detail if unread else "its class is out of the patch's sight: it may still inherit it"
                yield Hit(use, "check", f"{change.symbol} ({why})")
            elif use.how == "overrides" and CALLED in use.detail and CALLS_SUPER not in use.detail \
                    and "." in change.symbol:
                yield Hit(use, "check", f"{change.symbol}; yours keeps it and calls it itself (not the base's): "
                          "upstream no longer calls it")
            else:
                yield Hit(use, "breaks", change.symbol)
    yield from _by_name(change, ctx, change.symbol, change.symbol)


def _by_name(change: Change, ctx: Context, symbol: str, words: str) -> Iterator[Hit]:
    """A method removed or renamed, matched by its name against calls on objects of unknown type
    (``self.capturer.clear()``): only when no upstream class keeps a method of that name; ``breaks`` when the
    upstream's whole tree proves it (and the downstream defines none: the index leaves those calls out), else a
    ``check`` (only the commit's changed files were read, or the name is a builtin's: ``d.clear()`` on a dict)."""
    if "." not in symbol:
        return
    whole = METHOD_GONE in change.detail
    if not whole and METHOD_GONE_CHANGED not in change.detail:
        return
    leaf = symbol.rsplit(".", 1)[1]
    proven = whole and change.public and leaf not in BUILTIN_METHODS
    gone = METHOD_GONE if whole else METHOD_GONE_CHANGED
    for use in ctx.table.named(leaf):
        if use.how == "method":
            # shown as the use's ``.m``: one line per call, however many upstream classes lost a method ``m``
            yield Hit(use, "breaks" if proven else "check",
                      f"{words}; `.{leaf}()` on an object of unknown type matched by name: {gone}")


def _setting(change: Change, ctx: Context) -> Iterator[Hit]:
    """An environment variable, argument or config field (``detail``: removed | renamed | default | added; the
    downstream reads it through the module or class: ``envs.VLLM_X``)."""
    detail = change.detail
    removed = detail == "removed" or (not detail and change.before and not change.after)
    renamed = detail == "renamed" or detail.startswith("renamed")
    name = (change.before if renamed and change.before else change.symbol).rsplit(".", 1)[-1]
    symbol = change.before if renamed and change.before else change.symbol
    if detail in ("added", "required") or (not detail and not change.before):
        return  # a new setting, or one a new check requires: a downstream's read of it works as before
    for use in ctx.table.named(name):
        if matches(use, ctx.prefixes, symbol, deeper=False) is None:
            continue
        if removed:
            yield Hit(use, "breaks", symbol)
        elif renamed:
            yield Hit(use, "breaks", f"{symbol} → {change.after.rsplit('.', 1)[-1]}")
        elif use.how != "imports":
            yield Hit(use, "check", f"{symbol}: {change.before} → {change.after}")
    if (removed or renamed) and "." in symbol:
        words = f"{symbol} → {change.after.rsplit('.', 1)[-1]}" if renamed else symbol
        yield from _members(change, ctx, symbol.rpartition(".")[0], name, words)


def _members(change: Change, ctx: Context, cls: str, leaf: str, words: str) -> Iterator[Hit]:
    """A public class's field or attribute that is gone, against the downstream's reads and assignments of it on
    an object named after the class (``vllm_config.compilation_config.x`` for ``CompilationConfig.x``: members.py):
    they break, whatever else the downstream assigns."""
    receiver = receiver_of(cls)
    if receiver is None or not change.public or any(p.startswith("_") for p in cls.split(".")):
        return
    for use in ctx.table.named(leaf):
        if use.how == "member" and use.symbol == f".{receiver}.{leaf}":
            yield Hit(use, "breaks", f"{words}; `{use.local}`: read or set on an object named after {cls}",
                      f"{ctx.module}.{cls}.{leaf}")


def _attribute(change: Change, ctx: Context) -> Iterator[Hit]:
    """A data attribute of an upstream class. Removed: a read of it through the class's name (``Status.X``) or
    a patch of it breaks; so does a read ``obj.x`` on an object of unknown type when no class of the changed
    files keeps a member of that name (the facts say so) and the downstream defines no attribute of that name
    (the index leaves those out): by name, not by type. Added in the class's ``__init__``: a downstream
    subclass whose own ``__init__`` does not call the base's and never sets it lacks it, unless it also overrides
    every method from which upstream reads it (``Change.callers``: its own loop instead of the base's)."""
    symbol = change.symbol
    full = f"{ctx.module}.{symbol}"
    cls, _, leaf = symbol.rpartition(".")
    if change.detail.startswith("removed"):
        for use in ctx.table.named(leaf):
            if use.how not in ("attribute", "member") and matches(use, ctx.prefixes, symbol, deeper=True) is not None:
                yield Hit(use, "breaks", f"{symbol} removed")
            elif use.how == "attribute" and ATTRIBUTE_GONE in change.detail and change.public:
                yield Hit(use, "breaks", f"{symbol} removed; `.{leaf}` matched by name: no class of the change "
                          f"keeps `{leaf}`", full)
        yield from _members(change, ctx, cls, leaf, f"{symbol} removed")
        return
    if change.detail == "added":
        for use in ctx.table.named("__init__"):
            if use.how == "overrides" and OWN_INIT in use.detail \
                    and matches(use, ctx.prefixes, f"{cls}.__init__", deeper=False) is not None \
                    and leaf not in use.detail.split(OWN_INIT, 1)[1].split(",") \
                    and not _overrides_all(use, change.callers, ctx):
                yield Hit(use, "breaks", f"{symbol} added: {cls}.__init__ sets it, yours does not call it nor "
                          "set it", full)
        # a method the subclass defines under that name: the instance attribute the base's __init__ now sets hides
        # it (``self.apply_monolithic = self._select_monolithic()``), unless the subclass never runs that __init__
        for use in _exact(change, ctx, "overrides"):
            if not any(u.how == "overrides" and OWN_INIT in u.detail and u.path == use.path and u.local == use.local
                       for u in ctx.table.named("__init__")):
                yield Hit(use, "breaks", f"{symbol} added: {cls}.__init__ now sets `self.{leaf}`, which hides your "
                          f"method `{leaf}`", full)


def _overrides_all(use: Use, methods: tuple[str, ...], ctx: Context) -> bool:
    """Whether the class of an override (``use``) overrides every one of these methods of the upstream class: the
    only ones from which upstream reads an attribute its ``__init__`` now sets (``Change.callers``)."""
    return bool(methods) and all(
        any(u.how == "overrides" and u.path == use.path and u.local == use.local
            for u in ctx.table.named(method.rpartition(".")[2])) for method in methods)


def _passes(change: Change, ctx: Context) -> Iterator[Hit]:
    """A keyword upstream now passes to a constructor: a subclass ``__init__`` that does not take it breaks (a
    ``check`` when upstream passes it only where it builds its own class by name: :func:`_built_by_upstream`). When
    a patch could not see what the call's name is bound to (``receiver="untyped"``), only a subclass the downstream
    hands upstream (named by its dotted path in a string, or patched over the class) breaks."""
    keywords = [k.strip() for k in change.detail.split(",") if k.strip()]
    cls = change.symbol.split(".")[0]
    for use in _exact(change, ctx, "overrides"):
        taken = Signature.parse(use.detail.split(";", 1)[0])
        if taken is None or taken.variadic_kw:
            continue
        missing = [k for k in keywords if k not in taken.names]
        if missing:
            words = f"{change.symbol}: upstream now passes {', '.join(missing)}, yours does not take it"
            if change.receiver == "untyped":
                # the patch shows the call, not what its name is bound to: the class itself or a configured one
                if CONFIGURED in use.detail or _patched_over(change, ctx):
                    yield Hit(use, "breaks", words + "; you hand this class to upstream to build")
                else:
                    yield Hit(use, "check", words + f"; upstream passes it to {cls}(…), which may be the class "
                              "you configure or its own")
            elif _built_by_upstream(change, ctx):
                yield Hit(use, "breaks", words)
            else:
                yield Hit(use, "check", words + _OWN_BUILD.format(change.symbol.split(".")[0]))


#: Said of a subclass ``__init__`` that upstream's new keywords never reach (:func:`_built_by_upstream`).
_OWN_BUILD = "; upstream passes it only where it builds its own {} by name, never your subclass"


def _built_by_upstream(change: Change, ctx: Context) -> bool:
    """Whether upstream's calls passing a constructor's new keywords may build a downstream subclass: they build
    whatever a variable, a factory or a ``__new__`` hands over (the fact is not ``constructed="by-name"``), or the
    downstream patches the class over (``module.C = Mine``, anywhere upstream may have imported it)."""
    if change.constructed != "by-name":
        return True
    return _patched_over(change, ctx)


def _patched_over(change: Change, ctx: Context) -> bool:
    """Whether the downstream patches the class of a constructor fact over (``module.C = Mine``)."""
    cls = change.symbol.split(".")[0]
    return any(u.how == "patches" and u.symbol.rsplit(".", 1)[-1] == cls for u in ctx.table.named(cls))


def _returns(change: Change, ctx: Context) -> Iterator[Hit]:
    """A return type that changed, against an override or a patch's installed function: one annotated with a
    type within the new one already fits (not listed); one annotated otherwise breaks, unless the new type only
    widens (``check``); one without an annotation breaks where the type was replaced, and is a ``check`` where it
    was narrowed (``X | None`` → ``X``) or widened: it may return the narrower type already. One that returns
    nothing (``-> None``, or no annotation and no ``return <value>``) breaks where the new type is a value (no
    ``None`` in it): upstream now reads it. A caller is flagged only when the function now returns nothing at all
    (``-> bool`` → ``-> None``): a call whose value it uses (assigned, tested, returned: the index's
    :data:`USED`) breaks; otherwise a narrower type is still what a caller handled, and a wider one is not flagged."""
    old, new = _types(change.before), _types(change.after)
    widened, narrowed = old <= new, new < old
    value = bool(new) and not _NONE.search(change.after)
    if change.after.strip() == "None" and old:
        for use in _exact(change, ctx, "calls"):
            if USED in use.detail:
                yield Hit(use, "breaks", f"{change.symbol} returns nothing now (was {change.before}); your call "
                          "uses its value")
    for use in _exact(change, ctx, "overrides", "patches"):
        own = returned(use)
        words = f"{change.symbol} returns {change.after} (was {change.before})"
        if value and (NO_VALUE in use.detail or (own is not None and own.strip() == "None")):
            yield Hit(use, "breaks", words + "; yours returns nothing")
            continue
        if own is not None and _types(own) <= new:
            continue  # it returns what upstream now promises
        if own is None:
            yield Hit(use, "check" if widened or narrowed else "breaks",
                      words + ("; yours has no return annotation: check what it returns" if narrowed else ""))
        else:
            yield Hit(use, "check" if widened else "breaks", f"{words}; yours returns {own}")


def _types(annotation: str) -> frozenset[str]:
    """The type names an annotation is made of, each without its module (``torch.Tensor`` and ``Tensor`` are one)."""
    return type_names(_QUALIFIER.sub("", annotation))


#: An annotation that admits ``None`` (or any value: nothing to say of what returns nothing).
_NONE = re.compile(r"\b(?:None|Optional|Any|object)\b")
_QUALIFIER = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")


def _signature(change: Change, ctx: Context) -> Iterator[Hit]:
    """A changed signature: overrides and patches that no longer fit, calls that pass what is gone or miss
    what is now required. A constructor's (``C.__init__``) is matched against calls ``C(...)`` too."""
    sig = SignatureChange.of(change)
    symbol = change.symbol
    uses = list(_exact(change, ctx))
    cls, _, leaf = symbol.rpartition(".")
    if leaf == "__init__" and cls:
        uses += [u for u in ctx.table.named(cls.rsplit(".", 1)[-1])
                 if u.how == "calls" and matches(u, ctx.prefixes, cls, deeper=False) is not None]
    field, unseen = FIELD_ADDED in change.detail, KIND_UNSEEN in change.detail
    for use in uses:
        if field and (use.how != "calls" or SPREAD in use.detail):
            continue  # only a call misses a field; what ``**kwargs`` carry may hold it
        severity = signature_severity(use, sig)
        if severity is None:
            continue
        words = change.detail or sig.words
        if unseen and severity == "breaks":
            severity = "check"  # a bare annotation in a plain class is no parameter
        if severity == "breaks" and use.how == "calls" and SPREAD in use.detail:
            severity = "check"  # what ``*args``/``**kwargs`` carry cannot be read: it may pass what is needed
            words += "; your call spreads *args or **kwargs"
        if severity == "breaks" and use.how == "overrides" and _own_callers(use, sig, ctx):
            # the only upstream calls passing it are in methods this class overrides too: its own copies call it
            severity = "check"
            words += f"; {use.local} overrides {' and '.join(sig.callers)} too"
        elif severity == "breaks" and use.how == "overrides" and _private_callers(use, sig, ctx):
            severity = "check"
            words += f"; upstream passes it only from its private {' and '.join(sig.callers)}, which yours never calls"
        elif severity == "breaks" and use.how == "overrides" and leaf == "__init__" \
                and not _built_by_upstream(change, ctx) \
                and signature_severity(use, replace(sig, passed=())) != "breaks":
            severity = "check"  # what breaks it is only what upstream passes, and that never builds a subclass
            words += _OWN_BUILD.format(cls.rsplit(".", 1)[-1])
        if severity == "check" and use.how in ("overrides", "patches") and sig.added \
                and not sig.removed and not sig.added_required and "**" not in use.detail:
            words += "; no upstream call passes it yet, yours does not take it"
        yield Hit(use, severity, f"{symbol}({words})" if words else symbol)


def _own_callers(use: Use, sig: SignatureChange, ctx: Context) -> bool:
    """Whether a break of an override comes only from parameters upstream passes from its own class's methods
    (``self.m(…)`` in ``C.a``), and the overriding class overrides every such ``C.a`` as well."""
    if not sig.callers or sig.removed or sig.added_required or not set(sig.added) & set(sig.passed):
        return False
    return all(any(u.how == "overrides" and u.path == use.path and u.local == use.local
                   for u in ctx.table.named(caller.rsplit(".", 1)[-1])) for caller in sig.callers)


def _private_callers(use: Use, sig: SignatureChange, ctx: Context) -> bool:
    """Whether a break of an override comes only from parameters upstream passes from private methods of its own
    class (``self.m(…)`` in ``C._a``) that the downstream neither calls nor overrides: whether upstream's own
    flow reaches such a helper for a plugin (which often replaces the worker or runner around it) is unknown."""
    if not sig.callers or sig.removed or sig.added_required or not set(sig.added) & set(sig.passed):
        return False
    leaves = {caller.rsplit(".", 1)[-1] for caller in sig.callers}
    if not all(leaf.startswith("_") and not leaf.endswith("__") for leaf in leaves):
        return False
    return not any(u.symbol.endswith("." + leaf) and u.how in ("calls", "overrides", "patches")
                   for leaf in leaves for u in ctx.table.named(leaf))


def _body(change: Change, ctx: Context) -> Iterator[Hit]:
    """A changed body of something the downstream overrides or replaces: a check. One that now runs work upstream
    moved out of other functions (``moved_from``) breaks an override that does not call the base's, unless the
    downstream overrides or patches one of those old homes itself (its own copy of the work)."""
    moved = " and ".join(change.moved_from)
    own_copy = bool(change.moved_from) and _keeps_old_home(change, ctx)
    for use in _exact(change, ctx, "overrides", "patches"):
        if not moved:
            yield Hit(use, "check", change.symbol)
        elif use.how == "overrides" and CALLS_SUPER not in use.detail and not own_copy:
            yield Hit(use, "breaks", f"{change.symbol} now runs what upstream moved out of {moved}; yours does not "
                      "call the base's, so it no longer runs")
        else:
            yield Hit(use, "check", f"{change.symbol} now runs what upstream moved out of {moved}"
                      + ("; you replace that function yourself" if own_copy else ""))


def _keeps_old_home(change: Change, ctx: Context) -> bool:
    """Whether the downstream overrides or patches a function a body fact's work moved out of (``vllm.a.*.f``
    matches any class of ``vllm.a``): it runs its own copy of that work."""
    for old in change.moved_from:
        pattern = _wildcard(old)
        if any(u.how in ("overrides", "patches") and pattern.fullmatch(u.symbol)
               for u in ctx.table.named(old.rsplit(".", 1)[-1])):
            return True
    return False


def _abstract(change: Change, ctx: Context) -> Iterator[Hit]:
    """A new abstract method: each downstream subclass that does not define it breaks (it can no longer be
    made); one that now only raises ``NotImplementedError``: each such subclass is told to check."""
    if "." not in change.symbol:
        return
    cls, method = change.symbol.rsplit(".", 1)
    # a class out of a patch's sight (``*``): any class of the fact's module or its package's re-exports
    prefixes = ctx.prefixes[:2] if cls == WILDCARD else ctx.prefixes
    owners = {u.local for u in ctx.table.named(method)
              if u.how == "overrides" and matches(u, prefixes, change.symbol, deeper=False) is not None}
    subclasses = list(dict.fromkeys(u for p in prefixes for u in ctx.table.under(p))) if cls == WILDCARD \
        else ctx.table.named(cls.rsplit(".", 1)[-1])
    for use in subclasses:
        if use.how == "subclasses" and use.local not in owners \
                and matches(use, prefixes, cls, deeper=False) is not None:
            # @abstractmethod: the subclass can no longer be made; raise NotImplementedError: it fails only
            # where upstream calls it, often a feature some platforms never reach: told, as a check, unless upstream
            # calls it on an instance of the class with no fallback (``needed_by``: prdigest.collect.facts.hooks)
            hard = change.public and (UNIMPLEMENTED not in change.detail or bool(change.needed_by))
            callers = ", ".join(n.rpartition(".")[2] for n in change.needed_by)
            words = f"{change.symbol}; upstream calls it in {callers}, yours does not define it" if callers \
                else change.symbol
            yield Hit(use, "breaks" if hard else "check", words)  # the reader's line: "adds abstract X"


def _added(change: Change, ctx: Context) -> Iterator[Hit]:
    """A new upstream method that a downstream subclass already defines: it now overrides it. One upstream calls on
    instances of its class and that sets attributes of objects named after their class, which upstream's own
    subclasses set before in their overrides of another of the class's methods (``sets``, ``moved_from``:
    prdigest.collect.facts.newhooks), breaks a subclass that does not define it where its overrides of those
    methods set or read one of them (the index's ``member`` uses): upstream's default now sets it again, after or
    beside them."""
    if "." not in change.symbol:
        return
    defined = set()
    for use in _exact(change, ctx, "overrides"):
        defined.add((use.path, use.local))
        yield Hit(use, "check", change.symbol)
    if change.sets and change.needed_by and change.public:
        yield from _reset(change, ctx, defined)


def _reset(change: Change, ctx: Context, defined: set[tuple[str, str]]) -> Iterator[Hit]:
    """The subclasses, not among ``defined`` (path, class), of a new hook's class whose overrides of the methods
    the hook's work moved out of set or read what the hook sets: at the subclass statement (the fix is a method in
    its body). A class out of a patch's sight (``*``): any class of the fact's module or its package."""
    cls, _, method = change.symbol.rpartition(".")
    prefixes = ctx.prefixes[:2] if cls == WILDCARD else ctx.prefixes
    candidates = [u for p in prefixes for u in ctx.table.under(p)] if cls == WILDCARD \
        else ctx.table.named(cls.rsplit(".", 1)[-1])
    callers = ", ".join(n.rpartition(".")[2] for n in change.needed_by)
    homes = {n.rpartition(".")[2] for n in change.moved_from}  # the methods upstream's own subclasses set it in
    for sub in dict.fromkeys(candidates):
        if sub.how != "subclasses" or (sub.path, sub.local) in defined \
                or matches(sub, prefixes, cls, deeper=False) is None:
            continue
        scopes = {u.scope for u in ctx.table.under(sub.symbol) if u.how == "overrides" and u.path == sub.path
                  and u.local == sub.local and u.symbol.rpartition(".")[2] in homes}
        touched = sorted({(u.scope, u.local) for name in change.sets for u in ctx.table.named(name.split(".")[-1])
                          if u.how == "member" and u.symbol == f".{name}" and u.path == sub.path
                          and u.scope in scopes})
        if touched:
            scope, member = touched[0]
            yield Hit(sub, "breaks", f"{change.symbol}: upstream now calls it ({callers}) and it sets {member}, which "
                      f"your {scope} sets or reads; {sub.local} does not define {method}")


def _bases(change: Change, ctx: Context) -> Iterator[Hit]:
    """Changed base classes: a downstream subclass is told to check (an import of the class is not)."""
    for use in _exact(change, ctx, "subclasses"):
        yield Hit(use, "check", f"{change.symbol}({change.after})" if change.after else change.symbol)


#: The matcher of each fact kind; kinds no Python import can reach (pins, kernels, tests, docs) have none.
MATCHERS: dict[str, Matcher] = {
    "file-deleted": _file_gone, "file-renamed": _file_gone, "moved": _moved, "renamed": _renamed,
    "removed": _removed, "env": _setting, "argument": _setting, "config": _setting, "attribute": _attribute,
    "passes": _passes, "returns": _returns, "signature": _signature, "body": _body, "abstract": _abstract,
    "added": _added, "bases": _bases,
}
#: Kinds whose matcher reads no module of the fact's own (the module is in ``before``/``path`` itself).
MODULE_KINDS = frozenset({"file-deleted", "file-renamed"})


def _module_users(table: UseTable, module: str) -> list[Use]:
    """Uses of a module's names (``vllm.a.b.X``) found under the module's last part or any name (rare: only
    for deleted and renamed files)."""
    last = module.rsplit(".", 1)[-1]
    return [u for u in table.under(module) if last not in u.symbol.split(".")[1:]]


def _replacement_severity(use: Use, own: Signature, sig: SignatureChange) -> ImpactSeverity:
    """An override or an installed replacement whose parameters are known (``own``) and do not fit: it breaks
    only where a call cannot bind (upstream must pass a new parameter, or passes one, it does not take; it
    requires one upstream no longer passes; it still takes a dropped one and hands it to the base's method);
    otherwise upstream's calls still bind, and it is a check."""
    def takes(name: str) -> bool:
        return own.variadic_kw or name in own.names

    if any(not takes(n) for n in sig.added_required) or any(n in sig.removed for n in own.required):
        return "breaks"
    if any(not takes(n) for n in set(sig.added) & set(sig.passed)):
        return "breaks"
    if use.how == "overrides" and CALLS_SUPER in use.detail and any(n in own.names for n in sig.removed):
        return "breaks"  # most often passed on: ``super().f(x, dtype)``
    return "check"


def signature_severity(use: Use, sig: SignatureChange) -> ImpactSeverity | None:
    """How a signature change hits one use: an override or a patch must take what upstream now passes (none
    when it already fits the new signature); a call breaks on a parameter it passes that is gone (a check when
    the new ``*args, **kwargs`` still accept it), or a new required one; a default it relies on is a check."""
    if use.how in ("overrides", "patches"):
        if fits(use.detail, sig):
            return None
        own = Signature.parse(use.detail.split(";", 1)[0]) if use.detail else None
        if own is not None:
            return _replacement_severity(use, own, sig)
        if sig.removed or sig.added_required:
            return "breaks"
        if sig.added:
            # An override or replacement without **kwargs fails once upstream passes the new parameter: it
            # breaks when an upstream call site already passes it, else it is a check (upstream may later).
            if "**" in use.detail:
                return "check"
            return "breaks" if set(sig.added) & set(sig.passed) else "check"
        return "check" if sig.defaults else None
    if use.how == "calls":
        keywords, positional = call_shape(use.detail)
        new_positional = sig.new.positional if sig.new is not None else ()
        if sig.added_required and not all(n in keywords or (n in new_positional
                                                            and new_positional.index(n) < positional)
                                          for n in sig.added_required):
            return "breaks"
        if sig.shifted(positional):
            return "breaks"  # its positional arguments now land on other parameters
        for name in sig.removed:
            if name in keywords or (name in sig.before and sig.before.index(name) < positional):
                # passed by position into a place a new parameter took: it binds, to be checked
                in_place = name not in keywords and sig.replaced_in_place(name)
                return "check" if sig.absorbed or in_place else "breaks"
        if sig.removed_required and (keywords or positional):
            return "breaks"  # every call that worked passed it: by keyword now unexpected, by position shifted
        if sig.removed and not keywords and not positional:
            return None
        if sig.removed:
            return "check"
        if any(name not in keywords for name in sig.defaults):
            return "check"
        return None
    if use.how in ("imports", "reads"):
        return "check" if (sig.removed and not sig.absorbed) or sig.added_required else None
    return None
