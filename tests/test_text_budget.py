"""The e-mail's plain-text part is budgeted like its HTML part: never larger than it, and the two together small
enough that no message, encoded, reaches 200 KB; deep reads keep their full text first."""

from __future__ import annotations

import re

import pytest

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.deliver.email_message import build_email
from prdigest.readers.file import Reader
from renderers.email import render_email
from renderers.text import MESSAGE_BUDGET, render_text
from tests.factories import edition, entry

VERDICTS = ["deep-read", "skim", "skip"]


def _week(n: int, language: str) -> tuple:
    """``n`` entries with long Chinese or English prose, as a real week's drafts are."""
    words = "调度器在预填充阶段合并请求，减少主机与设备之间的同步。" if language == "zh-CN" else \
        "The scheduler merges requests during prefill and cuts host-device syncs. "
    entries = [entry(200_000 + i, ["kernels"], VERDICTS[i % 3]).model_copy(update={
        "headline": f"{words[:20]} `mod_{i}.py`", "rationale": words * 12,
        "focus": [f"`vllm/mod_{i}.py`：{words * 2}" for _ in range(3)], "followups": [words * 2]})
        for i in range(n)]
    ed = edition(entries, language=language)
    return ed, Variant(Filter(), ordered(entries))


@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_the_text_part_of_a_long_week_is_never_larger_than_its_html_and_the_message_stays_under_200_kb(
        language: str) -> None:
    """Failed before: the text part had no cap (every entry in full), so a long week's text outgrew its
    HTML part and the message passed 200 KB."""
    ed, variant = _week(300, language)
    email = render_email(ed, variant)
    html, text = len(email.html.encode()), len(email.text.encode())
    assert text <= html and html + text <= MESSAGE_BUDGET
    msg = build_email(edition=ed, reader=Reader(id="r", name="Ann", email="r@example.com"), subject=email.subject,
                      preheader=email.preheader, html=email.html, text=email.text,
                      sender="digest <digest@example.com>")
    assert len(msg.as_bytes()) < 200_000
    # Deep reads come first and the first of them is in full; the rest is one line each or counted.
    shown = set(re.findall(r"#(\d{6})\b", email.text))
    more = re.search(r"(\d[\d,]*) (?:more entries are not listed|个条目未在本邮件中列出)", email.text)
    counted = int(more[1].replace(",", "")) if more else 0
    assert len(shown) + counted == 300
    # Reading order: the first entry the text shows is the first deep read.
    first_deep = variant.entries[0]
    assert first_deep.verdict.value == "deep-read"
    assert re.findall(r"#(\d{6})\b", email.text)[0] == str(first_deep.number)


def test_a_short_week_keeps_every_entry_in_full_in_the_text_part() -> None:
    ed, variant = _week(6, "en")
    email = render_email(ed, variant)
    assert email.text == render_text(ed, variant)  # within the budget: nothing changes
    assert all(e.rationale[:40] in email.text for e in variant.entries)


def test_a_budget_too_small_for_one_line_each_lists_what_fits_and_counts_the_rest() -> None:
    ed, variant = _week(50, "en")
    text = render_text(ed, variant, budget=3_000)
    assert len(text.encode()) <= 3_000
    shown = len(set(re.findall(r"#(\d{6})\b", text)))
    counted = int(re.search(r"(\d+) more entries are not listed in this email", text)[1])
    assert shown + counted == 50 and 0 < shown < 50
