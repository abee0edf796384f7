"""The offline drafter: a deterministic draft from the PR's own data, with no network and no model.

It composes the parts: :mod:`~prdigest.kernel.prtext.signals` reads the PR, :mod:`~prdigest.draft.verdict`
scores it, :mod:`~prdigest.draft.headline` and :mod:`~prdigest.draft.guidance` write the entry in
zh-CN or English within the bounds of :mod:`~prdigest.draft.phrasing`. The names tests and callers
import from here are re-exported.
"""

from __future__ import annotations

import re

from prdigest.draft.guidance import asks, audience, focus, followups, rationale
from prdigest.draft.headline import headline, intent
from prdigest.draft.packing import DraftContext
from prdigest.draft.phrasing import MAX_AUDIENCE, MAX_FOLLOWUP, MAX_HEADLINE, MAX_POINT, MAX_RATIONALE, draft_words
from prdigest.draft.verdict import Assessment, Reason, assess
from prdigest.kernel.models import DraftEntry, Language, PullRequest
from prdigest.kernel.prtext.signals import extract
from prdigest.kernel.vocabulary import Vocabulary

__all__ = [
    "MAX_AUDIENCE", "MAX_FOLLOWUP", "MAX_HEADLINE", "MAX_POINT", "MAX_RATIONALE", "Assessment",
    "OfflineDrafter", "Reason", "assess", "audience", "focus", "followups", "headline", "rationale",
]


def _says(head: str, point: str) -> bool:
    """Whether the headline already says the point: most of its words (Chinese characters, code names, English
    words) are in it, however each was composed."""
    words = [x.lower() for x in re.findall(r"`[^`]+`|[\u4e00-\u9fff]|[A-Za-z0-9_.+-]+", point)]
    said = sum(x in head.lower() for x in words)
    return not words or said >= 0.6 * len(words)


class OfflineDrafter:
    """Drafts an entry from the PR's own data: deterministic, no network, never raises for a valid PR."""

    name = "offline"

    def __init__(self, vocabulary: Vocabulary | None = None) -> None:
        # The repo's vocabulary (``classifier.vocabulary``): its labels, audiences and drafting hints.
        # Without one, the draft uses only repo-independent signals.
        self.vocabulary = vocabulary or Vocabulary.open()

    def check(self) -> None:
        """Nothing to check: no network, no key."""

    def close(self) -> None:
        """Nothing to release."""

    def draft(self, pr: PullRequest, subsystems: list[str], language: Language,
              context: DraftContext | None = None) -> DraftEntry:
        """Draft the entry for ``pr`` in ``language`` ("zh-CN"; anything else is English, as in Verdict.label).
        ``context`` is not read: the offline draft rests on the PR's own data (its discussion included)."""
        w = draft_words(language)
        lang: Language = w.language  # the language whose catalog has every phrase of a draft, else English
        s = extract(pr, list(subsystems), self.vocabulary)
        a = assess(s)
        warnings: list[str] = []
        if not s.title:
            warnings.append(w["warn_untitled"])
        if s.files_truncated:
            warnings.append(w["warn_truncated"])
        if not s.files and not s.body:
            warnings.append(w["warn_empty"])
        head, point = headline(s, lang), intent(s, lang)
        # The first sentence says the PR's point: the headline's when it says it, else the rationale's opening.
        lead = point if point and not _says(head, point) else None
        return DraftEntry(
            number=pr.number, headline=head, verdict=a.verdict, rationale=rationale(s, a, lang, lead),
            focus=focus(s, a, lang, asks(pr)), followups=followups(s, lang), audience=audience(s, lang),
            drafter=self.name, needs_editing=bool(warnings), warnings=warnings,
        )
