"""The cap on a PR's code facts: a giant commit keeps the facts a reader acts on first and counts the rest,
through the week's facts and onto the PR the drafter reads."""

from __future__ import annotations

from datetime import datetime, timezone

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.cap import MAX_FACTS, capped
from prdigest.collect.facts.step import attach_facts
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Change, FileChange, PullRequest

MERGED = datetime(2026, 11, 17, tzinfo=timezone.utc)


def _fact(i: int, kind: str = "tests", **extra: object) -> Change:
    return Change(kind=kind, symbol=f"test_{i}", path=f"tests/t{i}.py", line=i + 1, **extra)  # type: ignore[arg-type]


def test_a_pr_under_the_cap_keeps_every_fact_in_order() -> None:
    facts = [_fact(i) for i in range(5)]
    assert capped(facts, limit=5) == (facts, 0)


def test_over_the_cap_breaking_then_api_facts_are_kept_in_the_diffs_order_and_the_rest_counted() -> None:
    facts = [_fact(i) for i in range(10)]
    facts[7] = Change(kind="removed", symbol="Engine", path="pkg/engine.py", before="class Engine")
    facts[8] = Change(kind="added", symbol="Runner", path="pkg/runner.py", after="class Runner")
    facts[2] = Change(kind="kernel", symbol="fused_moe", path="csrc/moe.cu", after="fused_moe", language="cuda")
    kept, left_out = capped(facts, limit=4)
    assert left_out == 6
    assert kept == [facts[0], facts[2], facts[7], facts[8]]  # the diff's order; the first test fact fills the cap


def test_a_giant_patch_is_capped_on_the_pr_with_a_count_and_a_line_for_the_editor() -> None:
    n = MAX_FACTS + 250
    patch = "@@ -0,0 +1,%d @@\n" % n + "".join(f"+def f_{i}(x):\n" for i in range(n))
    pr = PullRequest(number=7, url="https://github.com/o/r/pull/7", title="Generate the bindings", merged_at=MERGED,
                     files=[FileChange(path="pkg/bindings.py", additions=n, status="added", patch=patch)])
    week = week_facts([pr], surface=Surface(), clone=None)
    assert len(week.changes[7]) == MAX_FACTS and week.omitted == {7: 250}
    assert any(p.startswith("#7: 1,250 code facts") and "250 more" in p for p in week.problems)
    [out], _ = attach_facts([pr], settings=Settings(), surface=Surface(), store=None)
    assert len(out.changes) == MAX_FACTS and out.changes_omitted == 250
