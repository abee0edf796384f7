"""Upstream code facts matched against a downstream's uses: what breaks, and what to check.

A fact names a symbol within a module file (``vllm/a/b.py`` + ``FusedMoE.forward``); the downstream reaches
it as ``vllm.a.b.FusedMoE.forward`` or through a package that re-exports it (``vllm.a.FusedMoE``, an
``__init__`` above the module). Severity: a fact that removes, renames or moves something used, or changes
the signature of something called, overridden or patched, ``breaks``; a changed body of something overridden
or patched, a new abstract method on a subclassed class, changed bases, a changed default the downstream
relies on, ``check``. A parameter added with a default to an overridden or patched function breaks only when
the fact says an upstream call passes it (``(upstream passes eps)``, `` from C.a`` when only ``self`` calls in
``C.a`` do: still breaks, as a downstream's own ``C.a`` is most often upstream's copied and follows it;
`` to an untyped receiver`` when only calls on a receiver of unknown type do: also breaks), else ``check``. The
facts engine counts a method's call only on a receiver known to be of the method's own class hierarchy, or on
an untyped receiver when no other class of the changed files has a method of that name
(prdigest.collect.facts.pyapi.passed_parameters). Through instances: a removed data attribute breaks a read of
it through the class's name, and an ``obj.x`` read on an object of unknown type (the index's ``attribute``
uses, by name) when the fact says no class of the changed files keeps the name; an attribute a base's
``__init__`` newly sets breaks a subclass whose own ``__init__`` neither calls the base's nor sets it; a return
type that changed breaks an override or a patch (``check`` when it only widens); a keyword upstream now passes to
a constructor breaks a subclass ``__init__`` that does not take it. Kinds that no Python import can reach
(pins, kernels, tests, docs) match nothing.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE, type_names
from prdigest.connect.impact.index import OWN_INIT, Use
from prdigest.kernel.factlines import unique
from prdigest.kernel.models import Change, Impact, ImpactSeverity
from prdigest.kernel.pymodule import is_python, module_of

#: Shown as ``Impact.how`` (``reads`` is a use through the name, like a call).
HOW = {"imports": "imports", "subclasses": "subclasses", "overrides": "overrides", "patches": "patches",
       "calls": "calls", "reads": "calls", "attribute": "calls"}
_SEVERITY_RANK = {"breaks": 2, "check": 1}
#: A class name (``FusedMoE``) as the step before a method in a dotted name.
WILDCARD = "*"


@dataclass(frozen=True)
class UseTable:
    """A downstream's uses keyed by their last dotted component, for matching one fact in a few lookups."""

    name: str
    by_tail: dict[str, list[Use]]
    #: The upstream's import packages as this downstream sees them (``vllm``).
    upstream: tuple[str, ...] = ()

    @classmethod
    def of(cls, name: str, uses: Iterable[Use], upstream: Sequence[str] = ()) -> "UseTable":
        table: dict[str, list[Use]] = defaultdict(list)
        for use in uses:
            for part in set(use.symbol.split(".")[1:]):
                table[part].append(use)
        return cls(name, dict(table), tuple(upstream))

    def named(self, name: str) -> list[Use]:
        return self.by_tail.get(name, [])


@dataclass(frozen=True)
class Signature:
    """Parameters of a signature as the facts write it: ``(self, x, y=1, *, z)`` or ``x, y=1``."""

    names: tuple[str, ...]
    defaults: dict[str, str]
    variadic_kw: bool

    @classmethod
    def parse(cls, text: str) -> "Signature | None":
        text = text.strip()
        if "(" in text:
            text = text[text.index("(") + 1:]
            depth, end = 1, len(text)
            for i, ch in enumerate(text):
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth == 0:
                    end = i
                    break
            text = text[:end]
        elif not text or not re.match(r"[\w*/]", text):
            return None
        names, defaults, kw = [], {}, False
        for raw in _split_top(text):
            raw = raw.strip()
            if not raw or raw in ("*", "/"):
                continue
            if raw.startswith("**"):
                kw = True
                continue
            if raw.startswith("*"):
                continue
            name, _, default = raw.partition("=")
            name = name.split(":")[0].strip()
            if name in ("self", "cls") or not name.isidentifier():
                continue
            names.append(name)
            if _:
                defaults[name] = default.strip()
        return cls(tuple(names), defaults, kw)


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out


