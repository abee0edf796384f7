"""Relations: GitHub's revert formats (and near-misses that are not reverts), explicit references, demotion of
a PR reverted in the same edition, the archive's backlinks, and hostile titles that must not forge any."""

from __future__ import annotations

import pytest

from prdigest.connect.relations import Known, demote_reverted, find_relations, is_revert, with_backlinks
from prdigest.kernel.models import Verdict
from renderers.relation_lines import relation_lines
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
MENTIONS_41234 = [("follow-up-of", 41234, "2026-W47", "skim")]


@pytest.mark.parametrize(("title", "body", "expected"), [
    # GitHub's formats
    ('Revert "[Kernel] Fuse MoE align (#41234)"', "", REVERTS_41234),
    ('Revert "[Kernel] Fuse MoE align (#41234)" (#41377)', "", REVERTS_41234),
    ('Revert "[Kernel] Fuse MoE align"', "Reverts vllm-project/vllm#41234", REVERTS_41234),
    ("Undo the fused align", "Reverts #41234\n\nIt broke H100.", REVERTS_41234),
    ('[Bugfix] Revert "[Kernel] Fuse MoE align (#41234)"', "", REVERTS_41234),
    # git revert's body names a commit: not mapped; the exact original title is
    ('Revert "[Kernel] Fuse MoE align"', "This reverts commit 1a2b3c4d5e6f.", REVERTS_41234),
    # a revert of the revert reverts the revert and re-lands the original
    ('Revert "Revert "[Kernel] Fuse MoE align (#41234)" (#41300)"', "",
     [("reverts", 41300, "2026-W47", "deep-read"), ("relands", 41234, "2026-W47", "skim")]),
    # near-misses: not reverts (a plain mention of a PR is a follow-up of it)
    ("Revert to the old MoE align path (#41234)", "", MENTIONS_41234),
    ('Reverting "[Kernel] Fuse MoE align (#41234)"', "", MENTIONS_41234),
    ("Don't revert \"[Kernel] Fuse MoE align (#41234)\"", "", MENTIONS_41234),
    ("Add a revert button to the UI", "This PR reverts nothing; see #41234", MENTIONS_41234),
    ("Keep the fused align", "This does not revert #41234: it only renames a flag.", MENTIONS_41234),
    ("Keep the fused align", "不是回滚 #41234，只是改名。", MENTIONS_41234),
    ("Undo the fused align", "Reverts other-org/vllm#41234", []),
    ("Undo the fused align", "Same as https://github.com/other-org/vllm/pull/41234", []),
    ('Revert "[Kernel] Fuse MoE align v2"', "This reverts commit 1a2b3c4d5e6f.", []),
    ("Fix typo in docs", "```\ngit revert 41234 # Reverts #41234\n```", []),
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
    'Revert "<!channel> (#41377)"',                                      # itself
    'Revert "Future work (#41400)"',                                     # merged after the revert
])
def test_hostile_titles_do_not_forge_relations(title: str) -> None:
    later = pr(41400, "Future work", week=1, day=6)
    p = pr(41377, title, week=1, day=2)
    ed = week_edition(1, [entry_of(p), entry_of(later)])
    assert find_relations(ed, [p, later], HISTORY)[41377] == []


def test_a_claimed_edition_or_verdict_in_a_title_is_never_trusted() -> None:
    assert relations_of("Follow-up to #41234 (2026-W01, deep-read)") == MENTIONS_41234
    # a claimed relation is text: the number is a PR the history knows, so it is a plain mention of it
    assert relations_of("Fix typo (Reverted by #41234 in 2026-W40, deep-read: read that first)") == MENTIONS_41234


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


