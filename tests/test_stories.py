"""Stories: a [k/N] series (also across two weeks), one author's chain of follow-ups, PRs of one tracking
issue; a number belongs to at most one story."""

from __future__ import annotations

import json

import pytest

from prdigest.connect.relations import find_relations
from prdigest.connect.stories import SeriesPart, find_stories, series_links, series_marker, stem
from tests.connect_factories import entry_of, pr, week_edition


@pytest.mark.parametrize(("title", "marker"), [
    ("[1/3] Add the foo API", (1, 3)), ("[Core][2/3] Wire foo", (2, 3)), ("Wire foo (3/3)", (3, 3)),
    ("2/4: Wire foo", (2, 4)), ("Fix 1/2 of the tests", None), ("[4/3] Nonsense", None), ("[1/1] Alone", None),
])
def test_series_markers(title: str, marker) -> None:
    assert series_marker(title) == marker


def test_stem_drops_the_marker_and_tags() -> None:
    assert stem("[Core][2/3] Wire the foo API") == "Wire the foo API"


def stories_of(prs, verdicts=None, earlier=(), known=frozenset(), week=1):
    entries = [entry_of(p) for p in prs]
    ed = week_edition(week, entries)
    here = [p for p in (SeriesPart(e.number, e.author, *series_marker(e.title), stem(e.title), ed.id.window)
                        for e in entries if series_marker(e.title)) if p]
    found = find_relations(ed, prs, [], series_links(here, earlier))
    return find_stories(ed.entries, prs, found, "en", ed.id.window, earlier,
                        known={p.number for p in prs} | set(known)), found


def test_a_series_across_two_weeks_names_its_earlier_part_and_links_the_parts() -> None:
    earlier = [SeriesPart(101, "bob", 1, 3, "Add the foo API", "2026-W47")]
    prs = [pr(201, "[2/3] Wire the foo API", author="bob", week=1), pr(202, "[3/3] Test the foo API", author="bob",
                                                                       week=1, day=2),
           pr(203, "[2/3] Someone else's series", author="carol", week=1)]
    stories, found = stories_of(prs, earlier=earlier)
    assert [(s.title, s.numbers) for s in stories] == [
        ("@bob's series (parts 2–3 of 3): Wire the foo API; part 1 in 2026-W47", [201, 202])]
    assert [(r.kind, r.number) for r in found[202]] == [("part-of-series", 201)]


def test_a_chain_of_follow_ups_and_a_tracking_issue_each_make_one_story() -> None:
    prs = [pr(10, "[Core] Add X", author="dan", day=1), pr(11, "[Core] Tune X", "Follow-up to #10", author="dan", day=2),
           pr(12, "[Core] Fix X", "Fixes #11", author="dan", day=3),
           pr(20, "[Model] Port A", "Part of #5000", author="eve"), pr(21, "[Model] Port B", "Part of #5000"),
           pr(22, "[Model] Port C", "Tracking issue #5000. Follow-up to #10")]
    stories, _ = stories_of(prs)
    assert [(s.title, s.numbers) for s in stories] == [
        ("@dan's chain of follow-ups: Add X", [10, 11, 12]),
        ("Tracking issue #5000: Port A", [20, 21, 22])]


def test_a_number_belongs_to_at_most_one_story() -> None:
    prs = [pr(1, "[1/2] Add Y", "Part of #900", author="fay"), pr(2, "[2/2] Use Y", "Part of #900", author="fay"),
           pr(3, "Other Y", "Part of #900")]
    stories, _ = stories_of(prs)
    numbers = [n for s in stories for n in s.numbers]
    assert len(numbers) == len(set(numbers)) and [s.numbers for s in stories] == [[1, 2]]  # #3 alone is no story


def test_every_medium_and_the_archive_show_the_lede_stories_relations_and_follow_ups_escaped() -> None:
    from prdigest.connect.variants import Filter, Variant
    from prdigest.kernel.models import EarlierFollowup, Relation, Story, Verdict
    from renderers import render_email, render_slack, render_text
    from renderers.site import build_site

    hostile = "<!channel> <script>x</script> *bold*"
    a, b = entry_of(pr(201, "[2/3] Wire foo", author="bob", week=1)), entry_of(pr(202, "[3/3] Test foo", week=1))
    a = a.model_copy(update={"relations": [Relation(kind="reverts", number=101, edition="2026-W47",
                                                    verdict=Verdict.SKIM)]})
    ed = week_edition(1, [a, b]).model_copy(update={
        "lede": "Two parts of the foo series landed: #201 and #202.",
        "stories": [Story(title=f"Series {hostile}", numbers=[201, 202])],
        "earlier_followups": [EarlierFollowup(from_number=101, from_edition="2026-W47", text=f"Check {hostile}",
                                              status="done", by_number=202),
                              EarlierFollowup(from_number=100, from_edition="2026-W47", text="Bench H200")]})
    variant = Variant(Filter(), ed.entries)
    text = render_text(ed, variant)
    assert "Two parts of the foo series landed" in text and "Reverts #101 (2026-W47, Skim)" in text
    assert "Stories: Series" in text and "✓ #101 (2026-W47): Check" in text and "1 still open" in text
    slack = json.dumps(render_slack(ed, variant), ensure_ascii=False)
    assert "Two parts of the foo series" in json.dumps(render_slack(ed, variant)[0], ensure_ascii=False)
    assert "<!channel>" not in slack and "&lt;!channel&gt;" in slack and "Reverts #101" in slack
    html = render_email(ed, variant).html
    assert "Two parts of the foo series" in html and "<script>x" not in html and "Reverts #101 (2026-W47" in html
    page = next(v for k, v in build_site([ed]).items() if k.startswith("editions/") and k.endswith("index.html"))
    page = page.decode() if isinstance(page, bytes) else page
    assert 'class="lede"' in page and "<script>x" not in page and "&lt;script&gt;" in page
    assert 'href="#pr-201"' in page and "Reverts #101 (2026-W47, Skim)" in page


def test_a_change_merged_reverted_and_relanded_in_one_week_is_one_story() -> None:
    prs = [pr(27512, "[Core] Prefix-cache eviction by frequency", author="alice", day=1),
           pr(28080, 'Revert "[Core] Prefix-cache eviction by frequency (#27512)"', author="bob", day=3),
           pr(28083, "[Core] Reland prefix-cache eviction", "Second try at #27512 after it was reverted in #28080",
              author="alice", day=5),
           pr(30000, "[Misc] Tidy", author="carol", day=2), pr(30001, 'Revert "[Misc] Tidy (#30000)"', day=4)]
    stories, _ = stories_of(prs)
    assert [(s.title, s.numbers) for s in stories] == [
        ("Prefix-cache eviction by frequency: merged, reverted and re-landed", [27512, 28080, 28083]),
        ("Tidy: merged, then reverted", [30000, 30001])]
