"""``digest status``: find the state database that holds an edition, or say plainly that none does.

A deployment keeps its own state file (``.digest/vllm.sqlite``) while ``digest status`` defaults to
``.digest/state.sqlite``. Without ``--state``, the command looks in the configured database first and
then in every ``.digest/*.sqlite`` beside it; with ``--state`` it looks only there.
"""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from prdigest.errors import ConfigError
from prdigest.store import StateLocation

#: Where ``digest run`` and the shipped deployments keep their SQLite state files.
STATE_FOLDER = Path(".digest")
#: Longest provider id shown (cut with …): a Message-ID must not fold every row into several lines.
_CUT = {"provider id": 28}


def candidates(state: str | StateLocation, explicit: bool) -> list[StateLocation]:
    """The state databases to search: the configured one first (named even when missing), then the others."""
    first = StateLocation.parse(state)
    if explicit or first.dialect != "sqlite":
        return [first]
    found = [first]
    seen = {first.path.resolve()} if first.path else set()
    for path in sorted(STATE_FOLDER.glob("*.sqlite")):
        if path.resolve() not in seen:
            seen.add(path.resolve())
            found.append(StateLocation.parse(path))
    return found


def _editions(location: StateLocation) -> list[str]:
    from prdigest.delivery.ledger import Ledger

    ledger = Ledger.open(location)
    try:
        return ledger.editions()
    finally:
        ledger.close()


def find_status(edition: str, state: str | StateLocation, explicit: bool) -> tuple[Table, StateLocation]:
    """The status table of ``edition`` from the first database that has rows for it, and that database.

    Raises ConfigError "no edition X in state database Y" (naming every database searched and the
    editions each holds) when none has it.
    """
    from flows.status_table import status_table

    searched = candidates(state, explicit)
    for location in searched:
        if not location.exists():
            continue
        table = status_table(location, edition)
        if table.row_count:
            for column in table.columns:
                if column.header in _CUT:
                    column.no_wrap, column.overflow, column.max_width = True, "ellipsis", _CUT[str(column.header)]
            return table, location
    parts = []
    for location in searched:
        if not location.exists():
            parts.append(f"{location} does not exist")
            continue
        known = _editions(location)
        parts.append(f"{location} holds " + (", ".join(known[:5]) + (" …" if len(known) > 5 else "")
                                             if known else "no edition"))
    where = " or ".join(str(s) for s in searched)
    raise ConfigError(f"no edition {edition} in state database {where} ({'; '.join(parts)}): give the edition's "
                      "key or name as `digest run` printed it, and --state FILE for the database the run used")
