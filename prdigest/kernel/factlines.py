"""How code facts read (zh-CN and English), which of them break callers, and an entry's facts shown compactly.

A fact (:class:`~prdigest.kernel.models.Change`) is data read from two versions of a file; this module only
says it. Identifiers are always code spans (backticks, :data:`~prdigest.kernel.text.CODE_SPAN`), so every
medium shows them as code; a name is never translated. Each medium escapes the lines itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.kernel.models import Change, Language
from prdigest.kernel.text import one_line

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


def rank(change: Change) -> tuple[int, int]:
    """Breaking facts first, then the API, kernels, files, and last what users never see."""
    if change.breaks:
        return 0, 0
    if change.kind in API_KINDS:
        return 1, 0 if change.public else 1
    if change.kind == "kernel":
        return 2, 0
    if change.kind in ("file-deleted", "dependency"):
        return 3, 0
    return 4, 1 if change.kind == "body" else 0


def ordered(changes: Sequence[Change]) -> list[Change]:
    """``changes`` most important first (stable within a rank)."""
    return sorted(changes, key=rank)


def _signature(change: Change, zh: bool) -> str:
    name = code(change.symbol)
    parts = [p.strip() for p in change.detail.split(",") if p.strip()]
    if len(parts) == 1:
        part = parts[0]
        param = part[1:].split("=", 1)[0]
        if part.startswith("+"):
            return f"{name} 新增参数 {code(param)}" if zh else f"{name} gained parameter {code(param)}"
        if part.startswith("-"):
            return f"{name} 移除参数 {code(param)}" if zh else f"{name} lost parameter {code(param)}"
        if "=" in part and "→" in part:
            param, values = part.split("=", 1)
            old, new = values.split("→", 1)
            return (f"{name} 的参数 {code(param)} 默认值由 {code(old)} 改为 {code(new)}" if zh
                    else f"{name}: default of {code(param)} changed from {code(old)} to {code(new)}")
        if "→" in part:
            old, new = part.split("→", 1)
            return (f"{name} 的参数 {code(old)} 重命名为 {code(new)}" if zh
                    else f"{name}: parameter {code(old)} renamed to {code(new)}")
    if parts:
        listed = "、".join(code(p) for p in parts[:4]) if zh else ", ".join(code(p) for p in parts[:4])
        return f"{name} 签名变更（{listed}）" if zh else f"changed the signature of {name} ({listed})"
    if change.before and change.after:
        return (f"{name} 签名由 {code(change.before)} 改为 {code(change.after)}" if zh
                else f"changed the signature of {name} from {code(change.before)} to {code(change.after)}")
    return f"{name} 签名变更" if zh else f"changed the signature of {name}"


_SURFACE = {"env": ("环境变量", "environment variable"), "argument": ("参数", "argument"),
            "config": ("配置字段", "config field")}


def _surface(change: Change, zh: bool) -> str:
    noun_zh, noun_en = _SURFACE[change.kind]
    name = code(change.symbol)
    if change.before and change.after and change.detail.startswith("renamed"):
        return (f"{noun_zh} {code(change.before)} 重命名为 {code(change.after)}" if zh
                else f"renamed {noun_en} {code(change.before)} to {code(change.after)}")
    if change.before and change.after:
        return (f"{noun_zh} {name} 的默认值由 {code(change.before)} 改为 {code(change.after)}" if zh
                else f"default of {noun_en} {name} changed from {code(change.before)} to {code(change.after)}")
    if change.before:
        return f"移除{noun_zh} {name}" if zh else f"removed {noun_en} {name}"
    default = f"（默认 {code(change.after)}）" if zh and change.after else (
        f" (default {code(change.after)})" if change.after else "")
    return f"新增{noun_zh} {name}{default}" if zh else f"added {noun_en} {name}{default}"


def _presence(change: Change, zh: bool, what_zh: str, what_en: str) -> str:
    """Added when only ``after`` exists, removed when only ``before``, changed otherwise."""
    name = code(change.symbol)
    if change.before and not change.after:
        return f"移除{what_zh} {name}" if zh else f"removed {what_en} {name}".replace("  ", " ")
    if change.after and not change.before:
        return f"新增{what_zh} {name}" if zh else f"added {what_en} {name}".replace("  ", " ")
    return f"{what_zh} {name} 签名变更" if zh else f"changed the signature of {what_en} {name}".replace("  ", " ")


def fact_line(change: Change, language: Language) -> str:
    """One fact as a short phrase in ``language``, identifiers in code spans.

    ``重命名 `FusedMoE` 为 `FusedMoEFactory``` / ``renamed `FusedMoE` to `FusedMoEFactory```.
    """
    zh = language == "zh-CN"
    name = code(change.symbol)
    kind = change.kind
    if kind == "added":
        return f"新增 {name}" if zh else f"added {name}"
    if kind == "removed":
        return f"移除 {name}" if zh else f"removed {name}"
    if kind == "renamed":
        old, new = code(change.before or change.symbol), code(change.after or change.symbol)
        return f"重命名 {old} 为 {new}" if zh else f"renamed {old} to {new}"
    if kind == "moved":
        src, dst = code(change.before), code(change.after)
        if src and dst:
            return f"{name} 从 {src} 移至 {dst}" if zh else f"moved {name} from {src} to {dst}"
        return f"迁移 {name}" if zh else f"moved {name}"
    if kind == "signature":
        return _signature(change, zh)
    if kind in _SURFACE:
        return _surface(change, zh)
    if kind == "dependency":
        old, new = code(change.before), code(change.after)
        if old and new:
            return f"依赖 {name} 由 {old} 改为 {new}" if zh else f"pin {name} changed from {old} to {new}"
        if new:
            return f"新增依赖 {name}（{new}）" if zh else f"added dependency {name} ({new})"
        return f"移除依赖 {name}" if zh else f"removed dependency {name}"
    if kind == "kernel":
        if change.before and change.after and change.detail.startswith(("+", "-")) and "," not in change.detail:
            param = code(change.detail[1:].split("=", 1)[0])
            gained = change.detail.startswith("+")
            return (f"内核 {name} {'新增' if gained else '移除'}参数 {param}" if zh
                    else f"kernel {name} {'gained' if gained else 'lost'} parameter {param}")
        return _presence(change, zh, "内核", "kernel")
    if kind == "file-deleted":
        return f"删除文件 {code(change.path)}" if zh else f"deleted {code(change.path)}"
    if kind == "file-renamed":
        old, new = code(change.before), code(change.after or change.path)
        return f"文件 {old} 重命名为 {new}" if zh else f"renamed {old} to {new}"
    if kind == "tests":
        return _presence(change, zh, "测试", "test")
    if kind == "abstract":
        return f"新增抽象方法 {name}" if zh else f"added abstract method {name}"
    if kind == "bases":
        old, new = code(change.before), code(change.after)
        return (f"{name} 的基类由 {old} 改为 {new}" if zh else f"base classes of {name} changed from {old} to {new}")
    return f"修改 {name} 的实现" if zh else f"changed the body of {name}"


def brief_line(change: Change, language: Language) -> str:
    """``fact_line`` without the shapes (``签名变更``, ``迁移``): for a headline with little room."""
    zh = language == "zh-CN"
    name = code(change.symbol)
    if change.kind == "signature" or (change.kind == "kernel" and change.before and change.after):
        return f"{name} 签名变更" if zh else f"changed the signature of {name}"
    if change.kind == "moved":
        return f"迁移 {name}" if zh else f"moved {name}"
    return fact_line(change, language)


def more(n: int, language: Language) -> str:
    """The line that counts the facts not shown."""
    return f"另有 {n} 项" if language == "zh-CN" else f"+{n} more"


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
