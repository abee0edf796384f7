"""What the draft step is given besides each PR: its relations so far and, with a clone, the hunks and the files'
full text read from it. One function for ``digest run`` and ``digest eval``, so eval drafts what a run ships."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from prdigest.collect.git import GitUnavailable, UpstreamClone
from prdigest.collect.git.clone_hunks import clone_hunks
from prdigest.collect.git.texts import after_texts
from prdigest.connect.step import known_relations
from prdigest.draft.packing import DraftContext
from prdigest.kernel.models import PullRequest
from prdigest.kernel.storage import Store
from prdigest.kernel.window import Window

log = logging.getLogger(__name__)


def draft_contexts(repo: str, window: Window, prs: Sequence[PullRequest], store: Store,
                   clone: UpstreamClone | None = None) -> dict[int, DraftContext]:
    """Each PR's :class:`DraftContext`: relations from the cheap reference pass (this edition and the published
    history) and, when ``clone`` is given, the hunks of its most telling files that came without a patch and the
    full text after the change of its Python files (to widen each hunk to its function)."""
    hunks: dict[int, dict[str, str]] = {}
    texts: dict[int, dict[str, str]] = {}
    if clone is not None:
        try:
            hunks = clone_hunks(clone, prs)
            texts = after_texts(clone, prs, hunks=hunks)
        except GitUnavailable as exc:  # the prompts show what the source gave
            log.warning("the hunks and files' text for the prompts: %s", exc)
    found = known_relations(repo, window, list(prs), store)
    return {pr.number: DraftContext(relations=tuple(found.get(pr.number, [])), texts=texts.get(pr.number, {}),
                                    hunks=hunks.get(pr.number, {}))
            for pr in prs}