@dataclass(frozen=True)
class SignatureChange:
    """What a signature fact did to the parameters."""

    added: tuple[str, ...] = ()
    added_required: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    defaults: tuple[str, ...] = ()
    #: The parameters' positions before the change (for positional calls).
    before: tuple[str, ...] = ()
    #: Of the added parameters, those an upstream call site passes (the facts engine says so in ``detail``).
    passed: tuple[str, ...] = ()
    #: When every call passing them is ``self.m(...)`` in the fact's class: those methods (``Runner.a``), for
    #: the reader; an override of them is no reason for ``check`` (a downstream copy of ``C.a`` follows it).
    callers: tuple[str, ...] = ()

    @property
    def breaking(self) -> bool:
        return bool(self.added or self.removed)

    @property
    def words(self) -> str:
        parts = [f"+{n}" for n in self.added] + [f"-{n}" for n in self.removed] + [f"{n}=…" for n in self.defaults]
        return ", ".join(parts)

    @classmethod
    def of(cls, change: Change) -> "SignatureChange":
        detail, passed, callers = change.detail, (), ()
        said = _PASSES.search(detail)
        if said:
            passed = tuple(said[1].split(" and "))
            callers = tuple(said[2].split(" and ")) if said[2] else ()
            detail = detail[:said.start()] + detail[said.end():]
        old, new = Signature.parse(change.before), Signature.parse(change.after)
        if old is not None and new is not None and (old.names or new.names):
            added = tuple(n for n in new.names if n not in old.names)
            return cls(added=added, added_required=tuple(n for n in added if n not in new.defaults),
                       removed=tuple(n for n in old.names if n not in new.names),
                       defaults=tuple(n for n in new.names if n in old.names and n in new.defaults
                                      and old.defaults.get(n) != new.defaults[n]),
                       before=old.names, passed=passed, callers=callers)
        added, required, removed, defaults = [], [], [], []
        for token in re.split(r"[,;\s]+", detail):
            if not token:
                continue
            if token.startswith("+"):
                name = token[1:].split("=")[0]
                added.append(name)
                if "=" not in token:
                    required.append(name)
            elif token.startswith("-"):
                removed.append(token[1:].split("=")[0])
            elif "=" in token or "→" in token:
                defaults.append(re.split(r"[=→]", token)[0])
        return cls(tuple(added), tuple(required), tuple(removed), tuple(defaults), passed=passed, callers=callers)


#: What the facts engine appends to a signature fact's detail (prdigest.collect.facts.pyapi.PASSES).
_PASSES = re.compile(r" \(upstream passes ([\w ]+?)(?: from ([\w. ]+)| to an untyped receiver)?\)")


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


def _matches(use: Use, prefixes: Sequence[str], symbol: str, deeper: bool) -> str | None:
    """The use's symbol relative to the fact's (``""`` exact, ``".attr"`` deeper), or None."""
    for prefix in prefixes:
        head = f"{prefix}.{symbol}" if symbol else prefix
        if WILDCARD in head:
            pattern = re.escape(head).replace(re.escape(WILDCARD), r"[A-Za-z_]\w*")
            m = re.match(pattern + r"(?=\.|$)", use.symbol)
            if m:
                rest = use.symbol[m.end():]
                return rest if (deeper or not rest) else None
            continue
        if use.symbol == head:
            return ""
        if deeper and use.symbol.startswith(head + "."):
            return use.symbol[len(head):]
    return None


# --- the match --------------------------------------------------------------------------------------------------


def _fact_words(change: Change, text: str) -> str:
    """``Impact.fact``: the fact's kind, a colon, what it did (``renamed: FusedMoE → FusedMoEFactory``)."""
    return f"{change.kind}: {text}"


