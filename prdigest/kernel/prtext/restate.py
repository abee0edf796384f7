"""A rationale that opens with its entry's final verdict, in the verdict's own words.

A draft's rationale starts with its verdict's label ("值得精读：…", "Deep read: …"). When the verdict changes
after drafting (a PR reverted in the same week is demoted, an editor picks another verdict), or a model
writes a rationale without the label, :func:`restated` puts the final verdict's label first, so a reader
never sees "值得精读" under a skip badge.
"""

from __future__ import annotations

import re

from prdigest.kernel.models import Verdict

_LABELS = sorted({Verdict(v).label(lang) for v in ("deep-read", "skim", "skip") for lang in ("zh-CN", "en")} |
                 {"Deep-read", "Deep reading", "Worth a deep read", "Worth skimming", "Skippable"},
                 key=len, reverse=True)
#: A label that opens a rationale, with its separator: "值得精读：", "Deep read: ", "Skim - ", "**Skip**:".
_OPENING = re.compile(r"^\s*\**(?:" + "|".join(re.escape(label) for label in _LABELS) + r")\**\s*[:：\-—–.。,，]\s*",
                      re.IGNORECASE)
_SEPARATOR = {"zh-CN": "：", "en": ": "}


def without_label(rationale: str) -> str:
    """``rationale`` without a verdict label at its start (any verdict, either language)."""
    return _OPENING.sub("", rationale, count=1).strip()


def restated(rationale: str, verdict: Verdict, language: str, reason: str = "") -> str:
    """``rationale`` opening with ``verdict``'s label in ``language``; ``reason`` (why the verdict changed)
    comes right after the label, before the original reasons."""
    zh = language == "zh-CN"
    rest = without_label(rationale)
    if reason:
        reason = reason.rstrip("。.;；")
        rest = f"{reason}{'；' if zh else '; '}{rest}" if rest else f"{reason}{'。' if zh else '.'}"
    label = verdict.label(language if zh else "en")
    return f"{label}{_SEPARATOR['zh-CN' if zh else 'en']}{rest}" if rest else label


def opens_with_verdict(rationale: str, verdict: Verdict, language: str) -> bool:
    """True when ``rationale`` starts with ``verdict``'s own label in ``language`` and a separator."""
    label = verdict.label("zh-CN" if language == "zh-CN" else "en")
    opening = _OPENING.match(rationale)
    return rationale.strip() == label or (opening is not None and opening.group().strip().startswith(label))
