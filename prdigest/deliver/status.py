"""``digest status EDITION``: one edition's ledger as plain data (rows, counts, notes); ``flows/`` draws it.

The core never imports a terminal library: the shell turns a ``LedgerReport`` into a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from prdigest.deliver.ledger import Ledger, LedgerRow
from prdigest.kernel.storage import Store
from prdigest.state import record as records

#: The statuses in the order the summary names them.
ORDER = ("sent", "failed", "pending", "sending", "uncertain")


@dataclass(frozen=True)
class LedgerReport:
    """What ``digest status`` shows for one edition: a title line, one row per delivery, notes."""

    key: str
    title: str
    rows: list[LedgerRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def error_of(self, row: LedgerRow) -> str:
        """The row's error column: its reason, and for a claimed row who holds it until when."""
        error = row.error or ""
        if row.status == "sending":
            error = f"claimed by {row.owner} until {row.lease_until}" + (f"; {error}" if error else "")
        return error


def ledger_report(store: Store, edition: str) -> LedgerReport:
    """The ledger of one edition in ``store`` (the command's state store), given by its key, its name as
    ``digest run`` prints it, or its exact identity (``repo@since..until``). Uncertain rows are listed with
    what to do about them.

    The state location is shown with its password masked (``StateLocation`` never prints it).
    """
    ledger = Ledger(store)
    key = ledger.resolve(edition) or edition
    identity = ledger.identity(key)
    rows = ledger.rows(key)
    counts = ledger.counts(key)
    known = ledger.editions() if not rows else []
    # its status, hash and entries: none of its variants' rows read
    stored = records.resolve(store, key, variants=False) or records.resolve(store, edition, variants=False)
    repo = stored.edition.repo if stored is not None else None
    others = ledger.unsent(repo, key) if repo else []
    shown = [s for s in ORDER if counts[s] or s in ("sent", "failed", "pending")]
    title = f"{key}: " + ", ".join(f"{counts[s]} {s}" for s in shown)
    notes = []
    if stored is not None:  # the edition itself: where it stands, and which content was sent
        title = f"{title} (edition {stored.status})"
        notes.append(f"edition record: {stored.status}, revision {stored.revision}, content {stored.hash[:19]}…, "
                     f"{len(stored.edition.published)} of {len(stored.edition.entries)} entries published, "
                     + ("sealed" if stored.seal else "not sealed (no delivery or resend sends it as it is)"))
    if identity:
        notes.append(f"{identity[0]} = {identity[1]}")
    name = identity[0] if identity else key
    if counts["pending"]:
        notes.append(f"{counts['pending']} pending: no run sends them by itself once its retries gave up; to send "
                     f"them now: digest resend '{name}' --pending [--reader ID]")
    if counts["failed"]:
        notes.append(f"{counts['failed']} failed: the provider refused them (see each error); once the cause is "
                     f"fixed: digest resend '{name}' --failed [--reader ID]")
    for _, other, n in others:
        notes.append(f"{other} (another edition of this repo) has {n} message{'' if n == 1 else 's'} still "
                     f"pending: digest resend '{other}' --pending")
    if counts["uncertain"]:
        notes.append(f"{counts['uncertain']} uncertain: they may have reached the reader and are never resent "
                     f"on their own; to send them again: digest resend '{identity[0] if identity else key}' "
                     "--uncertain [--reader ID]")
    if not rows:
        notes.append(f"no deliveries recorded for {edition}"
                     + (f"; editions in the ledger: {', '.join(known[:10])}" if known else ""))
    return LedgerReport(key=key, title=title, rows=list(rows.values()), notes=notes)
