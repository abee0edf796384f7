"""Edition history in the state store: every published edition with its entries as sent, replaced when
published again, loaded newest first, and searchable by PR number for later editions."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from prdigest.kernel.models import Edition
from prdigest.state.history import (
    COMPONENT,
    MIGRATIONS,
    delete_edition,
    edition_refs,
    editions,
    past_entries,
    record_edition,
)
from prdigest.state.record import RecordError
from prdigest.state.store import open_store
from tests.factories import WEEK, edition, entry


@pytest.fixture()
def store(state_location: str):
    """A fresh state store: each test runs on a SQLite file and on a real PostgreSQL database."""
    with open_store(state_location) as s:
        yield s


def week(n: int, entries, **extra) -> Edition:
    """The edition of the n-th week after the factory's week."""
    base = edition(entries, language="en")
    return base.model_copy(update={"since": WEEK + timedelta(weeks=n), "until": WEEK + timedelta(weeks=n + 1),
                                   "approver": "Ann", "approved_at": WEEK + timedelta(weeks=n + 1), **extra})


def test_an_edition_round_trips_with_only_its_published_entries_in_order(store) -> None:
    ed = week(0, [entry(5, ["kernels"], "deep-read"), entry(3, ["docs"], "skip", status="rejected"),
                  entry(4, ["moe", "kernels"], status="edited")])
    assert record_edition(store, ed).status == "published"
    [loaded] = editions(store)
    assert loaded == ed.model_copy(update={"entries": ed.published})
    assert [e.number for e in loaded.entries] == [5, 4]
    assert store.fetchone("SELECT version FROM schema_versions WHERE component = ?", (COMPONENT,))[0] == len(MIGRATIONS)


def test_publishing_the_same_edition_again_replaces_it(store) -> None:
    first = week(0, [entry(1, ["kernels"], "deep-read"), entry(2, ["docs"])])
    record_edition(store, first)
    again = week(0, [entry(1, ["kernels"], "skim").model_copy(update={"headline": "Edited"}), entry(2, ["docs"], status="rejected")])
    record_edition(store, again)
    [loaded] = editions(store)
    assert [(e.number, e.verdict.value, e.headline) for e in loaded.entries] == [(1, "skim", "Edited")]
    assert store.fetchone("SELECT COUNT(*) FROM history_subsystems")[0] == 1  # docs row of #2 is gone
    assert len(edition_refs(store)) == 1


def test_editions_are_identified_by_exact_repo_and_window_and_listed_newest_first(store) -> None:
    record_edition(store, week(0, [entry(1, ["kernels"])]))
    record_edition(store, week(2, [entry(3, ["kernels"])]))
    record_edition(store, week(1, [entry(2, ["kernels"])]))
    # Same week start, different end: another edition, not a replacement.
    short = week(1, [entry(9, ["docs"])]).model_copy(update={"until": WEEK + timedelta(weeks=1, days=1)})
    record_edition(store, short)
    other_repo = week(1, [entry(7, ["docs"])]).model_copy(update={"repo": "acme/widgets"})
    record_edition(store, other_repo)
    got = [(e.repo, e.since, e.until) for e in editions(store)]
    assert len(got) == 5
    assert [u for _, _, u in got] == sorted((u for _, _, u in got), reverse=True)
    assert [e.entries[0].number for e in editions(store, "vllm-project/vllm")] == [3, 2, 9, 1]
    assert [e.entries[0].number for e in editions(store, "acme/widgets")] == [7]
    assert [e.entries[0].number for e in editions(store, before=WEEK + timedelta(weeks=2))] in ([2, 7, 9, 1],
                                                                                              [7, 2, 9, 1])
    assert len(editions(store, limit=2)) == 2


