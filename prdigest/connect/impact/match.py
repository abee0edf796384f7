"""Upstream code facts matched against a downstream's uses: what breaks, and what to check.

A fact names a symbol within a module file (``vllm/a/b.py`` + ``FusedMoE.forward``); the downstream reaches
it as ``vllm.a.b.FusedMoE.forward`` or through a package that re-exports it (``vllm.a.FusedMoE``, an
``__init__`` above the module). Severity: a fact that removes, renames or moves something used, or changes
the signature of something called, overridden or patched, ``breaks``; a changed body of something overridden
or patched, a new abstract method on a subclassed class, changed bases, a changed default the downstream
relies on, ``check``. A parameter added with a default to an overridden or patched function breaks only when
the fact says an upstream call passes it (``Change.passed``; when only ``self`` calls in ``C.a`` do,
``Change.callers``, an override whose class overrides ``C.a`` too is a ``check``: its own ``C.a`` calls it; when
only calls on a receiver of unknown type do, ``Change.receiver``, it still breaks), else ``check``; an override
that already fits the new signature is not flagged, and a parameter the new ``*args, **kwargs`` absorb is a
``check`` for a call that passes it. An override, or a patch whose installed function the index can read, breaks
only where upstream's calls cannot bind to it (signature.py's fit, matchers._replacement_severity); a parameter
passed only from a private upstream helper the downstream never calls is a ``check``, and so is a call that
spreads ``*args``/``**kwargs`` (``super().f(…)`` calls are calls of the base's method). One flag per upstream fact
and downstream function (a module deleted, renamed or a name moved: one per downstream file, at its import). The
facts engine counts a method's call only on a receiver known to be of the method's own class hierarchy, or on
an untyped receiver when no other class of the changed files has a method of that name
(prdigest.collect.facts.pyapi.passed_parameters). Through instances: a removed data attribute breaks a read of
it through the class's name, and an ``obj.x`` read on an object of unknown type (the index's ``attribute``
uses, by name) when the fact says no class of the changed files keeps the name; a method called on an object of
unknown type (the index's ``method`` uses, by name) breaks when the method was removed or renamed and no class
of the upstream's tree keeps a method of that name (prdigest.collect.facts.hierarchy; a check when only the
changed files were read, or for a builtin's name); an attribute a base's
``__init__`` newly sets breaks a subclass whose own ``__init__`` neither calls the base's nor sets it; a return
type that changed breaks an override or a patch annotated with another type (``check`` when it only widens, or
without an annotation when it narrows; nothing when the annotation is within the new type), and a call that uses
the value of a function that now returns nothing (``-> bool`` → ``-> None``); a keyword upstream now
passes to a constructor breaks a subclass ``__init__`` that does not take it, unless every such call builds the
upstream's own class by name and the downstream does not patch the class over (``Change.constructed``: a
``check``); an override of a removed method that the downstream calls itself and that does not call the base's is
a ``check``. A downstream class registered by its dotted path in a slot (``worker_cls``) that subclasses nothing of
the upstream's meets a method fact whose class that slot expects (``Change.registered``) as an override would.
Kinds that no Python import can reach (pins, kernels, tests, docs) match nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from prdigest.collect.facts.inheritors import heir_symbols
from prdigest.connect.impact.deprecated import DEPRECATIONS
from prdigest.connect.impact.index import REGISTERED
from prdigest.connect.impact.matchers import (
    MATCHERS,
    MODULE_KINDS,
    WILDCARD,
    Context,
    Hit,
    Matcher,
    UseTable,
    fact_module,
)
from prdigest.connect.impact.obligations import OBLIGATIONS
from prdigest.connect.impact.signature import Signature, SignatureChange
from prdigest.connect.impact.typing_only import TYPING_ONLY
from prdigest.kernel.models import Change, Impact, ImpactHow

__all__ = ["HOW", "WILDCARD", "Signature", "SignatureChange", "UseTable", "fact_module", "match_change",
           "match_changes"]

#: Shown as ``Impact.how`` (``reads`` is a use through the name, like a call).
HOW: dict[str, ImpactHow] = {"imports": "imports", "subclasses": "subclasses", "overrides": "overrides",
                             "patches": "patches", "calls": "calls", "reads": "calls", "attribute": "calls",
                             "method": "calls", "member": "calls"}
_SEVERITY_RANK = {"breaks": 2, "check": 1}
#: Which use of a file speaks for a module-level fact there (the import is the line to fix).
_HOW_RANK = {"imports": 0, "subclasses": 1, "patches": 2, "overrides": 3, "calls": 4, "reads": 5, "attribute": 6,
             "method": 7, "member": 8}
#: Kinds that make a name unreachable: one flag per downstream file says it (fix the import), not one per use.
_GONE = MODULE_KINDS | {"moved"}
#: Every kind's matcher: the API's (matchers.py), the obligations' (obligations.py) and deprecations'.
_MATCHERS = {**MATCHERS, **OBLIGATIONS, **DEPRECATIONS}


def _fact_words(change: Change, text: str) -> str:
    """``Impact.fact``: the fact's kind, a colon, what it did (``renamed: FusedMoE → FusedMoEFactory``)."""
    return f"{change.kind}: {text}"


