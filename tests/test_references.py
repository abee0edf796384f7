"""Relations from prose: every #N or same-repo PR link that is a PR of this edition or the history, its kind from
the words around it (English and Chinese); near-misses and issue numbers never become relations."""

from __future__ import annotations

import pytest

from prdigest.connect.references import find_references
from tests.prose_table import Row, found, load

TABLE = load("table")


def test_the_table_has_at_least_forty_sentences_in_both_languages() -> None:
    assert len(TABLE) >= 40
    assert sum(any("\u4e00" <= c <= "\u9fff" for c in r.title + r.body) for r in TABLE) >= 6
    assert sum(not r.expect for r in TABLE) >= 8  # near-misses and issues


@pytest.mark.parametrize("where", ["history", "edition"])
@pytest.mark.parametrize("row", TABLE, ids=lambda r: str(r.pr))
def test_each_sentence_gives_the_relations_a_reader_draws(row: Row, where: str) -> None:
    assert found(row, where) == set(row.expect), row.label  # type: ignore[arg-type]


def test_an_issue_number_never_becomes_a_relation_even_with_a_strong_cue() -> None:
    row = Row("vllm-project/vllm", 60100, "Revert #59000", "Fixes #59001, relands #59002", (), (), frozenset())
    assert found(row) == set()                                   # none of them is a PR we know
    assert {r.number for r in find_references(row.title, row.body, row.repo)} == {59000, 59001, 59002}


@pytest.mark.parametrize(("text", "numbers"), [
    ("Step #1, item #2, rank #3, line #42, job #4512, run #4513", set()),
    ("colours: #fff, #0366d6, #000, background #111", set()),
    ("the #1 complaint; ~#300 PRs a week; over #200 contributors", set()),
    ("`#59931` and\n```\n#59932\n```", set()),
    ("<!-- template: FIX #59933 -->", set()),
    ("https://github.com/other/repo/pull/59934 and https://example.com/#59935", set()),
    ("other/repo#59936 but vllm-project/vllm#59937 and PR#59938", {59937, 59938}),
    ("https://github.com/vllm-project/vllm/pull/59939/files and https://github.com/VLLM-project/vllm/pull/59940",
     {59939, 59940}),
    ("issue #59941, RFC (#59942), bug #59943, 问题 #59944", set()),
])
def test_near_misses_are_not_references(text: str, numbers: set[int]) -> None:
    assert {r.number for r in find_references("Title", text, "vllm-project/vllm")} == numbers


def test_a_body_of_65_kb_repeating_its_references_gives_each_number_once_with_its_strongest_kind() -> None:
    body = ("Revert #12345 + #12346 and fix regression from #12347. Since #12345 " * 600 + "x" * 30_000)[:65_536]
    refs = find_references("[Misc] many", body, "vllm-project/vllm")
    assert sorted((r.number, r.kind) for r in refs) == [(12345, "reverts"), (12346, "reverts"), (12347, "fixes")]
