"""The ``digest status`` table: a ``LedgerReport`` drawn with rich (the core stays free of terminal code)."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table
from rich.text import Text

from prdigest.delivery.status import ledger_report
from prdigest.store import StateLocation

_STYLE = {"sent": "green", "failed": "red", "pending": "yellow", "sending": "cyan", "uncertain": "magenta"}
_COLUMNS = (("reader", "left"), ("medium", "left"), ("recipient", "left"), ("variant", "left"),
            ("status", "left"), ("attempts", "right"), ("provider id", "left"), ("error", "left"),
            ("updated (UTC)", "left"))


def status_table(state: StateLocation | str | Path, edition: str) -> Table:
    """One edition's ledger as a table (see ``prdigest.delivery.status.ledger_report``)."""
    report = ledger_report(state, edition)
    table = Table(title=Text(report.title))
    for column, justify in _COLUMNS:
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for row in report.rows:
        # Text, not markup: an SMTP reply or a Slack error may contain "[…]".
        table.add_row(*(Text(v) for v in (row.reader, row.medium, row.recipient, row.variant)),
                      Text(row.status, style=_STYLE.get(row.status, "")), str(row.attempts),
                      Text(row.provider_id or ""), Text(report.error_of(row)), row.updated_at.replace("+00:00", ""))
    if report.notes:
        table.caption = Text("\n".join(report.notes))
    return table
