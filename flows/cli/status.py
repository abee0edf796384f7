"""``digest status``: find the state database that holds an edition, or say plainly that none does.

A deployment keeps its own state file (``.digest/vllm.sqlite``) while ``digest status`` defaults to
``.digest/state.sqlite``. Without ``--state``, the command looks in the configured database first and
then in every ``.digest/*.sqlite`` beside it; with ``--state`` it looks only there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from flows.cli.options import state_option
from flows.cli.terminal import err_console, fail, safe, safe_table
from prdigest.kernel.errors import ConfigError, DigestError
from prdigest.state.store import StateLocation

#: Where ``digest run`` and the shipped deployments keep their SQLite state files.
STATE_FOLDER = Path(".digest")


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
    from prdigest.deliver.ledger import Ledger
    from prdigest.pipeline.compose import command

    with command(location) as core:
        return Ledger(core.store()).editions()


def find_status(edition: str, state: str | StateLocation, explicit: bool,
                width: int = 200) -> tuple[Table, StateLocation]:
    """The status table of ``edition`` from the first database that has rows for it, and that database.

    Raises ConfigError "no edition X in state database Y" (naming every database searched and the
    editions each holds) when none has it.
    """
    from flows.cli.status_table import status_table

    searched = candidates(state, explicit)
    for location in searched:
        if not location.exists():
            continue
        table = status_table(location, edition, width)
        if table.row_count:
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


def status(
    edition: str = typer.Argument(..., help="The edition's key or name, e.g. vllm-project-vllm-2026-W47."),
    state: Optional[str] = state_option(default="the configured one, then every .digest/*.sqlite"),
) -> None:
    """Print the delivery ledger of one edition: what was sent, what failed and why, what is pending."""
    from prdigest.kernel.config import load_settings

    out = Console()
    try:
        settings = load_settings(state=state)
        table, used = find_status(edition, settings.state, explicit=bool(state or os.environ.get("DIGEST_STATE")),
                                  width=out.width)
        if str(used) != str(settings.state):
            err_console.print(safe(f"(found in state database {used})"), highlight=False)
        out.print(safe_table(table))
    except DigestError as exc:
        raise fail(exc) from None
