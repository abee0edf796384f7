"""Evaluation figures against cases computed by hand: agreement, confusion, deep-read and subsystem P/R/F1,
spreads with ties, empty classes, the worst-disagreement order and McNemar's exact test."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.evaluation.metrics import (
    PRF,
    Spread,
    agreement,
    confusion,
    jaccard_distance,
    subsystem_prf,
    verdict_distance,
    verdict_prf,
)
from prdigest.evaluation.results import EvalRow, EvalRun, RunInfo
from prdigest.evaluation.significance import (
    MIN_DISCORDANT,
    discordant_needed,
    mcnemar_exact,
    paired_test,
)
from prdigest.evaluation.summary import summarize, worst_disagreements
from prdigest.kernel.models import Verdict

D, K, S = Verdict.DEEP_READ, Verdict.SKIM, Verdict.SKIP


def row(number: int, gold: Verdict, got: Verdict, gold_subs: list[str], subs: list[str], **extra: object) -> EvalRow:
    values: dict[str, object] = dict(
        number=number, url=f"https://github.com/o/r/pull/{number}", title=f"PR {number}", gold_verdict=gold,
        gold_subsystems=gold_subs, verdict=got, subsystems=subs, headline="h" * number, rationale="r",
        drafter="offline")
    values.update(extra)
    return EvalRow.model_validate(values)


def run_of(rows: list[EvalRow]) -> EvalRun:
    info = RunInfo(drafter="offline", language="en", repo="o/r", gold="gold.jsonl", gold_sha256="0" * 64,
                   started_at=datetime(2026, 11, 30, tzinfo=timezone.utc))
    return EvalRun(info=info, rows=rows)


# --- verdicts ----------------------------------------------------------------------------------------

def test_confusion_agreement_and_deep_read_precision_recall_match_a_hand_count() -> None:
    # gold→got: D→D, D→D, D→K, K→D, K→K, S→S, S→K  → agreement 4/7; deep: tp 2, fp 1, fn 1
    pairs = [(D, D), (D, D), (D, K), (K, D), (K, K), (S, S), (S, K)]
    matrix = confusion(pairs)
    assert matrix[D] == {D: 2, K: 1, S: 0} and matrix[K] == {D: 1, K: 1, S: 0} and matrix[S] == {D: 0, K: 1, S: 1}
    assert agreement(matrix) == pytest.approx(4 / 7)
    deep = verdict_prf(matrix)
    assert (deep.tp, deep.fp, deep.fn) == (2, 1, 1)
    assert deep.precision == pytest.approx(2 / 3) and deep.recall == pytest.approx(2 / 3)
    assert deep.f1 == pytest.approx(2 / 3)
    skip = verdict_prf(matrix, S)
    assert (skip.precision, skip.recall) == (1.0, 0.5)


def test_empty_classes_are_undefined_not_zero() -> None:
    assert agreement(confusion([])) is None
    no_deep_gold = verdict_prf(confusion([(K, K), (S, K)]))
    assert no_deep_gold.recall is None and no_deep_gold.precision is None and no_deep_gold.f1 is None
    never_said_deep = verdict_prf(confusion([(D, K), (D, S)]))
    assert never_said_deep.precision is None and never_said_deep.recall == 0.0
    all_wrong = PRF(tp=0, fp=2, fn=3)
    assert (all_wrong.precision, all_wrong.recall, all_wrong.f1) == (0.0, 0.0, 0.0)


def test_micro_subsystem_figures_sum_counts_over_prs_before_dividing() -> None:
    micro, per = subsystem_prf([
        (["kernels", "moe"], ["kernels"]),          # tp kernels, fn moe
        (["docs"], ["docs", "ci-build"]),           # tp docs, fp ci-build
        ([], ["other"]),                            # fp other
        (["models"], ["models"]),                   # tp models
    ])
    assert (micro.tp, micro.fp, micro.fn) == (3, 2, 1)
    assert micro.precision == pytest.approx(3 / 5) and micro.recall == pytest.approx(3 / 4)
    assert micro.f1 == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert per["moe"] == PRF(0, 0, 1) and per["moe"].precision is None and per["moe"].recall == 0.0
    assert per["ci-build"] == PRF(0, 1, 0) and per["ci-build"].recall is None
    assert list(per) == sorted(per)


# --- spreads, distances, worst disagreements ---------------------------------------------------------

@pytest.mark.parametrize("values, median, maximum", [
    ([], 0.0, 0.0),
    ([7], 7.0, 7.0),
    ([1, 3, 3, 9], 3.0, 9.0),      # a tie in the middle
    ([4, 1, 10, 2], 3.0, 10.0),    # an even count: the mean of the two middle values
])
def test_spread_median_and_max(values: list[float], median: float, maximum: float) -> None:
    spread = Spread.of(values)
    assert (spread.median, spread.max, spread.n) == (median, maximum, len(values))


def test_verdict_and_subsystem_distances() -> None:
    assert verdict_distance(D, S) == 2 and verdict_distance(K, D) == 1 and verdict_distance(S, S) == 0
    assert jaccard_distance([], []) == 0.0
    assert jaccard_distance(["a", "b"], ["b", "c"]) == pytest.approx(2 / 3)


def test_worst_disagreements_put_two_step_verdict_misses_first_and_break_ties_by_pr_number() -> None:
    rows = [
        row(30, K, D, ["a"], ["a"]),             # one step
        row(20, D, S, ["a"], ["a"]),             # two steps
        row(10, K, D, ["a"], ["a"]),             # one step, same as #30: the lower number first
        row(40, K, K, ["a"], ["b"]),             # subsystems only
        row(50, K, K, ["a"], ["a"]),             # agrees: never listed
        row(5, D, S, ["a"], ["b"]),              # two steps and subsystems wrong: worst of all
    ]
    assert [r.number for r in worst_disagreements(rows)] == [5, 20, 10, 30, 40]
    assert [r.number for r in worst_disagreements(rows, limit=2)] == [5, 20]


def test_summary_counts_fallbacks_grounding_lengths_tokens_and_cache() -> None:
    rows = [
        row(1, D, D, ["a"], ["a"], headline="x" * 10, focus=["ab", "abcd"], tokens_in=100, tokens_out=20,
            cost_usd=0.5, seconds=2.0, drafter="openai:m"),
        row(2, K, D, ["a"], ["a"], headline="x" * 30, focus=["abcdef"], grounding=["`nope.py`"], tokens_in=300,
            tokens_out=40, cost_usd=1.5, seconds=4.0, cached=True, drafter="openai:m"),
        row(3, S, S, ["b"], ["b"], headline="x" * 20, drafter="offline-fallback", seconds=1.0, spent_in=50),
    ]
    figures = summarize(run_of(rows))
    assert figures["n"] == 3 and figures["verdict_agreement"] == pytest.approx(2 / 3)
    assert figures["deep_read_precision"] == 0.5 and figures["deep_read_recall"] == 1.0
    assert figures["grounding_failures"] == 1 and figures["fallbacks"] == 1
    assert figures["lengths"]["headline"] == {"median": 20.0, "max": 30.0}
    assert figures["lengths"]["focus"] == {"median": 4.0, "max": 6.0}
    assert figures["tokens_in"] == 400 and figures["tokens_in_per_entry"] == pytest.approx(400 / 3)
    assert figures["cost_usd"] == 2.0 and figures["cost_usd_per_entry"] == pytest.approx(2 / 3)
    assert figures["seconds_per_entry"]["median"] == 2.0 and figures["seconds_per_entry"]["max"] == 4.0
    assert (figures["cached"], figures["fresh"], figures["spent_tokens_in"]) == (1, 2, 50)
    assert figures["confusion"]["skim"] == {"deep-read": 1, "skim": 0, "skip": 0}


def test_summary_of_no_rows_is_all_undefined_or_zero() -> None:
    figures = summarize(run_of([]))
    assert figures["n"] == 0 and figures["verdict_agreement"] is None and figures["subsystem_f1"] is None
    assert figures["tokens_in_per_entry"] is None and figures["worst_disagreements"] == []


# --- McNemar exact -----------------------------------------------------------------------------------

@pytest.mark.parametrize("b, c, p", [
    (0, 0, 1.0),
    (3, 3, 1.0),                       # a tie: no evidence either way
    (0, 6, 2 / 64),                    # the most lopsided split of 6: 2·(1/2)^6
    (1, 5, 2 * 7 / 64),                # 2·(C(6,0)+C(6,1))/2^6
    (5, 1, 2 * 7 / 64),                # symmetric
    (2, 10, 2 * 79 / 4096),            # 2·(1+12+66)/2^12
    (0, 5, 2 / 32),                    # 5 discordant: even 0:5 is not significant
])
def test_mcnemar_exact_p_values(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p)


def test_discordant_needed_keeps_the_split_and_finds_the_first_significant_size() -> None:
    assert discordant_needed(2, 8) == 12         # 10:2 → p = 0.0386 (11 at 9:2 gives 0.065)
    assert discordant_needed(4, 4) is None and discordant_needed(0, 0) is None


def test_paired_test_says_too_few_to_tell_below_six_discordant_prs() -> None:
    a = [True] * 40 + [False] * 5
    b = [True] * 40 + [True] * 5            # B fixes 5 PRs, breaks none: still too few
    test = paired_test("verdict", a, b)
    assert (test.only_a, test.only_b, test.n) == (0, 5, 45)
    assert test.verdict.startswith("too few to tell") and str(MIN_DISCORDANT) in test.verdict


def test_paired_test_names_the_better_side_when_significant_and_not_otherwise() -> None:
    a = [False] * 7 + [True] * 30
    b = [True] * 7 + [True] * 30
    assert paired_test("verdict", a, b).verdict.startswith("B is better (p = 0.0156")
    mixed_a = [True] * 3 + [False] * 4 + [True] * 30
    mixed_b = [False] * 3 + [True] * 4 + [True] * 30
    verdict = paired_test("verdict", mixed_a, mixed_b).verdict
    assert verdict.startswith("no significant difference (p = 1")
    with pytest.raises(ValueError):
        paired_test("verdict", [True], [True, False])


def test_rows_without_subsystem_labels_count_for_verdicts_only() -> None:
    rows = [row(1, D, D, ["a"], ["a", "b"]), row(2, K, D, ["a"], ["a"], gold_subsystems=None)]
    figures = summarize(run_of(rows))
    assert figures["subsystems_labelled"] == 1 and figures["subsystem_counts"] == {"tp": 1, "fp": 1, "fn": 0}
    assert figures["verdict_agreement"] == 0.5
    assert rows[1].subsystems_right is None and rows[0].subsystems_right is False
    assert [r.number for r in worst_disagreements(rows)] == [2, 1]
