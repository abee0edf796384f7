"""The calibration's deep-read threshold chosen on held-out probabilities (kept in a real store and applied), its
example weights and per-feature pull, and the measured (not shipped) features of a PR's own words
(benchmarks/calibration_words.py: normalised title tags, hashed title and description words): what moves a verdict
when the labels show it, what does not when they do not, hostile text read without an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.calibration_words import (
    BUCKETS,
    MAX_BODY_WORDS,
    body_features,
    penalty,
    tag,
    text_features,
    title_features,
)
from prdigest.draft import calibrations
from prdigest.draft.calibration import DEEP_READ_AT, KEEP, calibrated, features, fit
from prdigest.draft.calibration_threshold import MIN_DEEP, choose
from prdigest.kernel.models import DraftEntry, PullRequest, Verdict
from prdigest.state.store import open_store

REPO = "vllm-project/vllm-ascend"
TEMPLATE = """<!-- Thanks for sending a pull request! -->
### What this PR does / why we need it?
{}
### Does this PR introduce _any_ user-facing change?
No.
### How was this patch tested?
CI passed.
- vLLM version: v0.13.0
- vLLM main: https://github.com/vllm-project/vllm/commit/2f4e6548efec402b913ffddc8726230d9311948d
Signed-off-by: amy <amy@example.com>
"""


def _pr(number: int, title: str, body: str = "", path: str = "vllm_ascend/worker/runner.py") -> PullRequest:
    return PullRequest.model_validate({
        "number": number, "url": f"https://github.com/{REPO}/pull/{number}", "title": title, "body": body,
        "merged_at": "2026-03-02T00:00:00Z", "files": [{"path": path, "additions": 40, "deletions": 6}],
        "additions": 40, "deletions": 6})


@pytest.mark.parametrize(("raw", "normalised"), [
    ("BugFix", "bugfix"), ("Bug Fix", "bugfix"), ("bugfix", "bugfix"), ("Fix", "bugfix"), ("Feature", "feat"),
    ("Feat", "feat"), ("Docs", "doc"), ("Kernel", "kernel"), ("Ops", "ops"), ("CI/Build", "cibuild"),
    ("Refactor", "refactor"), ("Perf", "perf"), ("v0.9.1-dev", "version"), ("v0.11.0", "version"),
    ("releases/v0.13.0", "version"), ("P/D", "pd"), ("main", "main")])
def test_a_title_tag_is_one_name_however_it_is_spelt(raw: str, normalised: str) -> None:
    assert tag(raw) == normalised
    assert f"tag:{normalised}" in title_features(f"[{raw}] Something (#123)")


def test_the_description_counts_the_authors_words_not_the_template_trailers_or_code() -> None:
    plain = body_features(TEMPLATE.format(""))
    explained = body_features(TEMPLATE.format("The root cause is a stale cache.\n```\nTraceback boom\n```\n> log"))
    # The template's comments and headings, the version stamps, the link and the sign-off are no words; the
    # author's answers are.
    assert plain == body_features("No.\nCI passed.") and len(plain) == 2
    assert explained and all(f.startswith("bw:") and 0 <= int(f[3:]) < BUCKETS for f in explained)
    # The code block and the quoted log are not the author's words.
    assert body_features("The root cause is a stale cache.\nNo.\nCI passed.") == explained
    # The same word lands in the same bucket in every process (crc32, not the per-process str hash).
    assert title_features("Refactor attention") == title_features("refactor ATTENTION")


@pytest.mark.parametrize("text", [
    "\ud800 lone surrogate \udfff in the middle", "\x00\x1b[31mred\x1b[0m\x07 control \r\n characters",
    "[" * 10_000 + "]" * 10_000, "word " * 400_000, "```" * 50_000, "\u202e reversed \u2066 isolate",
    "日本語のタイトル [修复] 中文", ""])
def test_hostile_text_is_read_without_an_exception_and_bounded(text: str) -> None:
    found = text_features(text, text * 2)
    assert all(f.startswith(("tag:", "tw:", "bw:")) for f in found)
    assert len([f for f in found if f.startswith("bw:")]) <= MAX_BODY_WORDS
    pr = _pr(9, text[:300], text)
    assert "bias" in features(pr, [], Verdict.SKIM)


def _examples(pattern: bool) -> tuple[list[tuple[set[str], Verdict]], list[int]]:
    """60 PRs the drafter called skim, two labellers each: with ``pattern``, those whose description explains a
    root cause are the team's deep reads and the rest are skims; without, the same texts with labels unrelated
    to them."""
    examples, groups = [], []
    for i in range(60):
        why = "The root cause: the block table was freed before the copy finished." if i % 3 == 0 else \
            "Renames a helper and tidies imports."
        feats = _worded(_pr(100 + i, f"[BugFix] Change {i}", TEMPLATE.format(why)))
        label = (Verdict.DEEP_READ if i % 3 == 0 else Verdict.SKIM) if pattern else \
            (Verdict.DEEP_READ if i % 4 == 1 else Verdict.SKIM)
        examples += [(feats, label), (feats, label)]
        groups += [100 + i, 100 + i]
    return examples, groups


def _worded(pr: PullRequest) -> set[str]:
    return features(pr, [], Verdict.SKIM) | text_features(pr.title, pr.body)


def test_a_fit_moves_a_verdict_when_the_descriptions_words_show_the_teams_deep_reads() -> None:
    examples, groups = _examples(pattern=True)
    model = fit(examples, groups=groups, penalty=penalty)
    assert model.strength != KEEP
    explained = _pr(900, "[BugFix] Another", TEMPLATE.format("The root cause: the block table was freed early."))
    tidy = _pr(901, "[BugFix] Another", TEMPLATE.format("Renames a helper and tidies imports."))
    assert model.verdict(_worded(explained)) is Verdict.DEEP_READ
    assert model.verdict(_worded(tidy)) is Verdict.SKIM


def test_labels_unrelated_to_the_words_move_no_verdict() -> None:
    examples, groups = _examples(pattern=False)
    model = fit(examples, groups=groups, penalty=penalty)
    assert all(model.verdict(f) is Verdict.SKIM for f, _ in examples)


def test_the_deep_read_threshold_is_where_held_out_probabilities_find_deep_reads_best() -> None:
    # Held-out deep-read probabilities: the labels' deep reads sit at 0.2-0.25, their skims at 0.1 or below.
    probs = [[0.22, 0.7, 0.08]] * 12 + [[0.08, 0.8, 0.12]] * 40 + [[0.24, 0.7, 0.06]] * 2
    labels = [0] * 12 + [1] * 40 + [1] * 2
    at = choose(probs, labels, DEEP_READ_AT)
    assert at <= 0.22 and at > 0.08  # below the default: every deep read found, two skims called deep
    assert choose(probs[:MIN_DEEP - 1] + probs[12:], labels[:MIN_DEEP - 1] + labels[12:], DEEP_READ_AT) == \
        DEEP_READ_AT  # too few deep reads to move it
    # Lowering it would cost agreement (more skims called deep than deep reads found): the default stays.
    crowded = probs[:12] + [[0.2, 0.7, 0.1]] * 40
    assert choose(crowded, labels[:12] + [1] * 40, DEEP_READ_AT) == DEEP_READ_AT


def test_weights_count_a_label_as_a_fraction_and_refuse_what_is_not_one() -> None:
    examples, groups = _examples(pattern=True)
    half = [0.0 if v is Verdict.DEEP_READ else 1.0 for _, v in examples]
    unseen = fit(examples, groups=groups, weights=half)  # the deep reads weigh nothing: nothing to learn
    assert all(unseen.verdict(f) is Verdict.SKIM for f, _ in examples)
    with pytest.raises(ValueError, match="each must be a number ≥ 0"):
        fit(examples, groups=groups, weights=[-1.0] * len(examples))
    with pytest.raises(ValueError, match="3 weights for 120 labelled PRs"):
        fit(examples, groups=groups, weights=[1.0] * 3)


def test_a_tuned_threshold_is_kept_in_a_real_store_and_applied_by_a_run(tmp_path: Path) -> None:
    tuned = fit(_mixed(share=7), source="gold w.jsonl")
    store = open_store(tmp_path / "state.sqlite")
    try:
        calibrations.save(store, REPO, tuned)
        loaded = calibrations.latest(store, REPO)
        raw = json.loads(store.execute("SELECT model FROM calibrations").fetchone()[0])
    finally:
        store.close()
    assert loaded is not None and raw["deep_read_at"] == tuned.deep_read_at == loaded.deep_read_at > DEEP_READ_AT
    draft = DraftEntry(number=5, headline="h", verdict=Verdict.SKIM, rationale="Skim: a change.", drafter="offline")
    sched, kernel = _pr(5, "[sched] Another", path="sched/o.py"), _pr(6, "[kernel] Another", path="kernel/o.py")
    assert calibrated(draft, sched, [], "en", loaded).verdict is Verdict.SKIM
    moved = calibrated(draft, kernel, [], "en", loaded)
    assert moved.verdict is Verdict.DEEP_READ and moved.rationale.startswith("Deep read")


def _mixed(share: int) -> list[tuple[set[str], Verdict]]:
    """72 PRs drafted skim: 12 fused kernels (every one a deep read), 20 scheduler changes of which ``share`` are
    deep reads and the rest skims, 40 docs fixes (skims)."""
    examples = []
    for i in range(72):
        kind = "kernel" if i < 12 else "sched" if i < 32 else "docs"
        label = Verdict.DEEP_READ if kind == "kernel" or (kind == "sched" and (i - 12) < share) else Verdict.SKIM
        examples.append((features(_pr(300 + i, f"[{kind}] Change {i}", path=f"{kind}/m{i}.py"), [],
                                  Verdict.SKIM), label))
    return examples * 3  # three labellers alike


def test_a_fit_raises_its_deep_read_threshold_when_the_labels_call_a_third_of_a_kind_deep() -> None:
    sched = features(_pr(999, "[sched] Another", path="sched/other.py"), [], Verdict.SKIM)
    mostly_skims = _mixed(share=7)  # 35 %: deep-read at 30 % would call every one deep, and be wrong 13 times in 20
    tuned, fixed = fit(mostly_skims), fit(mostly_skims, tune_threshold=False)
    assert fixed.deep_read_at == DEEP_READ_AT and fixed.verdict(sched) is Verdict.DEEP_READ
    assert tuned.deep_read_at is not None and tuned.deep_read_at > DEEP_READ_AT
    assert tuned.verdict(sched) is Verdict.SKIM
    assert tuned.verdict(features(_pr(998, "[kernel] Another", path="kernel/x.py"), [], Verdict.SKIM)) is DEEP
    mostly_deep = fit(_mixed(share=13))  # 65 %: they are deep reads, whatever the threshold
    assert mostly_deep.verdict(sched) is Verdict.DEEP_READ


DEEP = Verdict.DEEP_READ
