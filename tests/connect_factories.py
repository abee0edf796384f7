"""Builders for the connect step's tests: PRs and the entries drafted from them, week by week."""

from __future__ import annotations

from datetime import timedelta

from prdigest.kernel.links import pr_link
from prdigest.kernel.models import DraftEntry, Edition, Entry, EntryStatus, PullRequest, Verdict
from tests.factories import WEEK

REPO = "vllm-project/vllm"


def pr(number: int, title: str, body: str = "", *, author: str = "alice", week: int = 0, day: int = 1) -> PullRequest:
    """A merged PR of week ``week`` (0 = the factory's week), merged on day ``day`` of it."""
    return PullRequest(number=number, url=pr_link(REPO, number), title=title, body=body,
                       author=author, merged_at=WEEK + timedelta(weeks=week, days=day), additions=10, deletions=2)


def entry_of(p: PullRequest, verdict: str = "skim", followups: list[str] | None = None,
             subsystems: list[str] | None = None, status: str = "approved") -> Entry:
    draft = DraftEntry(number=p.number, headline=f"Headline {p.number}", verdict=Verdict(verdict),
                       rationale=f"Why {p.number}.", followups=followups or [])
    return Entry.from_draft(p, subsystems or ["kernels"], draft).model_copy(update={"status": EntryStatus(status)})


def week_edition(week: int, entries: list[Entry], language: str = "en") -> Edition:
    """The edition of the ``week``-th Monday-to-Monday week after the factory's."""
    return Edition(repo=REPO, since=WEEK + timedelta(weeks=week), until=WEEK + timedelta(weeks=week + 1),
                   language=language, generated_at=WEEK + timedelta(weeks=week + 1), entries=entries)
