"""The discussion of a PR: its reviews (with their state), review comments, conversation comments and the
issues it closes or names, bots left out. Collected by default (``--no-discussion`` for a cheap run).

- :mod:`.bots`: who is a bot (``[bot]`` logins and the well-known bot accounts);
- :mod:`.linked`: the issue numbers a PR's text closes or names, closing keywords first;
- :mod:`.points`: the discussion as points, the maintainers' and reviewers' first (what the prompt and the
  offline drafter read).

The GitHub requests themselves are made by the collector (``prdigest/collect/github/fetch.py``), counted and
cached with the rest of a PR.
"""

from __future__ import annotations

from prdigest.collect.discussion.bots import is_bot
from prdigest.collect.discussion.linked import MAX_LINKED, linked_numbers
from prdigest.collect.discussion.points import Point, comments_total, points

__all__ = ["MAX_LINKED", "Point", "comments_total", "is_bot", "linked_numbers", "points"]