def _one_per_scope(change: Change, hits: list[Hit]) -> list[Hit]:
    """One hit per downstream function (module level counts as one) for a fact, the most severe and then the
    first; for a module deleted, renamed or a name moved, or a module-level name removed (a class: every
    override of its methods echoes the import), one per downstream file, its import first."""
    per_file = change.kind in _GONE or (change.kind == "removed" and "." not in change.symbol)

    def rank(hit: Hit) -> tuple[int, int, int]:
        return -_SEVERITY_RANK[hit.severity], _HOW_RANK[hit.use.how] if per_file else 0, hit.use.line

    best: dict[tuple[str, str], Hit] = {}
    for hit in hits:
        key = (hit.use.path, "" if per_file else hit.use.scope)
        kept = best.get(key)
        if kept is None or rank(hit) < rank(kept):
            best[key] = hit
    return list(best.values())


def _registered(change: Change, matcher: Matcher, table: UseTable, upstream: Sequence[str], module: str) -> list[Hit]:
    """The fact's method as a downstream class registered by name in a slot the fact's class fills (``worker_cls``:
    ``<registered>.worker_cls.profile``, index.py) meets it: as an override of the class upstream expects there."""
    cls, _, leaf = change.symbol.rpartition(".")
    out: list[Hit] = []
    for slot in change.registered:
        sub = change.model_copy(update={"symbol": f"{slot}.{leaf}", "inherited_by": (), "reexported_by": (),
                                        "registered": ()})
        for h in matcher(sub, Context.of(table, upstream, REGISTERED)):
            words = h.words.replace(sub.symbol, change.symbol)
            out.append(Hit(h.use, h.severity, f"{words} (yours is registered as {slot}: {h.use.local} implements "
                           f"{cls} by its method names)", f"{module}.{change.symbol}"))
    return out


def match_change(change: Change, table: UseTable, upstream: Sequence[str], *, number: int = 0,
                 partial: bool = False) -> list[Impact]:
    """The impacts of one upstream fact on one downstream (``table``): one per downstream function."""
    matcher = _MATCHERS.get(change.kind)
    module = fact_module(change.path)
    if matcher is None or (module is None and change.kind not in MODULE_KINDS):
        return []
    found = list(matcher(change, Context.of(table, upstream, module or "")))
    for heir_module, heir in heir_symbols(change):  # the method as a class inheriting it names it (``Child.f``)
        sub = change.model_copy(update={"symbol": heir, "inherited_by": ()})
        found += [Hit(h.use, h.severity, f"{h.words} (inherited by {heir.rpartition('.')[0]})", h.symbol)
                  for h in matcher(sub, Context.of(table, upstream, heir_module))]
    for package in change.reexported_by:  # the name as another package re-exports it (``vllm.attention.X``)
        found += [Hit(h.use, h.severity, f"{h.words} (re-exported by {package})", h.symbol)
                  for h in matcher(change, Context.of(table, upstream, package))]
    found += _registered(change, matcher, table, upstream, module or "")
    # imported for the type checker only: no run fails on it (a use at run time in the file still may)
    found = [Hit(h.use, "check", f"{h.words}; imported under TYPE_CHECKING only", h.symbol)
             if h.severity == "breaks" and h.use.how == "imports" and TYPING_ONLY in h.use.detail.split(";") else h
             for h in found]
    hits = _one_per_scope(change, found)
    impacts = []
    for hit in hits:
        severity = hit.severity
        if not change.public and severity == "breaks" and hit.use.how == "overrides" and change.kind != "attribute":
            severity = "check"  # a private method of the same name may be the downstream's own helper
        impacts.append(Impact(downstream=table.name, path=hit.use.path, line=hit.use.line,
                              symbol=hit.symbol or hit.use.symbol, how=HOW[hit.use.how],
                              severity=severity, fact=_fact_words(change, hit.words), number=number,
                              partial=partial))
    return impacts


def match_changes(changes: Iterable[Change], table: UseTable, upstream: Sequence[str], *, number: int = 0,
                  partial: bool = False) -> list[Impact]:
    """Every impact of a PR's facts on one downstream: one per downstream line and use, the most severe
    fact kept; breaks first, then by path and line."""
    best: dict[tuple[str, int, str, str], tuple[tuple[int, int], Impact]] = {}
    found = [(change, match_change(change, table, upstream, number=number, partial=partial)) for change in changes]
    # A module deleted or renamed is said once per downstream file (its import); what the other facts say of
    # the names in it there (each method removed with it) echoes that.
    gone: dict[str, set[str]] = {}
    for change, impacts in found:
        if change.kind in MODULE_KINDS:
            module = fact_module(change.before if change.kind == "file-renamed" and change.before else change.path)
            for impact in impacts:
                gone.setdefault(impact.path, set()).add(f"{module}.")
    for change, impacts in found:
        for impact in impacts:
            if change.kind not in MODULE_KINDS and any(impact.symbol.startswith(m) for m in gone.get(impact.path, ())):
                continue
            key = (impact.path, impact.line, impact.symbol, impact.how)
            # a package's dropped re-export says less than the rename or move behind it, when both hit a line
            rank = (_SEVERITY_RANK[impact.severity], change.detail != "re-export removed")
            kept = best.get(key)
            if kept is None or rank > kept[0]:
                best[key] = (rank, impact)
    return sorted((i for _, i in best.values()),
                  key=lambda i: (-_SEVERITY_RANK[i.severity], i.path, i.line, i.symbol))
