"""benchmarks/shipped.py: the verdicts the benchmarks score are those a run ships, after the connect step's demotion
of a PR reverted within the week (a reverted op counted deep by the drafter is skip in the email)."""

from __future__ import annotations

from benchmarks.shipped import as_shipped
from prdigest.kernel.models import Verdict
from tests.connect_factories import REPO, pr

DEEP, SKIM, SKIP = Verdict.DEEP_READ, Verdict.SKIM, Verdict.SKIP


def test_a_pr_reverted_within_the_week_is_scored_as_shipped() -> None:
    prs = [pr(1, "[Op] Add moe_gating_top_k", day=1), pr(2, 'Revert "[Op] Add moe_gating_top_k (#1)"', day=2),
           pr(3, "[Core] Eviction by frequency", day=1), pr(4, "[Misc] Tidy", day=3)]
    drafted = {1: DEEP, 2: SKIM, 3: DEEP, 4: SKIP}
    assert as_shipped(prs, drafted, REPO) == {1: SKIP, 2: SKIM, 3: DEEP, 4: SKIP}


def test_a_deep_revert_leaves_its_original_to_skim_and_a_reland_keeps_it() -> None:
    prs = [pr(1, "[Core] Eviction by frequency", day=1), pr(2, 'Revert "[Core] Eviction by frequency (#1)"', day=2),
           pr(5, "[Op] Fused norm", day=1), pr(6, 'Revert "[Op] Fused norm (#5)"', day=2),
           pr(7, "[Op] Reland fused norm", "Second try at #5 after it was reverted in #6", day=3)]
    shipped = as_shipped(prs, {1: DEEP, 2: DEEP, 5: DEEP, 6: SKIP, 7: DEEP}, REPO)
    assert shipped[1] is SKIM  # the revert teaches: the original is its context
    assert shipped[5] is DEEP  # re-landed in the week: it keeps its verdict, as the run does


def test_verdicts_of_prs_not_given_are_kept_and_nothing_is_invented() -> None:
    assert as_shipped([], {9: DEEP}, REPO) == {9: DEEP}
    assert as_shipped([pr(1, "A")], {1: SKIM, 9: DEEP}, REPO) == {1: SKIM, 9: DEEP}
