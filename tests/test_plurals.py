"""English counts agree with their nouns and verbs everywhere a reader sees one: "1 PR", "1 deep read of 1 PR"."""

from __future__ import annotations

import pytest

from prdigest.connect.lede import offline_lede
from prdigest.connect.variants import plan_variants
from prdigest.kernel.models import Relation
from prdigest.kernel.text import Counted
from prdigest.readers.file import Reader
from renderers.site.strings import site_strings
from renderers.view import strings, subject, summary
from tests.factories import edition, entry


@pytest.mark.parametrize(("template", "values", "expected"), [
    ("{n} {n|PR|PRs}", {"n": 1}, "1 PR"), ("{n} {n|PR|PRs}", {"n": 0}, "0 PRs"), ("{n} {n|PR|PRs}", {"n": 2}, "2 PRs"),
    ("{n} {n|file|files}", {"n": "1,024"}, "1,024 files"), ("{n} {n|file|files}", {"n": "1"}, "1 file"),
    ("{a} {a|x|xs}, {b} {b|y|ys}", {"a": 1, "b": 3}, "1 x, 3 ys"),
])
def test_counted_picks_the_form_that_agrees_with_its_number(template: str, values: dict, expected: str) -> None:
    assert Counted(template).format(**values) == expected


def test_a_one_pr_week_says_one_pr_and_one_deep_read_in_every_phrase() -> None:
    one = entry(1, ["moe"], "deep-read").model_copy(update={"relations": [Relation(kind="reverts", number=9,
                                                                                   edition="2026-W46")]})
    ed = edition([one], language="en")
    (variant,), _ = plan_variants(ed, [Reader(id="r", name="R", email="r@example.com")])
    text = " ".join([subject(ed, variant), summary(ed, variant), offline_lede(ed),
                     strings("en")["files"].format(n="1"), strings("en")["problems"].format(n=1, numbers="#1"),
                     site_strings("en")["intro"].format(editions=1, entries=1),
                     site_strings("en")["total_entries"].format(n=1)])
    assert "1 deep read of 1 PR" in text and "1 PR this week" in text
    assert "This week 1 PR was merged" in text and "1 PR reverts an earlier change." in text
    assert "1 file" in text and "1 entry could not" in text and "1 edition, 1 entry." in text
    for wrong in ("1 PRs", "1 deep reads", "1 entries", "1 files", "1 editions", "1 PR revert "):
        assert wrong not in text, wrong
