"""Phrasing: what every part of an offline draft shares to speak both languages within its bounds.

The output bounds, subsystem labels (from the repo's vocabulary) in zh-CN and English, lists of code
names and the spacing between Chinese and Latin text.
"""

from __future__ import annotations

import re

from prdigest.kernel.i18n import Section, catalog, messages
from prdigest.kernel.vocabulary import Vocabulary

# ── Output bounds: whatever the PR holds, the draft stays this short. ────────────────────────────────
MAX_HEADLINE, MAX_RATIONALE, MAX_POINT, MAX_FOLLOWUP, MAX_AUDIENCE = 80, 320, 260, 220, 80


_CJK = "\u4e00-\u9fff"
_CJK_ASCII = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9`(\[\-_~$@#*+])|(?<=[A-Za-z0-9`)\]\-_%+])(?=[{_CJK}])")
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) +(?=[{_CJK}])")


def code_names(items: tuple[str, ...] | list[str], limit: int, zh: bool) -> str:
    """Backticked code names, verbatim: a shortened name would cite something the PR never wrote."""
    fit = [i for i in items if "`" not in i and len(i) <= 120]
    return ("、" if zh else ", ").join(f"`{i}`" for i in fit[:limit])


def area_names(areas: tuple[str, ...], words: Section, vocabulary: Vocabulary) -> str:
    """The labels of the first two ``areas`` in the language of ``words`` (:func:`draft_words`)."""
    return words["list"].join(vocabulary.label(a, words.language) for a in areas[:2])


def draft_words(language: str) -> Section:
    """The offline drafter's phrases (the catalogs' ``draft.*``): the language's own when its catalog has every
    one of them, else English's, so that a draft never mixes two languages."""
    return messages(catalog(language).whole("draft").language, "draft")


def cjk(words: Section) -> bool:
    """Whether the phrases are written without spaces between words (``draft.spacing: cjk``)."""
    return str(words["spacing"]) == "cjk"


def spaced(text: str, words: Section) -> str:
    """``text`` with the spacing its phrases' language wants (:func:`zh_spacing` for ``cjk``)."""
    return zh_spacing(text) if cjk(words) else text


def zh_spacing(text: str) -> str:
    """A space between Chinese and Latin text, none between two Chinese words."""
    return _CJK_GAP.sub("", re.sub(r" {2,}", " ", _CJK_ASCII.sub(" ", text))).strip()
