"""Delivery holds a few rows at a time, not the edition's: a deliverer plans its claims from the rows' keys, holds
only the rows it claimed as objects, and reports the rows it did not try from the ledger a page at a time. Real
outbox files, a real SQLite ledger."""

from __future__ import annotations

import gc
from pathlib import Path

from flows.media import default_media
from prdigest.deliver.ledger import LedgerRow
from prdigest.deliver.outbox import OutboxChannel
from prdigest.deliver.run import CLAIM_BATCH, Outcome, deliver, outbox_routes
from prdigest.readers.file import Reader
from tests.delivery_support import SENDER, planned
from tests.factories import edition, entry, open_ledger


def _readers(n: int) -> list[Reader]:
    return [Reader(id=f"r{i:04d}", name=f"Reader {i}", email=f"r{i:04d}@example.com") for i in range(n)]


def _alive(kind: type) -> int:
    return sum(1 for o in gc.get_objects() if type(o) is kind)


def test_a_deliverer_holds_the_rows_it_claimed_not_every_row_and_a_rerun_reports_them_from_the_ledger(
        tmp_path: Path) -> None:
    """Failed before: the edition's every row, read as objects when the run began, was held to its end (600 here)."""
    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = _readers(600)  # more rows than a page of the report's reading (500)
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    deliveries, channels = outbox_routes(planned(ed, readers, ("email",), sender=SENDER), {"email": outbox})
    held: list[int] = []
    gc.collect()
    before = _alive(LedgerRow)  # an earlier test's, if any

    def progress(done: int, total: int) -> None:
        if done % 50 == 0:
            held.append(_alive(LedgerRow) - before)

    ledger = open_ledger(tmp_path / "state.sqlite")
    try:
        report = deliver(ed.id, deliveries, channels, ledger, progress)
        assert [r.reader for r in report.sent] == [r.id for r in readers]  # every one, in the plan's order
        assert len(list((tmp_path / "outbox").iterdir())) == 600
        assert len(held) == 12 and max(held) <= CLAIM_BATCH, held
        again = deliver(ed.id, deliveries, {"outbox-email": outbox}, ledger)  # a re-run: every row sent already
        rows = ledger.rows(ed.key)
    finally:
        ledger.close()
    assert [r.outcome for r in again.results] == [Outcome.ALREADY] * 600
    assert [(r.reader, r.detail) for r in again.results] == [(r.reader, rows[(r.reader, r.medium)].provider_id)
                                                               for r in report.sent]


