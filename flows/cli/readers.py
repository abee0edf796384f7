"""``digest readers``: who the readers file names, and what each reader chose for themselves (``digest web``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from flows.cli.options import state_option
from flows.cli.terminal import print_error, safe_table
from prdigest.kernel.errors import DigestError
from prdigest.kernel.yamlfile import load_yaml_model

console = Console(stderr=True, soft_wrap=True)


def readers(
    readers_file: Optional[Path] = typer.Option(None, "--readers", help="readers.yaml (default: the shipped example)."),
    repo: Optional[str] = typer.Option(None, "--repo", help="Only the choices made for OWNER/NAME's digest "
                                       "(default: every repo in the state database)."),
    state: Optional[str] = state_option(),
) -> None:
    """List the readers of a readers file with their filter and, per repo, the choices they made on the
    preferences page (digest web): unsubscribed, subsystems, lowest verdict, budget, media. The next edition applies
    them; the readers file stays the list of who exists."""
    from prdigest.kernel.config import load_settings
    from prdigest.pipeline.compose import command
    from prdigest.readers.file import ReadersFile, example_readers_path
    from prdigest.readers.selfservice import ReaderChoices, addresses

    try:
        settings = load_settings(state=state)
        path = readers_file or example_readers_path()
        listed = load_yaml_model(path, ReadersFile, what="readers").readers
        with command(settings) as core:
            stored = ReaderChoices(core.store()).all_choices()
    except DigestError as exc:
        print_error(exc, console)
        raise typer.Exit(2) from None
    table = Table(title=f"Readers of {path}")
    for column in ("reader", "media", "readers file", "repo", "their choices", "changed"):
        table.add_column(column)
    for reader in listed:
        media = ", ".join(addresses(reader))
        base = _filter(reader.subsystems, reader.exclude, reader.min_verdict.value, reader.budget)
        mine = [(r, c) for (r, rid), c in stored.items() if rid == reader.id and (repo is None or r == repo)]
        if not mine:
            table.add_row(reader.id, media, base, "", Text("(as the file says)", style="dim"), "")
        for i, (r, choice) in enumerate(mine):
            shown = choice.shown()
            prefs = "; ".join(f"{k}: {', '.join(v) if isinstance(v, list) else v}"
                              for k, v in choice.preferences.shown().items())
            shown = f"{shown}; {prefs}" if shown and prefs else shown or prefs or "(as the file says)"
            table.add_row(reader.id if i == 0 else "", media if i == 0 else "", base if i == 0 else "", r,
                          Text(shown, style="bold red" if choice.any_unsubscribed else ""), choice.updated_at)
    Console(soft_wrap=True).print(safe_table(table))


def _filter(subsystems: tuple[str, ...], exclude: tuple[str, ...], min_verdict: str, budget: int) -> str:
    from prdigest.readers.file import DEFAULT_BUDGET

    text = ", ".join(subsystems) or "all"
    if exclude:
        text += f"; not {', '.join(exclude)}"
    if min_verdict != "skip":
        text += f"; ≥ {min_verdict}"
    return text if budget == DEFAULT_BUDGET else f"{text}; budget {budget}"

