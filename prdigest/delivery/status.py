"""``digest status EDITION``: one edition's ledger as a table (reader, medium, status, reason, …)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from prdigest.delivery.ledger import Ledger
from prdigest.errors import ConfigError
from prdigest.store import StateLocation

_STYLE = {"sent": "green", "failed": "red", "pending": "yellow", "sending": "cyan", "uncertain": "magenta"}
_ORDER = ("sent", "failed", "pending", "sending", "uncertain")


def status_table(state: StateLocation | str | Path, edition: str) -> Table:
    """The ledger of one edition, given by its key, its name as ``digest run`` prints it, or its exact
    identity (``repo@since..until``). Uncertain rows are listed with what to do about them.

    The state location is shown with its password masked (``StateLocation`` never prints it).
    """
    location = StateLocation.parse(state)
    if not location.exists():
        raise ConfigError(f"--state {location}: no state database here, so nothing was delivered from it")
    ledger = Ledger.open(location)
    try:
        key = ledger.resolve(edition) or edition
        identity = ledger.identity(key)
        rows = ledger.rows(key)
        counts = ledger.counts(key)
        known = ledger.editions() if not rows else []
    finally:
        ledger.close()
    shown = [s for s in _ORDER if counts[s] or s in ("sent", "failed", "pending")]
    title = f"{key}: " + ", ".join(f"{counts[s]} {s}" for s in shown)
    table = Table(title=Text(title))
    for column, justify in (("reader", "left"), ("medium", "left"), ("recipient", "left"), ("variant", "left"),
                            ("status", "left"), ("attempts", "right"), ("provider id", "left"),
                            ("error", "left"), ("updated (UTC)", "left")):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in rows.values():
        # Text, not markup: an SMTP reply or a Slack error may contain "[…]".
        error = row.error or ""
        if row.status == "sending":
            error = f"claimed by {row.owner} until {row.lease_until}" + (f"; {error}" if error else "")
        table.add_row(*(Text(v) for v in (row.reader, row.medium, row.recipient, row.variant)),
                      Text(row.status, style=_STYLE.get(row.status, "")), str(row.attempts),
                      Text(row.provider_id or ""), Text(error), row.updated_at.replace("+00:00", ""))
    notes = []
    if identity:
        notes.append(f"{identity[0]} = {identity[1]}")
    if counts["uncertain"]:
        notes.append(f"{counts['uncertain']} uncertain: they may have reached the reader and are never resent "
                     f"on their own; to send them again: digest resend '{identity[0] if identity else key}' "
                     "--uncertain [--reader ID]")
    if not rows:
        notes.append(f"no deliveries recorded for {edition}"
                     + (f"; editions in the ledger: {', '.join(known[:10])}" if known else ""))
    if notes:
        table.caption = Text("\n".join(notes))
    return table
