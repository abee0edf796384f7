"""Printing to a terminal: untrusted text never parsed as Rich markup, never carrying control characters.

PR titles, SMTP replies and error messages can hold ``[/red]`` (Rich markup: a MarkupError traceback
instead of the error), ESC sequences (recolour, clear or retitle the terminal) and bidi overrides (text
that reads differently from what it is). Everything the CLI prints goes through :func:`safe`, as
:class:`~rich.text.Text` (never markup).
"""

from __future__ import annotations

from typing import TypeVar, cast

import typer
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from prdigest.kernel.text import for_terminal

#: Errors and progress: stderr, never wrapped (an error stays one line, however narrow the terminal).
err_console = Console(stderr=True, soft_wrap=True)


def safe(text: object, style: str = "") -> Text:
    """``text`` as Rich ``Text`` without control or bidi characters: printed as it reads, never as markup."""
    return Text(for_terminal(text), style=style)


def print_error(error: object, console: Console) -> None:
    """``error: <message>`` on one console, the message shown literally."""
    console.print(Text.assemble(("error:", "red"), " ", safe(error)), highlight=False)


def fail(error: object) -> typer.Exit:
    """Print ``error: <message>`` on stderr and return the exit (status 2) to raise: ``raise fail(exc) from None``."""
    print_error(error, err_console)
    return typer.Exit(2)


_R = TypeVar("_R", bound=RenderableType)


def _cell(value: _R) -> _R:
    if isinstance(value, Text):
        return cast(_R, Text(for_terminal(value.plain), style=value.style, justify=value.justify))
    if isinstance(value, str):
        return cast(_R, safe(value))
    return value


def safe_table(table: Table) -> Table:
    """``table`` with every cell, its title and caption cleaned by :func:`safe` (cells keep their style)."""
    for column in table.columns:
        column._cells = [_cell(c) for c in column._cells]  # Rich keeps a column's cells in _cells
    table.title = _cell(table.title) if table.title is not None else None
    table.caption = _cell(table.caption) if table.caption is not None else None
    return table
