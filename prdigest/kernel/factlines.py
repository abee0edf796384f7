"""How code facts read (zh-CN and English), which of them break callers, and an entry's facts shown compactly.

A fact (:class:`~prdigest.kernel.models.Change`) is data read from two versions of a file; this module only
says it. Identifiers are always code spans (backticks, :data:`~prdigest.kernel.text.CODE_SPAN`), so every
medium shows them as code; a name is never translated. Each medium escapes the lines itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.models import Change, Language, plain_detail
from prdigest.kernel.text import one_line

T = TypeVar("T")


def unique(items: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """``items`` in their order, each ``key`` once (the first keeps its place): facts, uses and impacts found
    by more than one route are said once."""
    seen: set[Hashable] = set()
    out = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


#: At most this many fact lines per entry; the rest are counted ("+3 more").
SHOWN = 5
#: Longest shape (a signature, a bound) quoted in a line, in characters.
MAX_SHAPE = 60

#: Kinds of the Python or kernel API (what weighs in a verdict).
API_KINDS = frozenset({"added", "removed", "renamed", "moved", "signature", "abstract", "bases", "env",
                       "argument", "config"})


def code(text: str) -> str:
    """``text`` as one code span: backticks inside become quotes, so the span cannot end early."""
    cleaned = one_line(text).replace("`", "'")
    if len(cleaned) > MAX_SHAPE:
        cleaned = cleaned[: MAX_SHAPE - 1] + "…"
    return f"`{cleaned}`" if cleaned else ""


#: Kinds of a user-visible surface (a noun each in the catalog: ``facts.noun_env``…).
_SURFACE = frozenset({"env", "argument", "config"})


def rank(change: Change) -> tuple[int, int]:
    """Breaking facts first, then the API, kernels, files, and last what users never see."""
    if change.breaks:
        return 0, 0
    if change.kind in API_KINDS:
        return 1, 0 if change.public else 1
    if change.kind == "kernel":
        return 2, 0
    if change.kind in ("file-deleted", "dependency", "build", "ci"):
        return 3, 0
    return 4, 1 if change.kind == "body" else 0


def ordered(changes: Sequence[Change]) -> list[Change]:
    """``changes`` most important first (stable within a rank)."""
    return sorted(changes, key=rank)


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")


def named_by(change: Change, text: str) -> bool:
    """Whether ``text`` (a title) names the fact's symbol, its old or new name, or the symbol's last part."""
    words = set(_NAME.findall(text.replace("`", "")))
    return any(v and (v in words or v.rsplit(".", 1)[-1] in words)
               for v in (change.symbol, change.before, change.after))


def news_first(changes: Sequence[Change], text: str) -> list[Change]:
    """``changes`` most important first, and within a rank those ``text`` (the title) does not name before
    those it does: what a reader of the title does not know yet."""
    return sorted(changes, key=lambda c: (rank(c)[0], named_by(c, text), rank(c)[1]))


def _signature(change: Change, w: Section) -> str:
    name = code(change.symbol)
    parts = [p.strip() for p in plain_detail(change.detail).split(",") if p.strip()]
    if len(parts) == 1:
        part = parts[0]
        param = part[1:].split("=", 1)[0]
        if part.startswith("+"):
            return w["signature_gained"].format(name=name, param=code(param))
        if part.startswith("-"):
            return w["signature_lost"].format(name=name, param=code(param))
        if "=" in part and "→" in part:
            param, values = part.split("=", 1)
            old, new = values.split("→", 1)
            return w["signature_default"].format(name=name, param=code(param), old=code(old), new=code(new))
        if "→" in part:
            old, new = part.split("→", 1)
            return w["signature_renamed"].format(name=name, old=code(old), new=code(new))
    if parts:
        return w["signature_listed"].format(name=name, listed=w["joiner"].join(code(p) for p in parts[:4]))
    if change.before and change.after:
        return w["signature_from_to"].format(name=name, old=code(change.before), new=code(change.after))
    return w["signature"].format(name=name)


def _surface(change: Change, w: Section) -> str:
    noun = w[f"noun_{change.kind}"]
    name = code(change.symbol)
    if change.detail == "required":  # a check the PR added stops the program without it (envchecks.py)
        return w["surface_required_when" if change.after else "surface_required"].format(
            noun=noun, name=name, when=code(change.after))
    if change.detail == "rejected":  # a check the PR added stops startup with it set (envchecks.py)
        return w["surface_rejected"].format(noun=noun, name=name, why=code(change.after))
    if change.detail == "no longer read":  # shipped code stopped reading it (envreads.py)
        return w["surface_unread"].format(noun=noun, name=name)
    if change.detail == "moved" and change.before and change.after:  # under a nested config (configmoves.py)
        return w["surface_moved"].format(noun=noun, old=code(change.before), new=code(change.after))
    if change.before and change.after and change.detail.startswith("renamed"):
        return w["surface_renamed"].format(noun=noun, old=code(change.before), new=code(change.after))
    if change.before and change.after:
        return w["surface_default"].format(noun=noun, name=name, old=code(change.before), new=code(change.after))
    if change.before:
        return w["surface_removed"].format(noun=noun, name=name)
    if change.after:
        return w["surface_added_default"].format(noun=noun, name=name, default=code(change.after))
    return w["surface_added"].format(noun=noun, name=name)


def _presence(change: Change, w: Section, what: str) -> str:
    """Added when only ``after`` exists, removed when only ``before``, changed otherwise."""
    name, what = code(change.symbol), w[f"noun_{what}"]
    if change.before and not change.after:
        return w["presence_removed"].format(what=what, name=name)
    if change.after and not change.before:
        return w["presence_added"].format(what=what, name=name)
    return w["presence_changed"].format(what=what, name=name)


def _kernel_noun(change: Change) -> str:
    """The catalog key naming a kernel fact's kind of kernel (``Pallas 内核``, ``Triton kernel``, ``内核``)."""
    return f"noun_kernel_{change.language}" if change.language in ("triton", "pallas") else "noun_kernel"


