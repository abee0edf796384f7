"""Each stored repo's vocabulary, as its runs classify it: what ``digest site`` labels the archive's subsystems with."""

from __future__ import annotations

from prdigest.kernel.config import Settings
from prdigest.kernel.options import RunOptions
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.pipeline.compose import make_classifier
from prdigest.state import record as records
from prdigest.state.store import LazyStore


def stored_vocabularies(store: LazyStore, settings: Settings, repo: str | None = None) -> dict[str, Vocabulary]:
    """The vocabulary of every repo with a published edition in ``store`` (``repo`` only, when given): its
    shipped rules file, else the subsystems proposed for it and kept in the store, as a run without
    ``--rules`` uses them (a run with ``--rules`` labels its own edition's pages with that file's names)."""
    repos = dict.fromkeys(r.edition.repo for r in records.published(store(), repo))
    return {name: make_classifier(RunOptions(repo=name), name, settings, store=store).vocabulary for name in repos}