def match_change(change: Change, table: UseTable, upstream: Sequence[str], *, number: int = 0,
                 partial: bool = False) -> list[Impact]:
    """The impacts of one upstream fact on one downstream (``table``)."""
    if change.kind in ("dependency", "kernel", "tests"):
        return []
    module = fact_module(change.path)
    impacts: list[Impact] = []

    def hit(use: Use, severity: ImpactSeverity, words: str, symbol: str = "") -> None:
        if not change.public and severity == "breaks" and use.how == "overrides":
            severity = "check"  # a private method of the same name may be the downstream's own helper
        impacts.append(Impact(downstream=table.name, path=use.path, line=use.line, symbol=symbol or use.symbol,
                              how=HOW[use.how], severity=severity, fact=_fact_words(change, words),  # type: ignore[arg-type]
                              number=number, partial=partial))

    kind = change.kind
    if kind in ("file-deleted", "file-renamed"):
        old = fact_module(change.before if kind == "file-renamed" and change.before else change.path)
        if old is None:
            return []
        new = fact_module(change.after or change.path) if kind == "file-renamed" else None
        words = f"{old} → {new}" if new and new != old else old
        for use in table.named(old.rsplit(".", 1)[-1]) + _module_users(table, old):
            if use.symbol == old or use.symbol.startswith(old + "."):
                hit(use, "breaks", words)
        return _unique(impacts)
    if module is None:
        return []
    symbol = change.symbol
    if kind == "moved":
        if change.detail == "re-exported":  # the old module still imports it: the old import works
            return []
        old = _module_of(change.before) or module
        new = _module_of(change.after) or ""
        name = symbol.split(".")[0]
        for use in table.named(name):
            if _matches(use, [old], symbol, deeper=True) is not None:
                hit(use, "breaks", f"{symbol} → {new}.{symbol}" if new else symbol)
        return _unique(impacts)
    if kind == "renamed":
        old_name = _name(change.before) if change.before else symbol
        new_name = _name(change.after) if change.after else symbol
        if "." in symbol and "." not in old_name:  # a method: the class is the symbol's
            old_name = f"{symbol.rsplit('.', 1)[0]}.{old_name}"
        prefixes = _prefixes(module, upstream, ancestors=True)
        for use in table.named(old_name.rsplit(".", 1)[-1]):
            if _matches(use, prefixes, old_name, deeper=True) is not None:
                hit(use, "breaks", f"{old_name} → {new_name.rsplit('.', 1)[-1]}")
        return _unique(impacts)
    prefixes = _prefixes(module, upstream, ancestors=True)
    tail = symbol.rsplit(".", 1)[-1]
    if kind in ("env", "argument", "config"):
        _setting(change, table, prefixes, hit)
        return _unique(impacts)
    if kind == "attribute":
        _attribute(change, table, prefixes, f"{module}.{symbol}", hit)
        return _unique(impacts)
    if kind == "passes":
        keywords = [k.strip() for k in change.detail.split(",") if k.strip()]
        for use in table.named(tail):
            if use.how != "overrides" or _matches(use, prefixes, symbol, deeper=False) is None:
                continue
            taken = Signature.parse(use.detail.split(";", 1)[0])
            if taken is None or taken.variadic_kw:
                continue
            missing = [k for k in keywords if k not in taken.names]
            if missing:
                hit(use, "breaks", f"{symbol}: upstream now passes {', '.join(missing)}, yours does not take it")
        return _unique(impacts)
    if kind == "returns":
        widened = type_names(change.before) <= type_names(change.after)
        for use in table.named(tail):
            if use.how in ("overrides", "patches") and _matches(use, prefixes, symbol, deeper=False) is not None:
                hit(use, "check" if widened else "breaks", f"{symbol} returns {change.after} (was {change.before})")
        return _unique(impacts)
    if kind == "removed":
        for use in table.named(tail):
            if _matches(use, prefixes, symbol, deeper=True) is not None:
                hit(use, "breaks", symbol)
        return _unique(impacts)
    if kind == "signature":
        sig = SignatureChange.of(change)
        for use in table.named(tail):
            if _matches(use, prefixes, symbol, deeper=False) is None:
                continue
            severity = _signature_severity(use, sig)
            if severity is not None:
                words = change.detail or sig.words
                if severity == "check" and use.how in ("overrides", "patches") and sig.added \
                        and not sig.removed and not sig.added_required and "**" not in use.detail:
                    words += "; no upstream call passes it yet, yours does not take it"
                hit(use, severity, f"{symbol}({words})" if words else symbol)
        return _unique(impacts)
    if kind == "body":
        for use in table.named(tail):
            if use.how in ("overrides", "patches") and _matches(use, prefixes, symbol, deeper=False) is not None:
                hit(use, "check", symbol)
        return _unique(impacts)
    if kind in ("abstract", "added") and "." in symbol:
        cls, method = symbol.rsplit(".", 1)
        owners = {u.local for u in table.named(method)
                  if u.how == "overrides" and _matches(u, prefixes, symbol, deeper=False) is not None}
        if kind == "abstract":
            for use in table.named(cls.rsplit(".", 1)[-1]):
                if use.how == "subclasses" and use.local not in owners \
                        and _matches(use, prefixes, cls, deeper=False) is not None:
                    hit(use, "check", symbol)
        else:  # a new upstream method the downstream's subclass already defines: it now overrides it
            for use in table.named(method):
                if use.how == "overrides" and _matches(use, prefixes, symbol, deeper=False) is not None:
                    hit(use, "check", symbol)
        return _unique(impacts)
    if kind == "bases":
        for use in table.named(tail):
            if use.how == "subclasses" and _matches(use, prefixes, symbol, deeper=False) is not None:
                hit(use, "check", f"{symbol}({change.after})" if change.after else symbol)
        return _unique(impacts)
    return []