def _words(language: str) -> Section:
    # Every line is put together from several messages (a noun inside a phrase): one language for all of them.
    return messages(catalog(language).whole("facts").language, "facts")


def fact_line(change: Change, language: Language) -> str:
    """One fact as a short phrase in ``language``, identifiers in code spans (the catalog's ``facts.*``).

    ``重命名 `FusedMoE` 为 `FusedMoEFactory``` / ``renamed `FusedMoE` to `FusedMoEFactory```.
    """
    w = _words(language)
    name = code(change.symbol)
    kind = change.kind
    if kind in ("added", "removed", "abstract"):
        return w[kind].format(name=name)
    if kind == "renamed":
        return w["renamed"].format(old=code(change.before or change.symbol), new=code(change.after or change.symbol))
    if kind == "moved":
        src, dst = code(change.before), code(change.after)
        if src and dst:
            return w["moved_from"].format(name=name, old=src, new=dst)
        return w["moved"].format(name=name)
    if kind == "signature":
        return _signature(change, w)
    if kind in _SURFACE:
        return _surface(change, w)
    if kind == "dependency":
        old, new = code(change.before), code(change.after)
        if change.detail == "support dropped":  # prdigest/collect/facts/versiongates.py
            return w["dependency_support_dropped"].format(name=name, old=old)
        if change.detail == "system package":  # prdigest/collect/facts/syspackages.py
            return w["dependency_system"].format(name=name)
        if change.detail == "environment setup":  # prdigest/collect/facts/envsetup.py
            return w["dependency_setup"].format(old=old, new=new)
        if old and new:
            return w["dependency_changed"].format(name=name, old=old, new=new)
        if new:
            return w["dependency_added"].format(name=name, new=new)
        return w["dependency_removed"].format(name=name)
    if kind == "kernel":
        noun = _kernel_noun(change)
        if change.detail.startswith(("numerics: ", "launch: ")):  # prdigest/collect/facts/pykernels.py
            what, _, listed = change.detail.partition(": ")
            items = w["joiner"].join(code(p.strip()) for p in listed.split("; ")[:2] if p.strip())
            return w[f"kernel_{what}"].format(what=w[noun], name=name, casts=items, keys=items)
        if change.before and change.after and change.detail.startswith(("+", "-")) and "," not in change.detail:
            param = code(change.detail[1:].split("=", 1)[0])
            return w["kernel_gained" if change.detail.startswith("+") else "kernel_lost"].format(
                what=w[noun], name=name, param=param)
        return _presence(change, w, noun.removeprefix("noun_"))
    if kind == "file-deleted":
        return w["file_deleted"].format(path=code(change.path))
    if kind == "file-renamed":
        return w["file_renamed"].format(old=code(change.before), new=code(change.after or change.path))
    if kind == "tests":
        if change.detail == "changed":
            return w["test_changed"].format(name=name)
        return _presence(change, w, "test")
    if kind == "ci":
        if change.detail.startswith("triggers: "):
            keys = w["joiner"].join(code(k) for k in change.detail[len("triggers: "):].split(", ")[:3] if k)
            return w["ci_triggers"].format(name=name, keys=keys)
        if change.detail.startswith("changed: "):
            keys = w["joiner"].join(code(k) for k in change.detail[len("changed: "):].split(", ")[:3])
            return w["ci_changed_keys"].format(name=name, keys=keys)
        return w[{"added": "ci_added", "removed": "ci_removed"}.get(change.detail, "ci_changed")].format(name=name)
    if kind == "build":
        if change.before and change.after:
            return w["build_changed"].format(name=name, old=code(change.before), new=code(change.after))
        if change.detail == "removed":
            return w["build_removed"].format(name=name)
        return w["build_added"].format(name=name, new=code(change.after)) if change.after else \
            w["build_added_bare"].format(name=name)
    if kind == "bases":
        return w["bases"].format(name=name, old=code(change.before), new=code(change.after))
    if kind == "attribute":
        return w["attribute_added" if change.detail == "added" else "attribute_removed"].format(name=name)
    if kind == "returns":
        return w["returns"].format(name=name, old=code(change.before), new=code(change.after))
    if kind == "deprecated":
        return w["deprecated_until" if change.after else "deprecated"].format(name=name, version=code(change.after))
    if kind == "passes":
        params = w["joiner"].join(code(k.strip()) for k in change.detail.split(",")[:3] if k.strip())
        return w["passes"].format(name=name, params=params)
    if kind == "registry":
        return w["registry"].format(name=name)
    if kind == "retyped":
        return w["retyped"].format(name=name, old=code(change.before), new=code(change.after))
    return w["body"].format(name=name)


