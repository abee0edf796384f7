"""The variant records the connect and render steps make are held to the run's end, one per variant (3,088 at
10,000 readers): what each holds is bounded, and they serialise exactly as before (issue 38)."""

from __future__ import annotations

import gc
import json
import random
import tracemalloc

from prdigest.connect.variants import Variant, draft_variants, plan_variants
from prdigest.kernel.models import Edition, FilterRecord, VariantRecord
from prdigest.readers.file import Reader
from prdigest.state import variant_rows
from tests.test_render_memory import _approved, _readers


def _planned(seed: int) -> tuple[Edition, list[Reader], list[Variant]]:
    """A week's approved edition, 600 readers and the variants planned for them, drawn from ``seed``."""
    rng = random.Random(seed)
    approved, readers = _approved(rng), _readers(rng, 600)
    variants, _ = plan_variants(approved, readers)
    return approved, readers, variants


def _per_record(variants: list[Variant]) -> float:
    """The bytes each variant's record holds beside its lists (a pointer per reader and per number: its content)."""
    [v.record() for v in variants[:2]]  # the first records of each class made outside the measure
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        records = [v.record() for v in variants]
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    lists = sum(8 * (len(r.readers) + len(r.numbers) + len(r.read_first)) for r in records)
    return (held - lists) / len(records)


def test_a_variant_record_holds_under_one_and_a_half_kilobytes_beside_its_lists() -> None:
    _, _, variants = _planned(38)
    assert len(variants) > 100
    # ~2,450 bytes a record here beside its lists when each record and its filter had a set of fields set of their
    # own (~1,000 with one set per class)
    per_record = _per_record(variants)
    assert per_record < 1_500, f"{per_record:.0f} bytes a variant record beside its lists"


def test_records_with_one_set_of_fields_set_serialise_and_compare_as_records_made_alone() -> None:
    rng = random.Random(39)
    approved, readers = _approved(rng), _readers(rng, 200)
    records = draft_variants(approved, readers)
    alone = [VariantRecord.model_validate(r.model_dump()) for r in records]
    assert records == alone
    assert [r.model_dump_json() for r in records] == [r.model_dump_json() for r in alone]
    assert [json.loads(r.model_dump_json(exclude_unset=True)) for r in records] == [
        json.loads(r.model_dump_json(exclude_unset=True)) for r in alone]
    # an assignment after the record is made changes that record only
    first, second = records[0], records[1]
    first.lede = "Rewritten."
    assert second.lede != "Rewritten." and second.model_fields_set == set(VariantRecord.model_fields)
    assert first.filter is not None
    assert FilterRecord.model_validate(first.filter.model_dump()) == first.filter


def test_variant_records_read_back_from_the_store_share_one_set_of_fields_set_per_class() -> None:
    rng = random.Random(40)
    approved, readers = _approved(rng), _readers(rng, 300)
    bodies = [r.model_dump_json() for r in draft_variants(approved, readers)]
    assert len(bodies) > 50
    parsed = [variant_rows.parse(body) for body in bodies]
    sets = {id(r.__pydantic_fields_set__) for r in parsed} | {id(r.filter.__pydantic_fields_set__)
                                                                for r in parsed if r.filter is not None}
    assert len(sets) <= 2, f"{len(sets)} sets of fields set held by {len(parsed)} records read back"
    assert [r.model_dump_json() for r in parsed] == bodies
    # a record stored before filters were kept has fewer fields set: its own set, as pydantic made it
    old = variant_rows.parse('{"key": "all", "readers": ["a"], "numbers": [1]}')
    assert old.model_fields_set == {"key", "readers", "numbers"} and old.filter is None


def test_a_variant_records_fields_are_in_a_dictionary_sharing_its_keys_with_the_other_records() -> None:
    """Failed before: each record and its filter's held a dictionary of their own for their fields (~270 and ~180
    bytes), ~1,000 bytes a record here beside its lists; now ~810. They serialise and compare as before (the tests
    above and the golden outputs)."""
    _, _, variants = _planned(41)
    assert len(variants) > 100
    per_record = _per_record(variants)
    assert per_record < 900, f"{per_record:.0f} bytes a variant record beside its lists"
    record = variants[0].record()
    assert record == VariantRecord.model_validate(record.model_dump()) and list(record.__dict__) == list(
        VariantRecord.model_fields)


def test_variants_with_equal_ledes_hold_one_string() -> None:
    """Failed before: every variant (and its record) held a lede of its own, ~400 bytes each, equal ones too (here
    257 variants write 105 ledes: those that differ by their read-first budget, or by what selects nothing)."""
    approved, readers, variants = _planned(42)
    distinct = {v.lede for v in variants}
    assert len(distinct) < len(variants)  # some variants write the same lede
    assert len({id(v.lede) for v in variants}) == len(distinct)
    records = draft_variants(approved, readers)  # the connect step's records hold their variants' ledes
    assert len({id(r.lede) for r in records}) == len({r.lede for r in records}) < len(records)