def test_an_upgrade_and_its_revert_in_one_edition_ask_nothing_but_a_revert_of_last_week_still_does() -> None:
    bump = pr(6110, "[Misc] Bump mooncake version to v0.3.8.post1", day=1)
    back = pr(6164, 'Revert "[Misc] Bump mooncake version to v0.3.8.post1 (#6110)"', day=3)
    ed = week_edition(0, [entry_of(bump).model_copy(update={"action": ["Upgrade mooncake to v0.3.8.post1."]}),
                          entry_of(back).model_copy(update={"action": ["Roll mooncake back to v0.3.7.post2."]})])
    out = {e.number: e for e in demote_reverted(ed.entries, find_relations(ed, [bump, back], []), ed.id.window)}
    assert out[6110].action == [] and out[6164].action == []
    later = week_edition(1, [entry_of(p := pr(41377, 'Revert "[Kernel] Fuse MoE align (#41234)"', week=1))
                             .model_copy(update={"action": ["Roll back the MoE align kernel."]})])
    kept = demote_reverted(later.entries, find_relations(later, [p], [HISTORY[0]]), later.id.window)
    assert kept[0].action == ["Roll back the MoE align kernel."]


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


RELAND_WEEK = [
    pr(27512, "[Core] Prefix-cache eviction by frequency", day=1),
    pr(28080, 'Revert "[Core] Prefix-cache eviction by frequency (#27512)"', "It broke pinned blocks.", day=3),
    pr(28083, "[Core] Reland prefix-cache eviction by frequency",
       "Second try at #27512 after it was reverted in #28080: the eviction order now ignores pinned blocks.", day=5),
]


def _connected(prs, verdicts: dict[int, str], language: str = "zh-CN"):
    from prdigest.draft.offline import OfflineDrafter
    from prdigest.kernel.prtext.restate import restated

    drafter = OfflineDrafter()
    entries = []
    for p in prs:
        draft = drafter.draft(p, ["scheduler-core"], language)
        wanted = Verdict(verdicts[p.number])
        draft = draft.model_copy(update={"verdict": wanted, "rationale": restated(draft.rationale, wanted, language)})
        entries.append(entry_of(p).model_copy(update={"draft": draft}))
    ed = week_edition(0, entries, language)
    found = find_relations(ed, prs, [])
    return {e.number: e for e in demote_reverted(ed.entries, found, ed.id.window, language)}


def test_a_pr_reverted_then_relanded_keeps_its_verdict_and_links_to_the_reland() -> None:
    out = _connected(RELAND_WEEK, {27512: "deep-read", 28080: "skip", 28083: "deep-read"})
    assert out[27512].verdict is Verdict.DEEP_READ and out[27512].rationale.startswith("值得精读：")
    assert relation_lines(out[27512].relations, "en") == [
        "Reverted by #28080 in this edition: read that first", "Re-landed as #28083 in this edition"]
    assert relation_lines(out[28083].relations, "en") == [
        "Re-lands #27512 (this edition)", "Follows up #28080 (this edition)"]
    assert relation_lines(out[27512].relations, "zh-CN")[1] == "已由 #28083 重新合入（本期）"


@pytest.mark.parametrize(("language", "opening"), [("zh-CN", "可略过：本期已被 #28080 回滚；"),
                                                   ("en", "Skip: reverted by #28080 in this edition; ")])
def test_a_demoted_entry_opens_with_its_final_verdict_never_the_drafted_one(language: str, opening: str) -> None:
    out = _connected(RELAND_WEEK[:2], {27512: "deep-read", 28080: "skip"}, language)
    demoted = out[27512]
    assert demoted.verdict is Verdict.SKIP
    assert demoted.rationale.startswith(opening), demoted.rationale
    assert "值得精读" not in demoted.rationale and "Deep read" not in demoted.rationale


def test_an_entry_naming_many_prs_shows_eight_relation_lines_and_counts_the_rest() -> None:
    from prdigest.kernel.models import Relation

    many = [Relation(kind="follow-up-of", number=n, edition="2026-W47", verdict=Verdict.SKIM) for n in range(100, 130)]
    lines = relation_lines([*many, Relation(kind="reverts", number=99, edition="2026-W47")], "en")
    assert len(lines) == 9 and lines[0].startswith("Reverts #99") and lines[-1] == "and 23 more related PRs"
    assert relation_lines(many[:9], "zh-CN")[-1] == "另有 1 个相关 PR"
