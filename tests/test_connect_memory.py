"""The connect step's plan is compact (issue 38: memory flat in readers): what it keeps for the render step per
reader filter does not grow with the entries the filter selects."""

from __future__ import annotations

import gc
import random
import tracemalloc

from prdigest.connect.plans import Plans
from prdigest.connect.variants import Variant, plan_variants
from prdigest.kernel.models import Edition, Verdict
from prdigest.kernel.vocabulary import Vocabulary
from prdigest.readers.file import Reader
from tests.factories import edition, entry

SUBSYSTEMS = [f"area-{i}" for i in range(12)]
VERDICTS = ["skip", "skim", "deep-read"]


def _drafted(rng: random.Random, n: int = 300) -> Edition:
    return edition([entry(1000 + i, rng.sample(SUBSYSTEMS, rng.choice((1, 1, 2))), rng.choice(VERDICTS),
                          status="draft") for i in range(n)], language="en")


def _readers(rng: random.Random, n: int) -> list[Reader]:
    readers = []
    for i in range(n):
        follow = rng.sample(SUBSYSTEMS, rng.choice((0, 1, 2, 3, 4)))
        exclude = [rng.choice([s for s in SUBSYSTEMS if s not in follow])] if rng.random() < 0.3 else []
        readers.append(Reader(id=f"r-{i}", name=f"R {i}", email=f"r-{i}@example.com", subsystems=tuple(follow),
                              exclude=tuple(exclude), min_verdict=Verdict(rng.choice(VERDICTS)),
                              budget=rng.choice((2, 3, 5))))
    return readers


def test_the_plan_kept_for_the_render_step_holds_no_list_of_entries_per_filter() -> None:
    rng = random.Random(38)
    drafted, readers, vocabulary = _drafted(rng), _readers(rng, 1500), Vocabulary.open()  # one, as in a run
    gc.collect()
    tracemalloc.start()
    try:
        plans = Plans()
        variants, _ = plan_variants(drafted, readers, vocabulary, drafts=True, plans=plans)
        selected = sum(len(v.entries) for v in variants)
        del variants
        gc.collect()
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    groups = len(plans._groups)
    assert groups > 500 and selected > 50 * groups  # thousands of filters selecting dozens of entries each
    # the filters and their readers' lists are kept; the selections take a few dozen bytes each, not 8 per entry
    per_group = held / groups
    assert per_group < 800, f"{per_group:.0f} bytes kept per filter ({groups} filters, {selected} selections)"


def _planned_twice(seed: int) -> tuple[Edition, list[Reader], Vocabulary, Plans, list[Variant], list[Reader]]:
    """A drafted week and 600 readers from ``seed`` planned by the connect step, then approved and planned again from
    its plans as the render step does: the approved edition, readers, vocabulary, plans, variants and idle readers."""
    rng = random.Random(seed)
    drafted, readers, vocabulary = _drafted(rng), _readers(rng, 600), Vocabulary.open()
    plans = Plans()
    plan_variants(drafted, readers, vocabulary, drafts=True, plans=plans)
    approved = drafted.model_copy(update={"entries": [e.model_copy(update={"status": "approved"})
                                                      for e in drafted.entries]})
    reused, idle = plan_variants(approved, readers, vocabulary, plans=plans)
    return approved, readers, vocabulary, plans, reused, idle


def test_the_render_steps_variants_with_equal_selections_share_one_list() -> None:
    approved, readers, vocabulary, plans, reused, _ = _planned_twice(39)
    assert plans.reused == len(plans._groups) and not plans.reselected
    selections = {tuple(e.number for e in v.entries) for v in reused}
    assert len(selections) < len(reused)  # some filters select the same entries
    assert len({id(v.entries) for v in reused}) == len(selections)
    assert [[e.number for e in v.entries] for v in reused] == [
        [e.number for e in v.entries] for v in plan_variants(approved, readers, vocabulary)[0]]


def test_the_render_steps_variants_hold_the_plans_lists_of_readers_not_copies() -> None:
    """Failed before: each variant of the render step held a copy of its filter's list of readers beside the plan's
    (3,088 lists at 10,000 readers, both held to the run's end)."""
    approved, readers, vocabulary, plans, reused, idle = _planned_twice(40)
    assert {id(v.readers) for v in reused} <= {id(g.readers) for g in plans._groups}
    fresh, fresh_idle = plan_variants(approved, readers, vocabulary)
    assert [[r.id for r in v.readers] for v in reused] == [[r.id for r in v.readers] for v in fresh]
    assert [r.id for r in idle] == [r.id for r in fresh_idle]
