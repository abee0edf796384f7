"""A rationale that opens with its entry's final verdict, in the verdict's own words.

A draft's rationale starts with its verdict's label ("值得精读：…", "Deep read: …"). When the verdict changes
after drafting (a PR reverted in the same week is demoted, an editor picks another verdict), or a model
writes a rationale without the label, :func:`restated` puts the final verdict's label first, so a reader
never sees "值得精读" under a skip badge.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prdigest.kernel.i18n import catalog, languages, messages
from prdigest.kernel.models import Verdict

#: Labels a model or an editor may open with besides the catalogs' own (``verdict.*`` of every language).
_OTHER_LABELS = ("Deep-read", "Deep reading", "Worth a deep read", "Worth skimming", "Skippable")


@lru_cache(maxsize=8)
def _opening(found: tuple[str, ...]) -> re.Pattern[str]:
    """A label that opens a rationale, with its separator: "值得精读：", "Deep read: ", "Skim - ", "**Skip**:"."""
    labels = sorted({Verdict(v).label(lang) for v in ("deep-read", "skim", "skip") for lang in found}
                    | set(_OTHER_LABELS), key=len, reverse=True)
    return re.compile(r"^\s*\**(?:" + "|".join(re.escape(label) for label in labels) + r")\**\s*[:：\-—–.。,，]\s*",
                      re.IGNORECASE)


def without_label(rationale: str) -> str:
    """``rationale`` without a verdict label at its start (any verdict, any language with a catalog)."""
    return _opening(languages()).sub("", rationale, count=1).strip()


def restated(rationale: str, verdict: Verdict, language: str, reason: str = "") -> str:
    """``rationale`` opening with ``verdict``'s label in ``language``; ``reason`` (why the verdict changed)
    comes right after the label, before the original reasons."""
    lang = catalog(language).whole("restate", "verdict").language  # the label and its punctuation together
    words = messages(lang, "restate")
    rest = without_label(rationale)
    if reason:
        reason = reason.rstrip("。.;；")
        rest = f"{reason}{words['then']}{rest}" if rest else f"{reason}{words['end']}"
    label = verdict.label(lang)
    return f"{label}{words['separator']}{rest}" if rest else label


def opens_with_verdict(rationale: str, verdict: Verdict, language: str) -> bool:
    """True when ``rationale`` starts with ``verdict``'s own label in ``language`` and a separator."""
    label = verdict.label(catalog(language).whole("restate", "verdict").language)
    opening = _opening(languages()).match(rationale)
    return rationale.strip() == label or (opening is not None and opening.group().strip().startswith(label))
