"""The ``digest status`` table: a ``LedgerReport`` drawn with rich (the core stays free of terminal code).

A wide terminal gets a column per field. Below :data:`WIDE` columns (an 80-column terminal, a phone's SSH
client) the table folds the less read fields into one ``detail`` column, so that every reader, medium,
status and time stays whole on its line instead of nine columns each folded letter by letter.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import JustifyMethod
from rich.table import Table
from rich.text import Text

from prdigest.deliver.ledger import LedgerRow
from prdigest.deliver.status import LedgerReport, ledger_report
from prdigest.kernel.errors import ConfigError
from prdigest.pipeline.compose import command
from prdigest.state.store import StateLocation

#: Columns from which every field has its own column.
WIDE = 140
_STYLE = {"sent": "green", "failed": "red", "pending": "yellow", "sending": "cyan", "uncertain": "magenta"}
_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("reader", "left"), ("medium", "left"), ("recipient", "left"), ("variant", "left"),
    ("status", "left"), ("attempts", "right"), ("provider id", "left"), ("error", "left"),
    ("updated (UTC)", "left"))
#: Longest provider id shown (cut with …): a Message-ID must not fold every row into several lines.
ID_WIDTH = 28


def _cut(text: str, width: int = ID_WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wide(report: LedgerReport) -> Table:
    table = Table(title=Text(report.title))
    for column, justify in _COLUMNS:
        table.add_column(column, justify=justify, overflow="fold")
        if column == "provider id":
            table.columns[-1].no_wrap, table.columns[-1].overflow = True, "ellipsis"
            table.columns[-1].max_width = ID_WIDTH
    for row in report.rows:
        # Text, not markup: an SMTP reply or a Slack error may contain "[…]".
        table.add_row(*(Text(v) for v in (row.reader, row.medium, row.recipient, row.variant)),
                      Text(row.status, style=_STYLE.get(row.status, "")), str(row.attempts),
                      Text(row.provider_id or ""), Text(report.error_of(row)), row.updated_at.replace("+00:00", ""))
    return table


def _detail(report: LedgerReport, row: LedgerRow) -> Text:
    lines = [row.recipient, f"variant {row.variant}"] if row.variant else [row.recipient]
    if row.provider_id:
        lines.append("id " + _cut(row.provider_id, 24))
    if error := report.error_of(row):
        lines.append(error)
    return Text("\n".join(lines))


def _narrow(report: LedgerReport) -> Table:
    # No vertical rules, a rule between rows: the detail column gets the width the borders would take.
    table = Table(title=Text(report.title), box=box.SIMPLE_HEAD, show_lines=True,
                  padding=(0, 1, 0, 0), pad_edge=False)
    for column in ("reader", "medium", "status", "updated (UTC)"):
        table.add_column(column, no_wrap=True)
    table.add_column("detail", overflow="fold", ratio=1)
    for row in report.rows:
        status = Text(row.status, style=_STYLE.get(row.status, ""))
        if row.attempts > 1:
            status.append(f" ×{row.attempts}")
        updated = row.updated_at.replace("+00:00", "").replace("T", " ")[5:16]  # MM-DD HH:MM
        table.add_row(Text(row.reader), Text(row.medium), status, updated, _detail(report, row))
    return table


def status_table(state: StateLocation | str | Path, edition: str, width: int = WIDE) -> Table:
    """One edition's ledger as a table for a terminal ``width`` columns wide (see
    ``prdigest.deliver.status.ledger_report``)."""
    location = StateLocation.parse(state)
    if not location.exists():
        raise ConfigError(f"--state {location}: no state database here, so nothing was delivered from it")
    with command(location) as core:
        report = ledger_report(core.store(), edition)
    table = _wide(report) if width >= WIDE else _narrow(report)
    if report.notes:
        table.caption = Text("\n".join(report.notes))
    return table
