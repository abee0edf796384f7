"""A PR's discussion as points in the order a careful editor reads them: the reviews that request changes,
then the approving and commenting reviews' summaries, then reviewers' remarks (inline, then in the
conversation), then the author's own replies. Bots and empty remarks are left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from prdigest.collect.discussion.bots import is_bot
from prdigest.kernel.models import PullRequest, ReviewComment

PointKind = Literal["changes-requested", "approved", "review", "inline", "comment"]
_RANK: dict[str, int] = {"changes-requested": 0, "approved": 1, "review": 2, "inline": 3, "comment": 4}
_STATE_KIND: dict[str, PointKind] = {"CHANGES_REQUESTED": "changes-requested", "APPROVED": "approved"}


@dataclass(frozen=True)
class Point:
    """One human remark of a PR's discussion (untrusted text: escape it for whatever shows it)."""

    author: str
    text: str
    kind: PointKind
    path: str | None = None
    #: True when the PR's own author wrote it (a reply, not a reviewer's point).
    own: bool = False

    @property
    def rank(self) -> tuple[int, int]:
        """Sort key: reviewers before the author, then by kind (changes requested first)."""
        return (1 if self.own else 0, _RANK[self.kind])


def points(pr: PullRequest) -> list[Point]:
    """Every human remark with text: reviewers' before the author's, changes requested first, each group in
    the order it was made."""
    found: list[Point] = []
    for review in pr.reviews:
        if review.body.strip() and not is_bot(review.author):
            found.append(Point(review.author, review.body.strip(), _STATE_KIND.get(review.state, "review"),
                               own=review.author == pr.author))
    sources: tuple[tuple[PointKind, list[ReviewComment]], ...] = (("inline", pr.review_comments),
                                                                  ("comment", pr.comments))
    for kind, remarks in sources:
        for remark in remarks:
            if remark.body.strip() and not is_bot(remark.author):
                found.append(Point(remark.author, remark.body.strip(), kind,
                                   path=remark.path, own=remark.author == pr.author))
    return sorted(found, key=lambda p: p.rank)  # stable: each group keeps its order


def comments_total(pr: PullRequest) -> int:
    """How many human remarks with text the PR's discussion has (what coverage counts against)."""
    return len(points(pr))


def verdicts(pr: PullRequest) -> dict[str, list[str]]:
    """The reviewers by the state of their last review: ``{"APPROVED": [...], "CHANGES_REQUESTED": [...]}``."""
    last: dict[str, str] = {}
    for review in pr.reviews:
        if not is_bot(review.author) and review.author != pr.author and review.state in _STATE_KIND:
            last[review.author] = review.state
    out: dict[str, list[str]] = {}
    for author, state in last.items():
        out.setdefault(state, []).append(author)
    return out
