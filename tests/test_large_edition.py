"""A 20,000-PR edition: Slack capped per reader, the email within its budget, the review description bounded."""

from __future__ import annotations

import re

import pytest

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.kernel.models import Edition
from prdigest.review import review_markdown
from prdigest.review.markdown import MAX_DESCRIPTION
from renderers.email import BUDGET, render_email
from renderers.slack import MAX_BLOCKS, MAX_REPLIES, THREAD_KEY, render_slack
from tests.factories import edition, entry

N = 20_000
VERDICTS = ["deep-read", "skim", "skip"]
SUBSYSTEMS = ["kernels", "moe", "attention", "docs", "ci-build"]


@pytest.fixture(scope="module")
def huge() -> tuple[Edition, Variant]:
    entries = [entry(100_000 + i, [SUBSYSTEMS[i % 5]], VERDICTS[i % 3]).model_copy(update={
        "headline": f"Speed up `mod_{i}.py` for case {i}", "rationale": f"Moves `a_{i}` to `b_{i}`. " * 3})
        for i in range(N)]
    ed = edition(entries, language="en")
    return ed, Variant(Filter(), ordered(entries))


@pytest.mark.slow
def test_slack_posts_per_reader_are_capped_with_a_count_of_the_rest(huge) -> None:
    ed, variant = huge
    payloads = render_slack(ed, variant)
    assert len(payloads) <= 1 + MAX_REPLIES + 1 and all(len(p["blocks"]) <= MAX_BLOCKS for p in payloads)
    assert all(p.get(THREAD_KEY) for p in payloads[1:])
    shown = sum(len(re.findall(r"/pull/\d+\|#\d+>", str(p["blocks"]))) for p in payloads[1:-1])
    more = int(re.search(r"([\d,]+) more entries are in the email", payloads[-1]["text"])[1].replace(",", ""))
    assert shown + more == N and shown >= 100
    # Group headers count the whole week, not just what the thread shows.
    assert "· 6,667" in str(payloads[1]["blocks"][0]) or "· 6667" in str(payloads[1]["blocks"][0])


@pytest.mark.slow
def test_the_email_stays_within_its_budget_and_the_text_part_counts_what_it_leaves_out(huge) -> None:
    ed, variant = huge
    email = render_email(ed, variant)
    assert email.size <= BUDGET and email.compact and not email.problems
    assert "lists the first" in email.html and f"{N:,} entries" in email.html
    # The text part is no larger than the HTML part: the entries it lists and a count of the others.
    assert len(email.text.encode("utf-8")) <= email.size
    listed = len(set(re.findall(r"#(\d{6})\b", email.text)))
    more = int(re.search(r"([\d,]+) more entries are not listed", email.text)[1].replace(",", ""))
    assert listed + more == N and listed > 100


@pytest.mark.slow
def test_the_review_description_is_bounded_and_points_to_the_artifact(huge) -> None:
    ed, _ = huge
    text = review_markdown(ed, artifact_hint="the artifact **draft-digest**")
    assert len(text) <= MAX_DESCRIPTION + 5_000
    assert re.search(r"more of 20,000 entries, not listed here:\*\* read them in the artifact", text)
