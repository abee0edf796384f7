"""A proposal kept in the state store for a repository without a rules file, so that every edition uses the
same subsystem names (readers subscribe to them) until someone commits a rules file.

The first run of a repository proposes (:func:`prdigest.classify.proposal.propose.propose`) and keeps the written
file; later runs, on any worker sharing the store, load what was kept and never propose again. The first
writer wins (``ON CONFLICT DO NOTHING``), so two runs starting together agree on one vocabulary.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from tempfile import TemporaryDirectory

from prdigest.classify.proposal.propose import Proposal, propose
from prdigest.classify.proposal.repo import RepoSnapshot
from prdigest.classify.proposal.writer import render
from prdigest.classify.rulesfile import Rules, load_rules
from prdigest.classify.subsystems import RulesClassifier
from prdigest.kernel.errors import RulesError
from prdigest.kernel.storage import Store

COMPONENT = "proposed_rules"
MIGRATIONS = [
    """
    CREATE TABLE proposed_rules (
        repo        TEXT NOT NULL PRIMARY KEY,   -- lower case: GitHub names are case-insensitive
        rules_yaml  TEXT NOT NULL,               -- the file `digest rules init` would write
        origin      TEXT NOT NULL,               -- what it was proposed from
        shown_json  TEXT NOT NULL,               -- [[name, shown as, origin], ...] for the editor
        created_at  TEXT NOT NULL
    )
    """,
]


@dataclass(frozen=True)
class KeptProposal:
    """A repository's proposed rules as kept in the state store."""

    repo: str
    rules_yaml: str
    origin: str
    #: (name, shown as, where it came from) per subsystem, in the file's order.
    shown: list[tuple[str, str, str]]
    created_at: datetime

    def rules(self) -> Rules:
        """The kept file, loaded and validated like any rules file."""
        with TemporaryDirectory(prefix="pr-digest-proposal-") as tmp:
            path = Path(tmp) / f"{self.repo.replace('/', '__')}.yaml"
            path.write_text(self.rules_yaml, encoding="utf-8")
            try:
                return load_rules(path)
            except RulesError as exc:
                raise RulesError(f"the subsystems proposed for {self.repo} and kept in the state store no longer "
                                 f"load ({exc}); commit a rules file (digest rules init) or pass --rules") from None

    @property
    def notice(self) -> str:
        """The one line a run prints: no rules file, which proposal it uses, how to replace it."""
        return (f"No rules file for {self.repo}: using the {len(self.shown)} subsystems proposed from "
                f"{self.origin} on {self.created_at:%Y-%m-%d} (kept in the state store; commit one with "
                f"`digest rules init --repo {self.repo} --out FILE`, then pass --rules FILE)")

    def markdown(self, escape: Callable[[str], str]) -> list[str]:
        """What the editor reads above the draft: which subsystems were proposed (``escape``: the medium's)."""
        # Names are validated rules-file names (a-z, 0-9, '-'); how a label is written is the repo's text.
        names = ", ".join(f"`{n}`" + (f" ({escape(s)})" if s != n else "") for n, s, _ in self.shown)
        return ["", f"### Proposed subsystems ({len(self.shown)})", "",
                escape(self.notice) + ".", "", names]


class ProposedClassifier(RulesClassifier):
    """A rules classifier over a kept proposal: it says where its vocabulary came from."""

    def __init__(self, kept: KeptProposal) -> None:
        super().__init__(kept.rules())
        self.kept = kept


def _ensure(store: Store) -> None:
    store.migrate(COMPONENT, MIGRATIONS)


def load_kept(store: Store, repo: str) -> KeptProposal | None:
    """The proposal kept for ``repo``, if any."""
    _ensure(store)
    row = store.fetchone("SELECT repo, rules_yaml, origin, shown_json, created_at FROM proposed_rules WHERE repo = ?",
                         (repo.lower(),))
    if row is None:
        return None
    shown = [tuple(x) for x in json.loads(row[3])]
    return KeptProposal(repo, row[1], row[2], shown, datetime.fromisoformat(row[4]))


def keep(store: Store, proposal: Proposal, *, now: datetime | None = None) -> KeptProposal:
    """Keep ``proposal`` for its repository unless one is kept already; return the one kept."""
    _ensure(store)
    when = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    shown = [[p.name, p.shown, p.area.origin] for p in proposal.subsystems]
    store.execute("INSERT INTO proposed_rules (repo, rules_yaml, origin, shown_json, created_at) "
                  "VALUES (?, ?, ?, ?, ?) ON CONFLICT (repo) DO NOTHING",
                  (proposal.repo.lower(), render(proposal, now=when), proposal.where, json.dumps(shown),
                   when.isoformat()))
    kept = load_kept(store, proposal.repo)
    assert kept is not None  # just written, or written by a concurrent run
    return kept


def proposed_classifier(store: Store, repo: str, snapshot: Callable[[], RepoSnapshot]) -> ProposedClassifier:
    """The classifier of the proposal kept for ``repo``; the first time, propose from ``snapshot()`` and keep it."""
    kept = load_kept(store, repo)
    if kept is None:
        kept = keep(store, propose(snapshot()))
    return ProposedClassifier(kept)