def _setting(change: Change, table: UseTable, prefixes: Sequence[str],
             hit: Callable[[Use, ImpactSeverity, str], None]) -> None:
    """An environment variable, argument or config field (``detail``: removed | renamed | default | added; the
    downstream reads it through the module or class: ``envs.VLLM_X``)."""
    detail = change.detail
    removed = detail == "removed" or (not detail and change.before and not change.after)
    renamed = detail == "renamed" or detail.startswith("renamed")
    name = (change.before if renamed and change.before else change.symbol).rsplit(".", 1)[-1]
    symbol = change.before if renamed and change.before else change.symbol
    if detail == "added" or (not detail and not change.before):
        return
    found: list[Use] = [u for u in table.named(name) if _matches(u, prefixes, symbol, deeper=False) is not None]
    for use in found:
        if removed:
            hit(use, "breaks", symbol)
        elif renamed:
            hit(use, "breaks", f"{symbol} → {change.after.rsplit('.', 1)[-1]}")
        elif use.how != "imports":
            hit(use, "check", f"{symbol}: {change.before} → {change.after}")


def _attribute(change: Change, table: UseTable, prefixes: Sequence[str], full: str,
               hit: Callable[..., None]) -> None:
    """A data attribute of an upstream class. Removed: a read of it through the class's name (``Status.X``) or
    a patch of it breaks; so does a read ``obj.x`` on an object of unknown type when no class of the changed
    files keeps a member of that name (the facts say so) and the downstream defines no attribute of that name
    (the index leaves those out): by name, not by type. Added in the class's ``__init__``: a downstream
    subclass whose own ``__init__`` does not call the base's and never sets it lacks it."""
    symbol = change.symbol
    cls, _, leaf = symbol.rpartition(".")
    if change.detail.startswith("removed"):
        for use in table.named(leaf):
            if use.how != "attribute" and _matches(use, prefixes, symbol, deeper=True) is not None:
                hit(use, "breaks", f"{symbol} removed")
            elif use.how == "attribute" and ATTRIBUTE_GONE in change.detail and change.public:
                hit(use, "breaks", f"{symbol} removed; `.{leaf}` matched by name: no class of the change keeps "
                    f"`{leaf}`", full)
        return
    if change.detail == "added":
        for use in table.named("__init__"):
            if use.how == "overrides" and OWN_INIT in use.detail \
                    and _matches(use, prefixes, f"{cls}.__init__", deeper=False) is not None \
                    and leaf not in use.detail.split(OWN_INIT, 1)[1].split(","):
                hit(use, "breaks", f"{symbol} added: {cls}.__init__ sets it, yours does not call it nor set it",
                    full)


def _module_users(table: UseTable, module: str) -> list[Use]:
    """Uses of a module's names (``vllm.a.b.X``) found under the module's last part or any name (rare: only
    for deleted and renamed files)."""
    last = module.rsplit(".", 1)[-1]
    return [u for uses in table.by_tail.values() for u in uses
            if u.symbol.startswith(module + ".") and last not in u.symbol.split(".")[1:]]


def _signature_severity(use: Use, sig: SignatureChange) -> ImpactSeverity | None:
    """How a signature change hits one use: an override or a patch must take what upstream now passes; a call
    breaks on a parameter it passes that is gone, or a new required one; a default it relies on is a check."""
    if use.how in ("overrides", "patches"):
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
        keywords, positional = _call_shape(use.detail)
        if sig.added_required:
            return "breaks"
        for name in sig.removed:
            if name in keywords or (name in sig.before and sig.before.index(name) < positional):
                return "breaks"
        if sig.removed and not keywords and not positional:
            return None
        if sig.removed:
            return "check"
        if any(name not in keywords for name in sig.defaults):
            return "check"
        return None
    if use.how in ("imports", "reads"):
        return "check" if sig.removed or sig.added_required else None
    return None


def _call_shape(detail: str) -> tuple[set[str], int]:
    """``kw=a,b;n=2`` → ({a, b}, 2)."""
    keywords: set[str] = set()
    positional = 0
    for part in detail.split(";"):
        key, _, value = part.partition("=")
        if key == "kw":
            keywords = {k for k in value.split(",") if k}
        elif key == "n" and value.isdigit():
            positional = int(value)
    return keywords, positional


def _unique(impacts: list[Impact]) -> list[Impact]:
    return unique(impacts, key=lambda i: (i.path, i.line, i.symbol, i.how))


def match_changes(changes: Iterable[Change], table: UseTable, upstream: Sequence[str], *, number: int = 0,
                  partial: bool = False) -> list[Impact]:
    """Every impact of a PR's facts on one downstream: one per downstream line and use, the most severe
    fact kept; breaks first, then by path and line."""
    best: dict[tuple[str, int, str, str], Impact] = {}
    for change in changes:
        for impact in match_change(change, table, upstream, number=number, partial=partial):
            key = (impact.path, impact.line, impact.symbol, impact.how)
            kept = best.get(key)
            if kept is None or _SEVERITY_RANK[impact.severity] > _SEVERITY_RANK[kept.severity]:
                best[key] = impact
    return sorted(best.values(), key=lambda i: (-_SEVERITY_RANK[i.severity], i.path, i.line, i.symbol))
