"""The upstream's git clone (``--git DIR|URL``): one fetch per run, and each merged PR's change read from its
merge commit against the first parent, with the full text of every changed file before and after."""

from __future__ import annotations

from prdigest.collect.git.clone import GitUnavailable, UpstreamClone, clone_folder, open_clone
from prdigest.collect.git.diff import CommitDiff, FileDiff, read_commits

__all__ = ["CommitDiff", "FileDiff", "GitUnavailable", "UpstreamClone", "clone_folder", "open_clone",
           "read_commits"]
