"""The edition record's variants in rows of their own: written only when changed, read one by one when asked for,
checked against the record (and its seal), and a record stored before (its variants in its body) still reads."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from prdigest.kernel.models import Edition, FilterRecord, VariantRecord
from prdigest.state import record as records
from prdigest.state.record import MIGRATIONS, RecordError, SealKey, Status, canonical_json, content_hash
from prdigest.state.store import open_store
from tests.factories import edition, entry

SECRET = "k3Yq-9vT_2mXw7LpR4sZ8dN1cF6hJ0bQ"


def _edition(n: int = 12) -> Edition:
    ed = edition([entry(i, ["moe"] if i % 2 else ["docs"], "skim") for i in range(1, 9)], language="en")
    variants = [VariantRecord(key=f"v{i:03d}", readers=[f"r-{i}", f"s-{i}"], numbers=[1 + i % 8, 2],
                              read_first=[2], lede=f"Lede {i}. Second sentence.",
                              filter=FilterRecord(subsystems=[f"s{i}"])) for i in range(n)]
    return ed.model_copy(update={"variants": variants})


def test_a_record_keeps_its_variants_in_rows_and_its_hash_as_before(state_location: str) -> None:
    ed = _edition()
    with open_store(state_location) as store:
        saved = records.save(store, ed, Status.DRAFTED)
        body, parts = store.fetchone("SELECT body, parts FROM edition_records WHERE key = ?", (ed.key,))
        rows = store.fetchall("SELECT variant FROM edition_variants WHERE key = ? ORDER BY position", (ed.key,))
        loaded = records.load(store, ed.key)
    assert saved.hash == content_hash(ed) == records._digest(canonical_json(ed))  # what reviews bind to
    assert '"variants":[]' in body and "Lede 3" not in body and parts is not None
    assert [r[0] for r in rows] == [v.key for v in ed.variants]
    assert loaded is not None and loaded.edition == ed and loaded.hash == saved.hash and not loaded.partial
    fewer = ed.model_copy(update={"variants": [ed.variants[0].model_copy(update={"lede": "New. Lede."}),
                                               *ed.variants[1:4]]})
    with open_store(state_location) as store:  # one row changed, the rows past the fourth deleted
        assert records.save(store, fewer, Status.DRAFTED).hash == content_hash(fewer)
        again = records.load(store, ed.key)
        assert store.fetchone("SELECT COUNT(*) FROM edition_variants")[0] == 4
    assert again is not None and again.edition == fewer


def test_one_variant_loads_without_reading_the_others(state_location: str) -> None:
    ed = _edition(30)
    with open_store(state_location) as store:
        records.save(store, ed, Status.DRAFTED)
        # every other variant's row made unreadable: reading any of them would fail its check
        store.execute("UPDATE edition_variants SET body = 'not json' WHERE key = ? AND variant NOT IN (?, ?)",
                      (ed.key, "v007", "v021"))
        head = records.load(store, ed.key, variants=False)
        assert head is not None and head.partial and head.edition.variants == []
        assert head.edition.entries == ed.entries
        two = records.variants_of(store, head, ["v021", "v007"])
        assert two == [ed.variants[7], ed.variants[21]]  # in the edition's order
        with pytest.raises(RecordError, match="altered in the state store"):
            records.load(store, ed.key)  # the whole record reads (and checks) every row


def test_an_altered_variant_row_is_refused_when_read(state_location: str) -> None:
    ed = _edition()
    with open_store(state_location) as store:
        records.save(store, ed, Status.DRAFTED)
        store.execute("UPDATE edition_variants SET body = REPLACE(body, 'Lede 4', 'Click here') WHERE key = ?",
                      (ed.key,))
        head = records.load(store, ed.key, variants=False)
        assert head is not None
        assert records.variants_of(store, head, ["v003"]) == [ed.variants[3]]
        with pytest.raises(RecordError, match="variant 'v004' no longer matches"):
            records.variants_of(store, head, ["v004"])
        with pytest.raises(RecordError, match="altered in the state store"):
            records.load(store, ed.key)


def test_a_variant_row_rewritten_with_its_hash_breaks_the_seal(tmp_path: Path) -> None:
    ed, key = _edition(), SealKey.from_secret(SECRET)
    with open_store(str(tmp_path / "s.sqlite")) as store:
        records.save(store, ed, Status.DRAFTED, seal=key)
        head = records.load(store, ed.key, variants=False)
        assert head is not None
        head.check_seal(key)  # a record read without its variants is sealed all the same
        forged = VariantRecord(key="v002", readers=["r-2"], numbers=[1], lede="Forged. Lede.")
        body = json.dumps(forged.model_dump(mode="json"), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        listed = json.loads(store.fetchone("SELECT parts FROM edition_records")[0])
        listed["variants"][2][1] = records._digest(body)
        store.execute("UPDATE edition_variants SET body = ?, hash = ? WHERE variant = 'v002'",
                      (body, records._digest(body)))
        store.execute("UPDATE edition_records SET parts = ?",
                      (json.dumps(listed, ensure_ascii=False, sort_keys=True, separators=(",", ":")),))
        forged_head = records.load(store, ed.key, variants=False)
        assert forged_head is not None and records.variants_of(store, forged_head, ["v002"]) == [forged]
        with pytest.raises(RecordError, match="rewritten in the state store after it was sealed"):
            forged_head.check_seal(key)


def test_a_save_writes_only_the_variant_rows_that_changed(tmp_path: Path) -> None:
    ed = _edition()
    with open_store(str(tmp_path / "s.sqlite")) as store:
        records.save(store, ed, Status.DRAFTED)
        before = dict(store.fetchall("SELECT position, rowid FROM edition_variants"))
        changed = ed.model_copy(update={"variants": [*ed.variants[:5],
                                                     ed.variants[5].model_copy(update={"lede": "New. Lede."}),
                                                     *ed.variants[6:10]]})
        records.save(store, changed, Status.DRAFTED)
        after = dict(store.fetchall("SELECT position, rowid FROM edition_variants"))
        loaded = records.load(store, ed.key)
    assert sorted(after) == list(range(10))  # the two variants gone are deleted
    assert [p for p in after if after[p] != before[p]] == [5]  # only the changed one written again
    assert loaded is not None and loaded.edition == changed


def test_an_edition_read_without_its_variants_is_never_stored_as_it_is(state_location: str) -> None:
    ed = _edition()
    with open_store(state_location) as store:
        records.save(store, ed, Status.DRAFTED)
        head = records.load(store, ed.key, variants=False)
        assert head is not None
        with pytest.raises(RecordError, match="read without its variants cannot be stored"):
            records.save(store, head.edition, Status.DRAFTED)
        assert records.load(store, ed.key).edition == ed  # type: ignore[union-attr]


def test_a_record_stored_before_the_variant_rows_still_reads_and_moves_to_them(tmp_path: Path) -> None:
    ed, key = _edition(), SealKey.from_secret(SECRET)
    state = tmp_path / "s.sqlite"
    with open_store(str(state)) as store:
        store.migrate(records.COMPONENT, MIGRATIONS[:2])  # the schema before: no parts, no edition_variants
        body = canonical_json(ed)
        digest = records._digest(body)
        store.execute("INSERT INTO edition_records (key, repo, since, until, name, revision, status, hash, body, "
                      "run_id, updated_at, seal) VALUES (?, ?, ?, ?, ?, 1, 'published', ?, ?, NULL, ?, ?)",
                      (ed.key, ed.repo, "2026-11-16", "2026-11-23", ed.name, digest, body, "2026-11-23T00:00:00",
                       key.seal(ed.key, 1, "published", digest)))
    with open_store(str(state)) as store:
        old = records.load(store, ed.key)  # migrates the schema, reads the body as it was stored
        assert old is not None and old.edition == ed and old.parts is None and old.hash == digest
        old.check_seal(key)
        head = records.load(store, ed.key, variants=False)
        assert head is not None and records.variants_of(store, head, ["v001"]) == [ed.variants[1]]
        records.mark(store, old, Status.DELIVERED, key)  # the old record's seal is renewed as it is
        delivered = records.load(store, ed.key)
        assert delivered is not None and delivered.status == Status.DELIVERED
        delivered.check_seal(key)
        again = records.save(store, ed, Status.PUBLISHED, replace=True, seal=key)  # stored anew: in rows
        assert again.hash == digest and again.parts is not None
        loaded = records.load(store, ed.key)
        assert loaded is not None and loaded.edition == ed
        loaded.check_seal(key)
    with sqlite3.connect(state) as db:
        assert db.execute("SELECT COUNT(*) FROM edition_variants").fetchone() == (len(ed.variants),)


def test_digest_json_is_written_variant_by_variant_as_json_dumps_would(tmp_path: Path) -> None:
    import gc
    import tracemalloc

    from prdigest.pipeline.edition import write_digest_json

    ed = _edition(3000)
    path = write_digest_json(tmp_path, ed)
    data = ed.model_dump(mode="json")
    data.update(name=ed.name, week=ed.week, key=ed.key)
    assert path.read_bytes() == json.dumps(data, ensure_ascii=False, indent=2).encode("utf-8")
    del data
    gc.collect()
    tracemalloc.start()
    try:
        write_digest_json(tmp_path, ed)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Whole, the text, its bytes and the dumped tree were each the size of the file or more.
    assert peak < 0.5 * path.stat().st_size, (peak, path.stat().st_size)
