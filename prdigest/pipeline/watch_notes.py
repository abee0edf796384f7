"""What the watch already said, carried into a run's impacts: cleared ones dropped, breaking ones marked with
the day their downstream's readers were alerted and the downstream's fix found since (the Affects-your-code
block then shows "alerted on DATE", "fixed in your abc123")."""

from __future__ import annotations

from collections.abc import Sequence

from prdigest.connect.impact.cleared import Clearances
from prdigest.deliver.alert_log import AlertLog
from prdigest.kernel.models import Entry
from prdigest.state.store import Store


def with_watch_notes(store: Store, repo: str, entries: Sequence[Entry]) -> list[Entry]:
    """``entries`` without their cleared impacts, each breaking impact with its alert's day and fix (the
    earliest alert of that PR to a reader of that downstream)."""
    entries = Clearances(store, repo).apply(entries)
    first: dict[tuple[int, str], tuple[str, str | None]] = {}
    for alerted in AlertLog(store).alerted(repo):
        key = (alerted.number, alerted.downstream)
        if key not in first:
            first[key] = (alerted.alerted_at.date().isoformat(), alerted.fixed_sha)
    if not first:
        return list(entries)
    out = []
    for entry in entries:
        impacts = [i.model_copy(update={"alerted": found[0], "fixed": found[1]})
                   if i.severity == "breaks" and (found := first.get((entry.number, i.downstream))) else i
                   for i in entry.impact]
        out.append(entry.model_copy(update={"impact": impacts}) if impacts != list(entry.impact) else entry)
    return out
