"""The variant plan made once per run: the render step reuses the connect step's grouping and selections, and
selects again exactly the variants the review changed, with the same variants and renderings either way."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from flows.media import default_media
from prdigest.connect.plans import Plans
from prdigest.connect.variants import Variant, draft_variants, plan_variants
from prdigest.deliver.rendered import render_context, render_variants
from prdigest.kernel.config import load_settings
from prdigest.kernel.models import Edition, EntryStatus, Verdict
from prdigest.readers.file import Reader
from tests.factories import edition, entry

SUBSYSTEMS = ["attention", "ci-build", "docs", "kernels", "moe", "tpu"]
VERDICTS = ["skip", "skim", "deep-read"]


def _drafted(rng: random.Random, n: int = 40) -> Edition:
    entries = [entry(i, rng.sample(SUBSYSTEMS, rng.choice((1, 1, 2))), rng.choice(VERDICTS), status="draft")
               for i in range(1, n + 1)]
    ed = edition(entries, language="en")
    return ed.model_copy(update={"ranking": [e.number for e in entries if e.verdict is Verdict.DEEP_READ]})


def _readers(rng: random.Random, n: int = 150) -> list[Reader]:
    readers = []
    for i in range(n):
        follow = rng.sample(SUBSYSTEMS, rng.choice((0, 1, 2)))
        exclude = [rng.choice([s for s in SUBSYSTEMS if s not in follow])] if rng.random() < 0.3 else []
        readers.append(Reader(id=f"r-{i}", name=f"R {i}", email=f"r-{i}@example.com", subsystems=tuple(follow),
                              exclude=tuple(exclude), min_verdict=Verdict(rng.choice(VERDICTS)),
                              budget=rng.choice((2, 5))))
    return readers


def _reviewed(ed: Edition, rejected: set[int] = frozenset(), rejudged: dict[int, str] | None = None) -> Edition:
    rejudged = rejudged or {}
    entries = [e.model_copy(update={
        "status": EntryStatus.REJECTED if e.number in rejected else EntryStatus.APPROVED,
        "verdict": Verdict(rejudged.get(e.number, e.verdict.value))}) for e in ed.entries]
    return ed.model_copy(update={"entries": entries})


def _shape(variants: list[Variant]) -> list[tuple]:
    return [(v.key, [e.number for e in v.entries], [r.id for r in v.readers], [e.number for e in v.read_first],
             v.lede) for v in variants]


def _connected(seed: int) -> tuple[Edition, list[Reader], Plans]:
    rng = random.Random(seed)
    drafted, readers, plans = _drafted(rng), _readers(rng), Plans()
    drafted = drafted.model_copy(update={"variants": draft_variants(drafted, readers, plans=plans)})
    return drafted, readers, plans


@pytest.mark.parametrize("seed", range(6))
def test_a_review_that_rejected_nothing_renders_from_the_connect_plan_unchanged(seed: int) -> None:
    drafted, readers, plans = _connected(seed)
    approved = _reviewed(drafted)
    reused, idle = plan_variants(approved, readers, plans=plans)
    fresh, fresh_idle = plan_variants(approved, readers)
    assert _shape(reused) == _shape(fresh) and idle == fresh_idle
    assert plans.reselected == [] and plans.reused >= len(fresh) > 0  # every filter's, the idle ones' too


@pytest.mark.parametrize("seed", range(6))
def test_a_review_that_rejected_or_rejudged_entries_selects_again_exactly_the_variants_they_touch(seed: int) -> None:
    drafted, readers, plans = _connected(seed)
    rng = random.Random(100 + seed)
    rejected = set(rng.sample(range(1, 41), 4))
    rejudged = {n: rng.choice(VERDICTS) for n in rng.sample(range(1, 41), 4)}
    approved = _reviewed(drafted, rejected, rejudged)
    before = plan_variants(_reviewed(drafted), readers)[0] + []  # every served filter at connect (none rejected)
    reused, idle = plan_variants(approved, readers, plans=plans)
    fresh, fresh_idle = plan_variants(approved, readers)
    assert _shape(reused) == _shape(fresh) and idle == fresh_idle
    touched = {n for n in rejected} | {n for n, v in rejudged.items()
                                         if v != drafted.entries[n - 1].verdict.value}
    held = {v.key for v in before if touched & {e.number for e in v.entries}}
    now = {v.key for v in fresh if touched & {e.number for e in v.entries}}
    assert set(plans.reselected) == held | now and plans.reselected  # no more, no fewer
    assert plans.reused > 0


def test_other_readers_at_render_plan_anew() -> None:
    drafted, readers, plans = _connected(1)
    fewer = readers[:-3]
    reused, _ = plan_variants(_reviewed(drafted), fewer, plans=plans)
    assert _shape(reused) == _shape(plan_variants(_reviewed(drafted), fewer)[0])
    assert plans.reused == 0 and plans.reselected == []


@pytest.mark.parametrize("rejected", [set(), {3, 7, 11}])
def test_the_renderings_are_byte_identical_with_the_plan_reused_or_made_again(tmp_path: Path,
                                                                             rejected: set[int]) -> None:
    drafted, readers, plans = _connected(2)
    approved = _reviewed(drafted, rejected)
    media = default_media("outbox")
    context = render_context(load_settings())

    def files(out: Path, variants: list[Variant], idle: list[Reader]) -> dict[str, bytes]:
        rendered = render_variants(approved, variants, idle, media, context, out=out)
        assert not rendered.problems
        return {str(Path(f).relative_to(out)): Path(f).read_bytes() for f in rendered.files}

    reused = files(tmp_path / "reused", *plan_variants(approved, readers, plans=plans))
    assert plans.reused > 0
    made_again = files(tmp_path / "again", *plan_variants(approved, readers))
    assert reused and reused == made_again
