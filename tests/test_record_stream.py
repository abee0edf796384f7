"""An edition record's save streams its variants: each one serialised, hashed into the whole edition's hash and
written (when changed) before the next, so a save never holds every variant's JSON at once; the hash is the one
the whole canonical JSON gives, as before."""

from __future__ import annotations

import gc
import tracemalloc
from pathlib import Path

from prdigest.kernel.models import Edition, FilterRecord, VariantRecord
from prdigest.state import record as records
from prdigest.state import variant_rows
from prdigest.state.record import Status, canonical_json, content_hash
from prdigest.state.store import open_store
from tests.factories import edition, entry


def _edition(n: int, readers: int = 3) -> Edition:
    """An edition of ``n`` variants of ``readers`` readers each, their JSON about 1 KB as at 10,000 readers."""
    ed = edition([entry(i, ["moe"] if i % 2 else ["docs"], "skim") for i in range(1, 9)], language="en")
    variants = [VariantRecord(key=f"v{i:05d}", readers=[f"reader-{i:05d}-{r}" for r in range(readers)],
                              numbers=list(range(1, 60)), read_first=[2, 3], lede=f"Lede {i}. " + "Words. " * 60,
                              filter=FilterRecord(subsystems=[f"s{i}"])) for i in range(n)]
    return ed.model_copy(update={"variants": variants})


def _bodies(ed: Edition) -> int:
    """The size of every variant's canonical JSON together."""
    return sum(len(variant_rows._canonical(v.model_dump(mode="json"))) for v in ed.variants)


def test_a_save_holds_a_few_variants_json_at_a_time_not_every_variants(tmp_path: Path) -> None:
    """Failed before: the save serialised every variant before writing any (3,000 variants: the peak was more
    than all their JSON together)."""
    ed = _edition(3000)
    total = _bodies(ed)
    with open_store(str(tmp_path / "s.sqlite")) as store:
        records.ensure_schema(store)
        gc.collect()
        tracemalloc.start()
        try:
            saved = records.save(store, ed, Status.DRAFTED)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        loaded = records.load(store, ed.key)
    assert saved.hash == content_hash(ed)
    assert loaded is not None and loaded.edition == ed
    # What stays is each variant's key and hash (the record's parts), a tenth of their JSON here.
    assert peak < 0.3 * total, (peak, total)


def test_the_hash_of_a_streamed_save_is_the_whole_canonical_jsons_and_a_stored_record_keeps_it(
        state_location: str) -> None:
    ed = _edition(150)  # more variants than one batch of rows
    whole = records._digest(canonical_json(ed))  # the content hash as it has always been computed: all at once
    with open_store(state_location) as store:
        saved = records.save(store, ed, Status.DRAFTED)
        assert saved.hash == whole
        stored = store.fetchone("SELECT hash, parts FROM edition_records WHERE key = ?", (ed.key,))
        assert stored[0] == whole
        assert variant_rows.Parts.parse(stored[1]).variants == [
            (v.key, variant_rows.digest(variant_rows._canonical(v.model_dump(mode="json")))) for v in ed.variants]
        again = records.save(store, ed, Status.APPROVED, expect=saved)  # stored again, nothing changed
        loaded = records.load(store, ed.key)
    assert again.hash == whole and again.parts == saved.parts
    assert loaded is not None and loaded.hash == whole and loaded.edition == ed


def test_changed_variants_across_batches_are_written_and_the_rest_left_as_stored(tmp_path: Path) -> None:
    ed = _edition(200)
    with open_store(str(tmp_path / "s.sqlite")) as store:
        first = records.save(store, ed, Status.DRAFTED)
        before = dict(store.fetchall("SELECT position, rowid FROM edition_variants"))
        changed = [*ed.variants[:170]]
        for i in (3, 64, 65, 130):  # in the first, second and third batch of rows
            changed[i] = changed[i].model_copy(update={"lede": f"New {i}. Lede."})
        fewer = ed.model_copy(update={"variants": changed})
        second = records.save(store, fewer, Status.DRAFTED, expect=first)
        after = dict(store.fetchall("SELECT position, rowid FROM edition_variants"))
        loaded = records.load(store, ed.key)
    assert sorted(after) == list(range(170))  # the 30 variants gone are deleted
    assert sorted(p for p in after if after[p] != before[p]) == [3, 64, 65, 130]
    assert second.hash == content_hash(fewer)
    assert loaded is not None and loaded.edition == fewer


def test_the_approved_record_keeps_the_reviewed_records_variants_not_an_equal_copy_of_each() -> None:
    """Failed before: the approved record's save after the render step made a new record of every rendered variant,
    equal to the reviewed one, and both were held while it was saved (and the copies to the run's end): 3,088 of
    each at 10,000 readers. Now a variant the render step planned as reviewed is the reviewed record's object."""
    from prdigest.connect.variants import plan_variants
    from prdigest.deliver.rendered import Rendered, RenderedVariant
    from prdigest.pipeline.edition import EditionPipeline
    from prdigest.readers.file import Reader

    ed = edition([entry(i, [("moe", "docs", "kernels")[i % 3]], ("skim", "deep-read")[i % 2]) for i in range(1, 13)],
                 language="en")
    readers = [Reader(id=f"r{i:03d}", name=f"R {i}", email=f"r{i:03d}@example.com",
                      subsystems=[("moe", "docs", "kernels")[i % 3]] if i % 4 else [],
                      min_verdict=("skip", "deep-read")[i % 2]) for i in range(40)]
    variants, idle = plan_variants(ed, readers)
    assert len(variants) > 3
    reviewed = ed.model_copy(update={"variants": [v.record() for v in variants]})
    variants[1].lede = "Another lede. It has two sentences."  # the render step's lede differs for this one
    rendered = Rendered([RenderedVariant(v, ["email"]) for v in variants], idle)
    gc.collect()
    before = sum(1 for o in gc.get_objects() if type(o) is VariantRecord)
    approved = EditionPipeline.with_problems(reviewed, rendered)
    gc.collect()
    made = sum(1 for o in gc.get_objects() if type(o) is VariantRecord) - before
    assert approved.variants == [v.record() for v in variants]  # what is stored is what was rendered
    assert canonical_json(approved) == canonical_json(reviewed.model_copy(update={
        "problems": [], "variants": [v.record() for v in variants]}))
    assert [a is r for a, r in zip(approved.variants, reviewed.variants)] == [i != 1 for i in range(len(variants))]
    assert made == 1, made  # only the variant whose lede changed