class _Rows:
    """Planned ledger rows made as they are read (as the delivery loop hands them to the ledger)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self):
        return ((f"reader-{i:05d}", "email", f"v{i % 7}", f"reader-{i:05d}@example.com", f"<{i}.x@example.com>")
                for i in range(self.n))


def test_registering_10000_rows_writes_them_all_a_batch_at_a_time(state_location: str) -> None:
    """Failed before: the rows were made into one list, and copied into another for the statement (the traced
    peak 3.8 MB here; now 0.4 on SQLite, 0.5 on PostgreSQL)."""
    import tracemalloc

    from prdigest.deliver.ledger import Ledger
    from prdigest.state.store import open_store

    with open_store(state_location) as store:
        ledger = Ledger(store)
        ledger.register("e1", _Rows(10))  # the statements prepared before measuring
        gc.collect()
        tracemalloc.start()
        try:
            ledger.register("e2", _Rows(10_000))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        rows = ledger.rows("e2")
    assert len(rows) == 10_000 and {r.status for r in rows.values()} == {"pending"}
    assert rows[("reader-09999", "email")].message_id == "<9999.x@example.com>"
    assert peak < 1_000_000, peak




def _held_per_message(tmp_path: Path, n: int = 1200) -> float:
    """``n`` readers' e-mails delivered to the outbox through a real SQLite ledger: the bytes of Python heap held
    per message between the 200th message and the ``n - 200``-th (past the first claims: the statements and caches
    made once), what pathlib holds left out (it interns every path's parts: the interpreter's table of interned
    strings grows once at a moment that depends on what ran before, whatever delivery keeps)."""
    import pathlib
    import tracemalloc

    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = _readers(n)
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    deliveries, channels = outbox_routes(planned(ed, readers, ("email",), sender=SENDER), {"email": outbox})
    marks = (200, n - 200)
    snapshots: dict[int, tracemalloc.Snapshot] = {}

    def progress(done: int, total: int) -> None:
        if done in marks:
            gc.collect()  # what is alive, not what waits for the cyclic collector (its timing varies)
            snapshots[done] = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(False, pathlib.__file__), tracemalloc.Filter(False, tracemalloc.__file__)])

    ledger = open_ledger(tmp_path / "state.sqlite")
    tracemalloc.start()
    try:
        report = deliver(ed.id, deliveries, channels, ledger, progress)
    finally:
        tracemalloc.stop()
        ledger.close()
    assert [r.reader for r in report.sent] == [r.id for r in readers]  # every one, in the plan's order
    assert [r.detail for r in report.sent] == [str(tmp_path / "outbox" / f"{r.id}.eml") for r in readers]
    grown = sum(stat.size_diff for stat in snapshots[marks[1]].compare_to(snapshots[marks[0]], "filename"))
    return grown / (marks[1] - marks[0])


def test_what_a_deliverer_keeps_per_message_is_its_outcome_not_the_rows_keys(tmp_path: Path) -> None:
    """Failed before: the results and the rows tried were kept in a dictionary and a set keyed by each claimed row's
    own (reader, medium) strings, beside a second index of the plan: ~410 bytes a message here, held to the run's
    end; now ~110, its outcome."""
    per_message = _held_per_message(tmp_path)
    assert per_message < 280, per_message


def test_a_readers_own_message_id_is_not_kept_after_its_message(tmp_path: Path) -> None:
    """Failed before: each reader's Message-ID (too long to be stored as written) was parsed into the shared header
    cache, which no other message reads: ~8.7 KB held a message here until 1,024 of them were (~7 MB); now none."""
    per_message = _held_per_message(tmp_path)
    assert per_message < 1000, per_message


def test_a_delivery_plan_holds_a_few_small_objects_per_message() -> None:
    """Failed before: each planned message's compose was a ``functools.partial`` with its own tuple of arguments
    (~370 bytes a message planned here, held from the plan to the end of delivery: 11,549 messages at 10,000
    readers); now a slotted object (~220 bytes with the delivery and its Message-ID)."""
    import tracemalloc

    from prdigest.deliver.media import ComposeContext
    from prdigest.deliver.run import plan_deliveries
    from tests.delivery_support import rendered_variants

    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = [Reader(id=f"r{i:04d}", name=f"Reader {i}", email=f"r{i:04d}@example.com", slack=f"#c{i:04d}")
               for i in range(2000)]
    registry = default_media()
    variants = rendered_variants(ed, readers, registry)
    media = [registry[name] for name in ("email", "slack")]
    gc.collect()
    tracemalloc.start()
    try:
        plan = plan_deliveries(variants, media, ComposeContext(edition=ed, sender=SENDER))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert [(d.reader.id, d.medium) for d in plan[:3]] == [("r0000", "email"), ("r0000", "slack"), ("r0001", "email")]
    assert len(plan) == 4000 and held / len(plan) < 300, held / len(plan)
    assert plan[0].message("<1.r0000@example.com>").payload["Message-ID"] == "<1.r0000@example.com>"  # the ledger's


def test_a_deliverer_plans_its_claims_from_the_pending_rows_a_page_at_a_time(tmp_path: Path) -> None:
    """Failed before: the (reader, medium) of every pending row was read into one set, at the start of the run and
    of each pass, to plan the claims (~560 KB above what the run holds for these 3,000 rows, ~2 MB at 10,000
    readers); now a page of rows at a time, and a byte per planned message."""
    import tracemalloc

    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = [Reader(id=f"reader-{i:05d}", name=f"Reader {i}", email=f"r{i:05d}@example.com") for i in range(3000)]
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    deliveries, channels = outbox_routes(planned(ed, readers, ("email",), sender=SENDER), {"email": outbox})
    first: list[tuple[int, int]] = []

    def progress(done: int, total: int) -> None:
        if done == 1:  # the claims are planned, the first one made: what is held now, and the peak so far
            first.append(tracemalloc.get_traced_memory())

    ledger = open_ledger(tmp_path / "state.sqlite")
    gc.collect()
    tracemalloc.start()
    try:
        report = deliver(ed.id, deliveries, channels, ledger, progress)
    finally:
        tracemalloc.stop()
        ledger.close()
    assert [r.reader for r in report.sent] == [r.id for r in readers]
    (held, peak), = first
    assert peak - held < 250_000, (held, peak)


def test_a_delivery_plan_holds_no_message_id_per_message_and_the_ledger_keeps_the_first_made() -> None:
    """Failed before: each planned e-mail held its Message-ID, made at plan time and held from the plan to the end of
    delivery (~295 bytes a planned e-mail here with its delivery and compose, 7,759 e-mails at 10,000 readers); now
    the id is made when the ledger registers the row (or when composed without a ledger): ~150 bytes."""
    import tracemalloc

    from prdigest.deliver.media import ComposeContext
    from prdigest.deliver.run import plan_deliveries
    from tests.delivery_support import rendered_variants

    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    readers = _readers(2000)
    registry = default_media()
    variants = rendered_variants(ed, readers, registry)
    gc.collect()
    tracemalloc.start()
    try:
        plan = plan_deliveries(variants, [registry["email"]], ComposeContext(edition=ed, sender=SENDER))
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(plan) == 2000 and held / len(plan) < 200, held / len(plan)
    first, again = plan[0].new_message_id(), plan[0].new_message_id()
    assert first != again and first is not None and first.endswith(f".{ed.key}.r0000@example.com>"), (first, again)


def _held_at_the_first_message(tmp_path: Path, n: int = 2000) -> float:
    """The bytes of Python heap a delivery to the outbox holds per planned message when its first message is sent:
    the plan routed to the outbox, its rows registered in a real SQLite ledger, the deliverer's index of places."""
    import tracemalloc

    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["kernels"], "skim")], language="en")
    plan = planned(ed, _readers(n), ("email",), sender=SENDER)
    outbox = OutboxChannel(tmp_path / "outbox", {m.name: m.outbox_file for m in default_media()})
    held: list[int] = []

    def progress(done: int, total: int) -> None:
        if done == 1:
            gc.collect()
            held.append(tracemalloc.get_traced_memory()[0])

    ledger = open_ledger(tmp_path / "state.sqlite")
    try:
        gc.collect()
        tracemalloc.start()
        deliveries, channels = outbox_routes(plan, {"email": outbox})
        del plan
        report = deliver(ed.id, deliveries, channels, ledger, progress)
    finally:
        tracemalloc.stop()
        ledger.close()
    assert len(report.sent) == n and [r.medium for r in report.sent[:1]] == ["outbox-email"]
    return held[0] / n


def test_a_deliverer_holds_no_string_or_tuple_of_its_own_per_planned_message(tmp_path: Path) -> None:
    """Failed before: each message routed to the outbox held a medium name of its own ("outbox-email", made per
    message), and the deliverer's index of places a (reader, medium) tuple per message: ~410 bytes a planned message
    here when the first was sent; now ~280 (the plan's routed deliveries and their composes, the index by medium and
    reader, the results' slots)."""
    per_message = _held_at_the_first_message(tmp_path)
    assert per_message < 330, per_message
