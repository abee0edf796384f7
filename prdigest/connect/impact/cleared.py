"""Cleared stays cleared: an editor's or a team's "not a break" for an (upstream symbol, downstream file), kept in
the state store and applied to later runs and alerts until the upstream symbol changes again.

A clearance remembers the fact it cleared (``Impact.fact``: its kind and the symbol's old → new shape). The same
fact on the same symbol and file is cleared wherever it shows up again (the weekly edition after the day's
alert, a re-run); a later PR that changes the symbol again makes another fact, which is not cleared.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

from prdigest.kernel.models import Entry, Impact
from prdigest.state.store import Migration, Store

COMPONENT = "impact-cleared"
MIGRATIONS: list[Migration] = ["""
    CREATE TABLE impact_cleared (
        repo       TEXT NOT NULL,
        downstream TEXT NOT NULL,
        symbol     TEXT NOT NULL,
        path       TEXT NOT NULL,
        fact       TEXT NOT NULL,
        cleared_by TEXT NOT NULL,
        cleared_at TEXT NOT NULL,
        PRIMARY KEY (repo, downstream, symbol, path, fact)
    )
"""]


def _name_matches(given: str, symbol: str) -> bool:
    """``FusedMoE.forward`` names ``vllm.x.layer.FusedMoE.forward``: a dotted suffix, or the whole name."""
    return symbol == given or symbol.endswith("." + given)


class Clearances:
    """The clearances of one upstream repo; ``hits`` counts impacts :meth:`covers` has cleared."""

    def __init__(self, store: Store, repo: str) -> None:
        self.store, self.repo, self.hits = store, repo, 0
        store.migrate(COMPONENT, MIGRATIONS)
        self._kept = {(r[0], r[1], r[2], r[3]) for r in store.fetchall(
            "SELECT downstream, symbol, path, fact FROM impact_cleared WHERE repo = ?", (repo,))}

    def covers(self, impact: Impact) -> bool:
        """True when ``impact`` (this exact fact on this symbol and file) was cleared."""
        hit = (impact.downstream, impact.symbol, impact.path, impact.fact) in self._kept
        self.hits += hit
        return hit

    def clear(self, impacts: Sequence[Impact], who: str) -> int:
        """Keep ``impacts`` as "not a break" (by ``who``); returns how many were new."""
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        rows = [(self.repo, i.downstream, i.symbol, i.path, i.fact, who, now) for i in impacts
                if (i.downstream, i.symbol, i.path, i.fact) not in self._kept]
        if rows:
            self.store.executemany("INSERT INTO impact_cleared (repo, downstream, symbol, path, fact, cleared_by, "
                                   "cleared_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
        self._kept |= {(r[1], r[2], r[3], r[4]) for r in rows}
        return len({r[1:5] for r in rows})

    def matching(self, entries: Sequence[Entry], symbol: str, path: str, downstream: str | None = None) -> list[Impact]:
        """The impacts in ``entries`` on ``symbol`` (a dotted suffix) in the downstream file ``path``."""
        return [i for e in entries for i in e.impact if i.path == path and _name_matches(symbol, i.symbol)
                and (downstream is None or i.downstream == downstream)]

    def apply(self, entries: Sequence[Entry]) -> list[Entry]:
        """``entries`` without their cleared impacts."""
        out = []
        for entry in entries:
            kept = [i for i in entry.impact if not self.covers(i)]
            out.append(entry if len(kept) == len(entry.impact) else entry.model_copy(update={"impact": kept}))
        return out
