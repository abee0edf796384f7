"""An action the editor clears (nobreak) stays cleared for that repo and fact in later editions, until the
upstream changes that symbol again (prdigest/review/cleared_actions.py), on a real SQLite state store."""

from __future__ import annotations

from pathlib import Path

from prdigest.kernel.actions import actions
from prdigest.kernel.models import Change, EntryStatus, PullRequest
from prdigest.review.cleared_actions import cleared_keys, without_cleared
from prdigest.review.decision import ReviewDecision, apply_decision
from prdigest.review.log import record_review
from prdigest.state.store import open_store
from tests.factories import WEEK, edition, entry

PIN = Change(kind="dependency", symbol="CANN_VERSION", path="Dockerfile", before="9.0.0", after="9.1.0",
             language="config", reach="public", reach_how="a runtime requirement (`Dockerfile`)")
ENV = Change(kind="env", symbol="VLLM_X", path="envs.py", before="1", detail="removed", language="config",
             reach="public", reach_how="an environment variable the code reads")


def _pr(number: int, changes: list[Change]) -> PullRequest:
    return PullRequest(number=number, url=f"https://github.com/vllm-project/vllm/pull/{number}", title="t",
                       author="a", merged_at=WEEK, changes=changes)


def test_a_cleared_action_is_left_out_of_later_drafts_until_the_fact_changes(tmp_path: Path) -> None:
    draft = edition([entry(1, ["core"], changes=[PIN], action=actions([PIN], "en"), status="draft"),
                     entry(2, ["core"], changes=[ENV], action=actions([ENV], "en"), status="draft")], "en")
    reviewed = apply_decision(draft, ReviewDecision(decision="send", approver="ed", nobreak="1"))
    assert reviewed.entries[0].action == [] and reviewed.entries[1].action
    store = open_store(tmp_path / "state.sqlite")
    try:
        record_review(store, draft, reviewed)
        assert cleared_keys(store, "vllm-project/vllm") == {"dependency:CANN_VERSION:9.1.0"}
        same = entry(7, ["core"], changes=[PIN], action=actions([PIN], "en"))
        moved = PIN.model_copy(update={"before": "9.1.0", "after": "9.2.0"})
        again = entry(8, ["core"], changes=[moved], action=actions([moved], "en"))
        other = entry(9, ["core"], changes=[ENV], action=actions([ENV], "en"))
        later = without_cleared(store, "vllm-project/vllm", "en",
                                [(_pr(7, [PIN]), same), (_pr(8, [moved]), again), (_pr(9, [ENV]), other)])
        assert [e.action for e in later] == [[], ["Upgrade `CANN` to `9.2.0` before pulling main."],
                                             ["Stop setting the environment variable `VLLM_X`; it was removed."]]
        # Another repository's editions are not affected.
        assert without_cleared(store, "acme/other", "en", [(_pr(7, [PIN]), same)])[0].action == same.action
    finally:
        store.close()
    assert reviewed.entries[0].status is EntryStatus.APPROVED
