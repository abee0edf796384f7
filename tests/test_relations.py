"""Relations: GitHub's revert formats (and near-misses that are not reverts), explicit references, demotion of
a PR reverted in the same edition, the archive's backlinks, and hostile titles that must not forge any."""

from __future__ import annotations

import pytest

from prdigest.models import Verdict
from prdigest.relations import Known, demote_reverted, find_relations, is_revert, with_backlinks
from renderers.connect import relation_lines
from tests.connect_factories import REPO, entry_of, pr, week_edition

# History: week 0 published #41234 (skim) and #41300 (a revert of it, deep-read).
ORIGINAL = pr(41234, "[Kernel] Fuse MoE align", week=0, day=1)
HISTORY = [
    Known(41234, "2026-W47", "[Kernel] Fuse MoE align", "alice", ORIGINAL.merged_at, Verdict.SKIM),
    Known(41300, "2026-W47", 'Revert "[Kernel] Fuse MoE align (#41234)"', "bob", pr(41300, "", day=3).merged_at,
          Verdict.DEEP_READ),
]


def relations_of(title: str, body: str = "", history=HISTORY) -> list[tuple[str, int, str, str | None]]:
    """The relations the week-1 PR #41377 with ``title`` and ``body`` gets."""
    p = pr(41377, title, body, week=1)
    ed = week_edition(1, [entry_of(p)])
    found = find_relations(ed, [p], history)[41377]
    return [(r.kind, r.number, r.edition, r.verdict.value if r.verdict else None) for r in found]


REVERTS_41234 = [("reverts", 41234, "2026-W47", "skim")]


@pytest.mark.parametrize(("title", "body", "expected"), [
    # GitHub's formats
    ('Revert "[Kernel] Fuse MoE align (#41234)"', "", REVERTS_41234),
    ('Revert "[Kernel] Fuse MoE align (#41234)" (#41377)', "", REVERTS_41234),
    ('Revert "[Kernel] Fuse MoE align"', "Reverts vllm-project/vllm#41234", REVERTS_41234),
    ("Undo the fused align", "Reverts #41234\n\nIt broke H100.", REVERTS_41234),
    ('[Bugfix] Revert "[Kernel] Fuse MoE align (#41234)"', "", REVERTS_41234),
    # git revert's body names a commit: not mapped; the exact original title is
    ('Revert "[Kernel] Fuse MoE align"', "This reverts commit 1a2b3c4d5e6f.", REVERTS_41234),
    # a revert of the revert (re-applying) reverts the revert
    ('Revert "Revert "[Kernel] Fuse MoE align (#41234)" (#41300)"', "",
     [("reverts", 41300, "2026-W47", "deep-read")]),
    # near-misses: not reverts
    ("Revert to the old MoE align path (#41234)", "", []),
    ('Reverting "[Kernel] Fuse MoE align (#41234)"', "", []),
    ("Don't revert \"[Kernel] Fuse MoE align (#41234)\"", "", []),
    ("Add a revert button to the UI", "This PR reverts nothing; see #41234", []),
    ("Undo the fused align", "Reverts other-org/vllm#41234", []),
    ('Revert "[Kernel] Fuse MoE align v2"', "This reverts commit 1a2b3c4d5e6f.", []),
    ("Fix typo in docs", "A line that mentions Reverts #41234 later", []),
])
def test_revert_formats_and_near_misses(title: str, body: str, expected: list) -> None:
    assert relations_of(title, body) == expected


@pytest.mark.parametrize(("title", "body"), [
    ('Revert "x (#41234)"', ""), ("Undo", "Reverts #41234"), ('Revert "anything"', "This reverts commit abcdef1."),
])
def test_is_revert_accepts_githubs_formats(title: str, body: str) -> None:
    assert is_revert(pr(1, title, body), REPO)


def test_explicit_references_follow_up_and_fix_only_known_prs() -> None:
    body = "Follow-up to #41234.\nFixes #41300\nFixes #777 (an issue)\nPart of #9999"
    assert relations_of("[Kernel] Tune MoE align", body) == [
        ("follow-up-of", 41234, "2026-W47", "skim"), ("fixes", 41300, "2026-W47", "deep-read")]


@pytest.mark.parametrize("title", [
    'Revert "Make it faster (#99999)"',                                  # a number nobody published
    "Fix typo (Reverted by #41234 in 2026-W40, deep-read: read that first)",  # a claimed relation is text
    'Revert "<!channel> (#41377)"',                                      # itself
    'Revert "Future work (#41400)"',                                     # merged after the revert
])
def test_hostile_titles_do_not_forge_relations(title: str) -> None:
    later = pr(41400, "Future work", week=1, day=6)
    p = pr(41377, title, week=1, day=2)
    ed = week_edition(1, [entry_of(p), entry_of(later)])
    assert find_relations(ed, [p, later], HISTORY)[41377] == []


def test_a_claimed_edition_or_verdict_in_a_title_is_never_trusted() -> None:
    found = relations_of("Follow-up to #41234 (2026-W01, deep-read)")
    assert found == [("follow-up-of", 41234, "2026-W47", "skim")]


def test_a_pr_reverted_in_the_same_edition_is_demoted_unless_the_revert_teaches() -> None:
    a, b, c = (pr(10, "[Core] Change A"), pr(11, "[Core] Change B"), pr(12, "[Core] Change C"))
    ra = pr(20, 'Revert "[Core] Change A (#10)"', day=3)
    rb = pr(21, 'Revert "[Core] Change B (#11)"', day=3)
    rc = pr(22, 'Revert "[Core] Change C (#12)"', day=3)
    rrc = pr(23, 'Revert "Revert "[Core] Change C (#12)" (#22)"', day=4)  # C re-applied
    entries = [entry_of(a, "deep-read"), entry_of(b, "deep-read"), entry_of(c, "deep-read"),
               entry_of(ra, "skim"), entry_of(rb, "deep-read"), entry_of(rc, "skim"), entry_of(rrc, "skim")]
    ed = week_edition(0, entries)
    found = find_relations(ed, [a, b, c, ra, rb, rc, rrc], [])
    out = {e.number: e for e in demote_reverted(ed.entries, found, ed.id.window)}
    assert out[10].verdict is Verdict.SKIP       # a plain revert: nothing left to read
    assert out[11].verdict is Verdict.SKIM       # the revert is a deep read: the original is its context
    assert out[12].verdict is Verdict.DEEP_READ  # reverted, then re-applied
    assert relation_lines(out[10].relations, "en") == ["Reverted by #20 in this edition: read that first"]
    assert relation_lines(out[20].relations, "en") == ["Reverts #10 (this edition)"]


def test_the_archive_shows_a_later_revert_on_the_earlier_entry() -> None:
    first = week_edition(0, [entry_of(ORIGINAL)])
    p = pr(41377, 'Revert "[Kernel] Fuse MoE align (#41234)"', week=1)
    second = week_edition(1, [entry_of(p)])
    second = second.model_copy(update={"entries": demote_reverted(
        second.entries, find_relations(second, [p], [HISTORY[0]]), second.id.window)})
    old, new = with_backlinks([second, first])[::-1]
    assert relation_lines(old.entries[0].relations, "en") == ["Reverted by #41377 in 2026-W48: read that first"]
    assert relation_lines(new.entries[0].relations, "en") == ["Reverts #41234 (2026-W47, Skim)"]
    assert relation_lines(new.entries[0].relations, "zh-CN") == ["回滚了 #41234（2026-W47，值得快速阅读）"]
