"""The watch's record and the clearances on both state backends (a SQLite file and a real PostgreSQL): a (PR,
reader) pair belongs to the first run that recorded it, a run is unfinished until finished, a fix is kept once,
a clearance covers the same fact only."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from prdigest.connect.impact.cleared import Clearances
from prdigest.deliver.alert_log import AlertItem, AlertLine, AlertLog, WatchRun
from prdigest.kernel.models import Impact
from prdigest.state.store import open_store

NOW = datetime(2026, 5, 4, 9, 17, tzinfo=timezone.utc)
LINE = AlertLine("ds/a.py", 3, "vllm.x.FusedMoE", "imports", "renamed: FusedMoE → FusedMoEFactory", text="import x")


def _item(number: int) -> AlertItem:
    return AlertItem(number, f"https://github.com/o/r/pull/{number}", f"PR {number} <b>", (LINE,))


def test_a_pair_is_alerted_by_the_first_run_only_and_runs_resume_until_finished(state_location: str) -> None:
    with open_store(state_location) as store:
        log = AlertLog(store)
        assert log.last_until("o/r") is None
        one = WatchRun("watch:o/r:1", "o/r", NOW - timedelta(days=1), NOW)
        two = WatchRun("watch:o/r:2", "o/r", NOW, NOW + timedelta(days=1))
        log.record(one, {("team", "ascend", "abc"): [_item(1), _item(2)]}, NOW)
        log.record(two, {("team", "ascend", "def"): [_item(2), _item(3)]}, NOW + timedelta(days=1))
        log.record(one, {("team", "ascend", "abc"): [_item(1), _item(2)]}, NOW)  # a re-run records nothing new
        assert {r: [i.number for i in items] for r, (_, _, items) in log.of_run(one.key).items()} == {"team": [1, 2]}
        assert [i.number for i in log.of_run(two.key)["team"][2]] == [3]
        assert log.of_run(one.key)["team"][2][0] == _item(1)  # kept as it was said
        assert [r.key for r in log.unfinished("o/r")] == [one.key, two.key]
        log.finish(one.key, NOW)
        assert [r.key for r in log.unfinished("o/r")] == [two.key]
        assert log.last_until("o/r") == two.until
        first = log.alerted("o/r", "team")[0]
        log.fixed(first, "f1x", NOW + timedelta(days=2, hours=12))
        log.fixed(first, "later", NOW + timedelta(days=5))  # the first fix found stays
        again = log.alerted("o/r", "team")[0]
        assert (again.fixed_sha, again.lead_days) == ("f1x", 2.5)


def test_a_clearance_covers_the_same_fact_only(state_location: str) -> None:
    impact = Impact(downstream="ascend", path="ds/a.py", line=3, symbol="vllm.x.FusedMoE", how="imports",
                    severity="breaks", fact="renamed: FusedMoE → FusedMoEFactory", number=1)
    again = impact.model_copy(update={"fact": "renamed: FusedMoEFactory → MoE", "number": 9})
    with open_store(state_location) as store:
        cleared = Clearances(store, "o/r")
        assert cleared.clear([impact], "lin") == 1 and cleared.clear([impact], "lin") == 0
        later = Clearances(store, "o/r")  # a later run reads it from the store
        assert later.covers(impact) and not later.covers(again)
        assert not Clearances(store, "o/other").covers(impact)