def brief_line(change: Change, language: Language) -> str:
    """``fact_line`` without the shapes (``签名变更``, ``迁移``): for a headline with little room."""
    w = _words(language)
    name = code(change.symbol)
    if change.kind == "kernel" and change.detail.startswith(("numerics: ", "launch: ")):
        return w[f"kernel_{change.detail.partition(':')[0]}_brief"].format(what=w[_kernel_noun(change)], name=name)
    if change.kind == "signature" or (change.kind == "kernel" and change.before and change.after):
        return w["signature"].format(name=name)
    if change.kind == "moved":
        return w["moved"].format(name=name)
    return fact_line(change, language)


def more(n: int, language: Language) -> str:
    """The line that counts the facts not shown."""
    return messages(language, "facts")["more"].format(n=n)


def fact_lines(changes: Sequence[Change], language: Language, shown: int = SHOWN) -> list[str]:
    """An entry's facts, most important first: at most ``shown`` lines, then one counting the rest."""
    lines: list[str] = []
    for change in ordered(changes):
        line = fact_line(change, language)
        if line not in lines:
            lines.append(line)
    if len(lines) > shown:
        return lines[:shown] + [more(len(lines) - shown, language)]
    return lines


def breaking_lines(changes: Sequence[Change], language: Language, shown: int = 2) -> list[str]:
    """The breaking facts of an entry (for the Action required block), at most ``shown``, then a count."""
    lines = fact_lines([c for c in changes if c.breaks], language, shown)
    return lines