def test_past_entries_find_earlier_publications_of_a_pr_by_number_window_and_subsystem(store) -> None:
    record_edition(store, week(0, [entry(10, ["kernels"], "deep-read").model_copy(update={"followups": ["bound hf below 3.0"]}),
                                   entry(11, ["docs"])]))
    record_edition(store, week(1, [entry(10, ["kernels"], "skim"), entry(12, ["moe"])]))
    found = past_entries(store, "vllm-project/vllm", [10, 404])
    assert [(p.edition.week, p.entry.verdict.value) for p in found] == [("2026-W48", "skim"), ("2026-W47", "deep-read")]
    earlier = past_entries(store, "vllm-project/vllm", [10], before=WEEK + timedelta(weeks=1))
    assert [p.entry.followups for p in earlier] == [["bound hf below 3.0"]]
    assert [p.entry.number for p in past_entries(store, "vllm-project/vllm", subsystem="docs")] == [11]
    assert past_entries(store, "acme/widgets", [10]) == []
    many = past_entries(store, "vllm-project/vllm", list(range(1, 2000)))  # chunked under the parameter limit
    assert len(many) == 4


def test_an_edition_stored_with_a_field_this_version_does_not_know_still_loads(store) -> None:
    import hashlib

    record_edition(store, week(0, [entry(1, ["kernels"])]))
    body = json.loads(store.fetchone("SELECT body FROM edition_records")[0])
    body["from_the_future"] = {"x": 1}
    text = json.dumps(body, sort_keys=True)
    store.execute("UPDATE edition_records SET body = ?, hash = ?",
                  (text, "sha256:" + hashlib.sha256(text.encode()).hexdigest()))
    [loaded] = editions(store)
    assert loaded.entries[0].number == 1


def test_the_history_holds_no_copy_of_an_edition_only_an_index_of_its_record(store) -> None:
    record_edition(store, week(0, [entry(1, ["kernels"]), entry(2, ["docs"])]))
    store.execute("UPDATE edition_records SET hash = ?", ("sha256:" + "0" * 64,))
    with pytest.raises(RecordError, match="altered in the state store"):
        editions(store)  # the archive reads the record itself, checked, never a copy of it
    with pytest.raises(RecordError, match="altered in the state store"):
        past_entries(store, "vllm-project/vllm", [1])


def test_editions_the_history_stored_in_full_are_adopted_into_records(state_location: str) -> None:
    ed = week(0, [entry(1, ["kernels"], "deep-read"), entry(2, ["docs"], status="rejected")])
    with open_store(state_location) as old:  # a state database written before the edition record
        old.migrate(COMPONENT, MIGRATIONS[:1])
        key = (ed.repo, ed.since.isoformat(timespec="microseconds"), ed.until.isoformat(timespec="microseconds"))
        old.execute("INSERT INTO history_editions (repo, since, until, name, week, language, approver, approved_at, "
                    "generated_at, recorded_at, entry_count, edition_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key, ed.name, ed.week, ed.language, "Ann", None, key[1], key[1], 1,
                     ed.model_dump_json(exclude={"entries"})))
        old.execute("INSERT INTO history_entries (repo, since, until, number, position, verdict, title, headline, "
                    "author, url, merged_at, subsystems, entry_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*key, 1, 0, "deep-read", "t", "h", "a", "u", key[1], '["kernels"]',
                     ed.entries[0].model_dump_json()))
    with open_store(state_location) as store:
        [loaded] = editions(store)
        assert [e.number for e in loaded.entries] == [1]
        assert [p.entry.number for p in past_entries(store, ed.repo, [1])] == [1]
        assert store.fetchone("SELECT status FROM edition_records")[0] == "delivered"


def test_a_deleted_edition_is_gone_with_its_entries(store) -> None:
    ed = week(0, [entry(1, ["kernels"])])
    record_edition(store, ed)
    assert delete_edition(store, ed.repo, ed.since, ed.until)
    assert not delete_edition(store, ed.repo, ed.since, ed.until)
    assert editions(store) == [] and store.fetchone("SELECT COUNT(*) FROM history_entries")[0] == 0


def test_windows_with_other_time_zones_name_the_same_edition(store) -> None:
    ed = week(0, [entry(1, ["kernels"])])
    shifted = ed.model_copy(update={"since": ed.since.astimezone(timezone(timedelta(hours=8))),
                                    "until": ed.until.astimezone(timezone(timedelta(hours=8)))})
    record_edition(store, ed)
    record_edition(store, shifted)
    assert len(editions(store)) == 1
    assert editions(store)[0].since == datetime(2026, 11, 16, tzinfo=timezone.utc)
