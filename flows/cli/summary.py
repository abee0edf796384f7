"""What ``digest run`` and ``digest demo`` print at the end: counts, readers served, problems, where to look."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table
from rich.text import Text

from flows.cli.terminal import safe, safe_table

if TYPE_CHECKING:
    from prdigest.pipeline.edition import EditionSummary


def print_summary(summary: EditionSummary, seconds: float) -> None:
    """The run's summary on stdout (every untrusted string through :func:`safe`)."""
    out = Console()
    for notice in summary.notices:  # e.g. subsystems proposed for a repo without a rules file
        out.print(safe(notice, "yellow"))
    if summary.skipped:  # already delivered: nothing was collected, reviewed or sent
        out.print(safe(summary.skipped, "yellow"))
        return
    table = Table(title=f"{summary.edition}: {summary.published}/{summary.entries} entries published")
    table.add_column("verdict")
    table.add_column("entries", justify="right")
    for verdict in ("deep-read", "skim", "skip"):
        table.add_row(verdict, str(summary.per_verdict.get(verdict, 0)))
    out.print(safe_table(table))
    subs = Table(title="Entries per subsystem")
    subs.add_column("subsystem")
    subs.add_column("entries", justify="right")
    for name, n in summary.per_subsystem.items():
        subs.add_row(name, str(n))
    out.print(safe_table(subs))
    readers = Table(title="Readers served")
    readers.add_column("variant")
    readers.add_column("readers")
    readers.add_column("messages", justify="right")
    for key, ids in summary.variants.items():
        readers.add_row(key, ", ".join(ids), str(summary.messages.get(key, 0)))
    for rid in summary.idle_readers:
        readers.add_row(Text("(nothing selected)", style="dim"), rid, "0")
    out.print(safe_table(readers))
    for line in summary.downstreams:  # the readers' own repositories: what was read, what breaks
        out.print(safe(line))
    for problem in summary.problems:
        out.print(safe(problem, "yellow"))
    for rid, medium, err in summary.failed:
        out.print(safe(f"{rid} ({medium}) failed: {err}", "red"))
    if summary.held:
        out.print(safe(summary.held, "bold"))
    elif not summary.published:
        out.print("[bold]No approved entries: nothing was sent[/bold] (readers are spared an empty digest).")
    for rid, medium, err in summary.pending:
        out.print(safe(f"{rid} ({medium}) stays pending after every retry: {err}", "yellow"))
    for rid, medium, err in summary.elsewhere:
        out.print(safe(f"{rid} ({medium}) is being delivered by another run: {err}", "yellow"))
    for rid, medium, err in summary.uncertain:  # may have been delivered: never resent by itself
        out.print(safe(f"{rid} ({medium}) is uncertain (digest status; digest resend --uncertain): {err}", "magenta"))
    if summary.already_sent:
        out.print(f"{summary.already_sent} message(s) were sent by an earlier run of this edition: not sent again.")
    root = Path(summary.out)
    out.print(f"\nDone in {seconds:.1f} s. Open:")
    # A path is printed whole (never folded at the terminal's width, never read as markup) so it can be copied.
    paths = [str(root / "digest.json"), *(str(root / "email" / (key + ".html")) for key in summary.variants)]
    if (root / "outbox").exists():
        paths.append(f"{root / 'outbox'}/")
    if (root / "site" / "index.html").exists():
        paths.append(f"{root / 'site' / 'index.html'}  (the archive; `digest serve {root}` for its search)")
    for path in paths:
        out.print(f"  {path}", soft_wrap=True, markup=False, highlight=False)

