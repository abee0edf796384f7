"""The collect step's second half: the week's code facts attached to its PRs, from the clone ``--git`` names
(opened and fetched once for the run) or, without one, from the REST patches."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from prdigest.collect.facts.cache import FactsCache
from prdigest.collect.facts.surface import Surface
from prdigest.collect.facts.week import CommitReader, WeekFacts, week_facts
from prdigest.collect.git import GitUnavailable, UpstreamClone, open_clone
from prdigest.kernel.config import Settings
from prdigest.kernel.models import PullRequest
from prdigest.kernel.storage import Store

log = logging.getLogger(__name__)


def open_upstream(settings: Settings) -> tuple[UpstreamClone | None, str]:
    """The run's clone (fetched), or None and the one line saying why the run goes on from the patches."""
    if not settings.git:
        return None, ""
    try:
        return open_clone(settings.git, state_dir=settings.clone_home()), ""
    except GitUnavailable as exc:
        return None, f"{exc}; code facts come from the REST patches"


def attach_facts(prs: Sequence[PullRequest], *, settings: Settings, surface: Surface, store: Store | None,
                 clone: UpstreamClone | None = None, reader: CommitReader | None = None
                 ) -> tuple[list[PullRequest], WeekFacts]:
    """``prs`` with their facts (``changes``, ``facts_source``); a clone that cannot be had is one warning.
    Without a clone, ``reader`` (the GitHub source's: the files through the API) gives the whole files."""
    problem = ""
    if clone is None:
        clone, problem = open_upstream(settings)
    exact = clone is not None or reader is not None
    week = week_facts(prs, surface=surface, clone=clone, reader=reader,
                      cache=FactsCache(store) if exact and store is not None else None)
    if problem:
        log.warning("%s", problem)
        week.problems.insert(0, problem)
    out = [pr.model_copy(update={"changes": week.changes.get(pr.number, []),
                                 "facts_source": week.source.get(pr.number, "patches"),
                                 "changes_omitted": week.omitted.get(pr.number, 0), **_files(pr, week)})
           for pr in prs]
    log.info("code facts: %d PRs, %d commits computed, %d cached, %.1f s", len(prs), week.computed, week.cached,
             week.seconds)
    return out, week


def _files(pr: PullRequest, week: WeekFacts) -> dict[str, object]:
    """A PR collected without its file list (the GitHub source lists none when a clone gives them) gets the
    one git read; a source's own list is kept."""
    files = week.files.get(pr.number)
    if pr.files or not files:
        return {}
    return {"files": files, "additions": sum(f.additions for f in files),
            "deletions": sum(f.deletions for f in files)}
