"""The editor sees read-first in the review and reorders it with a ``first 41873 41902`` line under *Changes*."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.kernel.models import Edition, Entry, VariantRecord, Verdict
from prdigest.readers.file import Reader
from prdigest.review import ReviewDecision, apply_decision, changes_text, parse_changes, review_markdown
from prdigest.review.decision import ReviewRejected, check_decision


def _entry(number: int, verdict: Verdict = Verdict.DEEP_READ, subsystems: list[str] | None = None,
           **extra: object) -> Entry:
    return Entry(number=number, verdict=verdict, url=f"https://github.com/o/r/pull/{number}", title=f"PR {number}",
                 author="a", merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc),
                 subsystems=subsystems or ["kernels"], headline=f"Headline {number}",
                 **{"rationale": f"Why {number} matters.", **extra})


def _edition(n: int = 6, ranking: list[int] | None = None) -> Edition:
    entries = [_entry(i, subsystems=["lora"] if i % 2 else ["kernels"]) for i in range(1, n + 1)]
    return Edition(repo="o/r", since=datetime(2026, 11, 16, tzinfo=timezone.utc),
                   until=datetime(2026, 11, 23, tzinfo=timezone.utc), generated_at=datetime.now(timezone.utc),
                   entries=entries, ranking=ranking or list(range(1, n + 1)), language="en",
                   lede="Read #1 first. It matters most.",
                   variants=[VariantRecord(key="lora", readers=["lora-watch"], numbers=[1, 3, 5], read_first=[1, 3, 5],
                                           lede="Three LoRA PRs reach you. Read #1 first.")])


def test_a_first_line_is_read_and_written_back() -> None:
    fields, errors = parse_changes("reject 2\nfirst 5 #3\nnote ok")
    assert errors == [] and fields["first"] == "5 #3" and fields["reject"] == "2"
    decision = ReviewDecision(decision="send", approver="Lin", **fields)
    assert parse_changes(changes_text(decision))[0]["first"] == "5 #3"


def test_first_moves_entries_to_the_head_of_every_readers_read_first() -> None:
    edition = _edition()
    reviewed = apply_decision(edition, ReviewDecision(decision="send", approver="Lin", first="5 4"))
    assert reviewed.ranking == [5, 4, 1, 2, 3, 6]
    readers = [Reader(id="all", name="All", email="all@example.com"),
               Reader(id="lora-watch", name="LoRA", email="lora@example.com", subsystems=("lora",), budget=2)]
    variants = {v.key: v for v in plan_variants(reviewed, readers)[0]}
    assert [e.number for e in variants["all"].read_first] == [5, 4, 1, 2, 3]
    assert [e.number for e in variants["lora_first-2"].read_first] == [5, 1]
    # The drafted ledes named the old order: they are written again from the new one.
    assert "#5" in reviewed.lede and all(v.lede == "" for v in reviewed.variants)


@pytest.mark.parametrize(("first", "reject", "problem"), [
    ("99", "", "first: PR #99 is not in o/r 2026-W47"),
    ("2", "2", "first: PR #2 is also rejected"),
    ("3 3", "", "first: a PR is named twice"),
    ("x", "", "first: 'x' is not a PR number"),
])
def test_a_bad_first_line_is_refused_and_nothing_is_applied(first: str, reject: str, problem: str) -> None:
    decision = ReviewDecision(decision="send", approver="Lin", first=first, reject=reject)
    assert problem in check_decision(_edition(), decision)
    with pytest.raises(ReviewRejected):
        apply_decision(_edition(), decision)


def test_at_300_entries_the_review_lists_read_first_and_flagged_entries_before_the_rest() -> None:
    edition = _edition(300, ranking=[250, 12, 7])
    entries = list(edition.entries)
    entries[99] = _entry(100, Verdict.SKIM, warnings=["grounding failed"], rationale="Flagged in full.")
    edition = edition.model_copy(update={"entries": entries})
    text = review_markdown(edition)
    first = text.index("### Read first (3 of 3 ranked)")
    assert first < text.index("[#250]") < text.index("[#12]") < text.index("[#7]") < text.index("Needs your eye")
    assert text.index("Needs your eye") < text.index("Flagged in full.") < text.index("### The other 299 entries")
    assert "`first 41873 41902`" in text and "`lora` (lora-watch): #1 #3 #5" in text
