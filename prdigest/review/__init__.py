"""The editor's review of an edition, without Prefect.

- :mod:`prdigest.review.decision`: what the editor decides, its checks, applying it, the edit distance;
- :mod:`prdigest.review.markdown`: the draft digest as the editor reads it;
- :mod:`prdigest.review.log`: the review record in the state store.

The names callers use are importable from here.
"""

from prdigest.review.decision import (
    EntryEdit,
    ReviewDecision,
    ReviewExpired,
    ReviewRejected,
    apply_decision,
    changes_text,
    check_decision,
    decision_summary,
    edit_distance,
    entry_text,
    flagged_left_out,
    flagged_numbers,
    parse_changes,
    parse_edits,
    parse_numbers,
)
from prdigest.review.log import record_review
from prdigest.review.markdown import FULL_DESCRIPTION_BUDGET, entry_markdown, md, review_markdown

__all__ = [
    "FULL_DESCRIPTION_BUDGET", "EntryEdit", "ReviewDecision", "ReviewExpired", "ReviewRejected", "apply_decision",
    "changes_text", "check_decision", "decision_summary", "edit_distance", "entry_markdown", "entry_text",
    "flagged_left_out", "flagged_numbers", "md", "parse_changes", "parse_edits", "parse_numbers", "record_review",
    "review_markdown",
]
