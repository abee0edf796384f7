"""The impact step: each entry's upstream facts matched against every declared downstream (``impact[]``).

Entries whose facts come from git are matched as they are. An entry without git facts (no clone, or its
coverage says ``patches``) is matched on the facts its patches show as well (:mod:`.hunks`), and every
impact it gets is marked ``partial``.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prdigest.connect.impact.downstream import DownstreamIndex, DownstreamSpec
from prdigest.connect.impact.hunks import facts_from_patches
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.connect.impact.readable import readable_index
from prdigest.kernel.models import Change, Entry, Impact, PullRequest
from prdigest.kernel.storage import Store

log = logging.getLogger(__name__)

#: Most impacts one entry keeps per downstream (a removed module used in 900 places: the first 200 say it).
MAX_PER_ENTRY = 200


def upstream_packages(repo: str) -> tuple[str, ...]:
    """The upstream's import package guessed from its repository name: ``vllm-project/vllm`` → ``vllm``."""
    name = repo.rsplit("/", 1)[-1]
    return (re.sub(r"[^A-Za-z0-9_]", "_", name).lower(),)


def entry_facts(entry: Entry, pr: PullRequest | None, upstream: Sequence[str]) -> tuple[list[Change], bool]:
    """The facts to match for ``entry`` and whether they are partial (no git facts: from the patches)."""
    from_git = bool(entry.changes) and (entry.coverage is None or entry.coverage.source == "git")
    if from_git:
        return list(entry.changes), False
    facts = list(entry.changes)
    if pr is not None:
        seen = {(c.kind, c.symbol, c.path) for c in facts}
        facts += [c for c in facts_from_patches(pr, upstream) if (c.kind, c.symbol, c.path) not in seen]
    return facts, True


def impacts_for(entry: Entry, pr: PullRequest | None, tables: Sequence[UseTable],
                upstream: Sequence[str]) -> list[Impact]:
    """One entry's impacts on every downstream (at most :data:`MAX_PER_ENTRY` each)."""
    facts, partial = entry_facts(entry, pr, upstream)
    if not facts:
        return []
    out: list[Impact] = []
    for table in tables:
        out += match_changes(facts, table, table.upstream or upstream, number=entry.number,
                             partial=partial)[:MAX_PER_ENTRY]
    return out


def with_impact(entries: Sequence[Entry], prs: Sequence[PullRequest], indexes: Mapping[str, DownstreamIndex],
                upstream: Sequence[str]) -> list[Entry]:
    """``entries`` with their ``impact`` filled from ``indexes`` (downstream name → index)."""
    started = time.perf_counter()
    tables = [UseTable.of(name, index.uses, index.upstream or tuple(upstream)) for name, index in indexes.items()]
    by_number = {pr.number: pr for pr in prs}
    out = [e.model_copy(update={"impact": impacts_for(e, by_number.get(e.number), tables, upstream)})
           for e in entries]
    log.info("impact: %d entries touch %d downstream(s) in %.2fs", sum(1 for e in out if e.impact), len(tables),
             time.perf_counter() - started)
    return out


@dataclass
class Downstreams:
    """The run's downstreams, each indexed once (fetched once) on first use; one that cannot be read, or cannot
    be what its team meant (:mod:`.readable`), stops the run: leaving it out would tell its team "nothing
    affects you"."""

    specs: Sequence[DownstreamSpec]
    upstream: tuple[str, ...]
    store: Store | None = None
    state_dir: Path | None = None
    notices: list[str] = field(default_factory=list)
    #: Where the specs come from, named in a refusal (the readers file).
    where: str = "readers file"
    _indexes: dict[str, DownstreamIndex] | None = None

    def indexes(self) -> dict[str, DownstreamIndex]:
        if self._indexes is None:
            indexes = {}
            for spec in self.specs:
                indexes[spec.name] = readable_index(spec, self.upstream, f"{self.where} downstreams.{spec.name}",
                                                    store=self.store, state_dir=self.state_dir)
            self._indexes = indexes
        return self._indexes

    def apply(self, entries: Sequence[Entry], prs: Sequence[PullRequest]) -> list[Entry]:
        """``entries`` with their impacts on every downstream that could be read."""
        if not self.specs:
            return list(entries)
        indexes = self.indexes()
        upstream = self.upstream
        return with_impact(entries, prs, indexes, upstream)
