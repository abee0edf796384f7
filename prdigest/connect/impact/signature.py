"""Signatures as the facts write them, what a signature fact did to the parameters, and whether a downstream
override, replacement or call already fits the new one."""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.collect.facts.patchrequired import removed_required
from prdigest.kernel.models import Change, plain_detail


@dataclass(frozen=True)
class Signature:
    """Parameters of a signature as the facts write it: ``(self, x, y=1, *, z)`` or ``x, y=1``."""

    names: tuple[str, ...]
    defaults: dict[str, str]
    variadic_kw: bool
    #: Whether it takes ``*args``.
    variadic: bool = False
    #: The parameters a call can pass by position, in order (those before ``*`` or ``*args``).
    positional: tuple[str, ...] = ()

    @property
    def required(self) -> tuple[str, ...]:
        """The parameters without a default (``self`` and ``cls`` aside)."""
        return tuple(n for n in self.names if n not in self.defaults)

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
        names, defaults, kw, var, positional, starred = [], {}, False, False, [], False
        for raw in _split_top(text):
            raw = raw.strip()
            if not raw or raw in ("*", "/"):
                starred = starred or raw == "*"
                continue
            if raw.startswith("**"):
                kw = True
                continue
            if raw.startswith("*"):
                var = starred = True
                continue
            name, _, default = raw.partition("=")
            name = name.split(":")[0].strip()
            if name in ("self", "cls") or not name.isidentifier():
                continue
            names.append(name)
            if not starred:
                positional.append(name)
            if _:
                defaults[name] = default.strip()
        return cls(tuple(names), defaults, kw, var, tuple(positional))


def _split_top(text: str) -> list[str]:
    out: list[str] = []
    cur: list[str] = []
    depth = 0
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
    #: The new signature, when the fact gives it whole (None when only ``detail`` says what changed).
    new: Signature | None = None
    #: The old signature's positional parameters, in order.
    old_positional: tuple[str, ...] = ()
    #: Removed parameters the old side required, when only a signature's tail was in sight (every call passed them).
    removed_required: tuple[str, ...] = ()

    def shifted(self, count: int) -> bool:
        """Whether a call passing ``count`` arguments by position now binds one of them to another parameter
        (one inserted, removed or moved before it)."""
        if self.new is None or not self.old_positional or not count:
            return False
        count = min(count, len(self.old_positional))  # past the old ones: *args, or a call that never worked
        if self.new.variadic:  # past the new ones they land in the new ``*args``: absorbed, not shifted
            count = min(count, len(self.new.positional))
        new = self.new.positional
        return any(i >= len(new) or (old != new[i] and not self.replaced_in_place(old))
                   for i, old in enumerate(self.old_positional[:count]))

    def replaced_in_place(self, name: str) -> bool:
        """Whether a removed positional parameter's place is taken by an added one (``draft_tokens`` →
        ``decode_query_len``, a rename to the facts): a value passed there by position still binds."""
        if self.new is None or name not in self.removed or name not in self.old_positional:
            return False
        at = self.old_positional.index(name)
        return at < len(self.new.positional) and self.new.positional[at] in self.added

    @property
    def absorbed(self) -> bool:
        """Whether the new signature takes ``*args`` and ``**kwargs``: a removed parameter a caller still passes
        is accepted (and most often passed on), so the call needs a look, not a fix."""
        return self.new is not None and self.new.variadic and self.new.variadic_kw

    @property
    def breaking(self) -> bool:
        return bool(self.added or self.removed)

    @property
    def words(self) -> str:
        parts = [f"+{n}" for n in self.added] + [f"-{n}" for n in self.removed] + [f"{n}=…" for n in self.defaults]
        return ", ".join(parts)

    @classmethod
    def of(cls, change: Change) -> "SignatureChange":
        detail, passed, callers = plain_detail(change.detail), change.passed, change.callers
        old, new = Signature.parse(change.before), Signature.parse(change.after)
        if old is not None and new is not None and (old.names or new.names):
            gained = tuple(n for n in new.names if n not in old.names)
            return cls(added=gained, added_required=tuple(n for n in gained if n not in new.defaults),
                       removed=tuple(n for n in old.names if n not in new.names),
                       defaults=tuple(n for n in new.names if n in old.names and n in new.defaults
                                      and old.defaults.get(n) != new.defaults[n]),
                       before=old.names, passed=passed, callers=callers, new=new, old_positional=old.positional)
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
        return cls(tuple(added), tuple(required), tuple(removed), tuple(defaults), passed=passed, callers=callers,
                   removed_required=removed_required(detail))


def call_shape(detail: str) -> tuple[set[str], int]:
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


def fits(params: str, change: SignatureChange) -> bool:
    """Whether an override or replacement taking ``params`` (the index's ``self,x,y=,**kw``) already fits the
    new signature: it takes every parameter upstream may now pass, and requires none that upstream dropped."""
    own = Signature.parse(params.split(";", 1)[0])
    if own is None:
        return False
    wanted = change.new.names if change.new is not None else change.added
    # only a parameter upstream dropped goes missing: a subclass's own extra ones (``speculator``) are passed by
    # its own callers, never by upstream's
    dropped_required = [n for n in own.required if n in change.removed]
    takes_all = own.variadic_kw or all(n in own.names for n in wanted)
    # one that still takes a dropped parameter most often passes it on (``super().f(x, dtype)``): no fit
    still_takes = any(n in own.names for n in change.removed)
    return takes_all and not dropped_required and not still_takes
