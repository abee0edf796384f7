"""An editor's "not a break" in the review: ``accept SYMBOL PATH`` under *Changes* leaves those impacts out of
the reviewed edition and keeps them cleared in the state store (SQLite and PostgreSQL) for later runs and alerts;
a pair that names no impact is refused with the reason, nothing applied."""

from __future__ import annotations

import pytest

from prdigest.connect.impact.cleared import Clearances
from prdigest.kernel.models import Edition, Impact
from prdigest.review.accepted import keep_accepted
from prdigest.review.decision import ReviewDecision, ReviewRejected, apply_decision, changes_text, parse_changes
from prdigest.state.store import open_store
from tests.factories import edition
from tests.factories import entry as make_entry


def _edition() -> Edition:
    hit = Impact(downstream="ascend", path="ds/ops/fused_moe.py", line=7, symbol="vllm.layer.FusedMoE.forward",
                 how="overrides", severity="breaks", fact="signature: FusedMoE.forward(-dtype)", number=101)
    other = hit.model_copy(update={"path": "ds/compat.py", "line": 1, "symbol": "vllm.layer.FusedMoE",
                                   "how": "imports", "fact": "renamed: FusedMoE → FusedMoEFactory", "number": 102})
    entries = [make_entry(101, ["moe"]).model_copy(update={"impact": [hit]}),
               make_entry(102, ["moe"]).model_copy(update={"impact": [other]})]
    return edition(entries, language="en")


def test_an_accept_line_leaves_the_impact_out_and_keeps_it_cleared(state_location: str) -> None:
    fields, errors = parse_changes("accept FusedMoE.forward ds/ops/fused_moe.py\nnote fine")
    assert errors == [] and fields["accept"] == "FusedMoE.forward ds/ops/fused_moe.py"
    decision = ReviewDecision(decision="send", approver="Lin", **fields)
    assert "accept FusedMoE.forward ds/ops/fused_moe.py" in changes_text(decision)
    draft = _edition()
    reviewed = apply_decision(draft, decision)
    assert {e.number: len(e.impact) for e in reviewed.entries} == {101: 0, 102: 1}
    with open_store(state_location) as store:
        assert keep_accepted(store, draft, decision.accept, "Lin") == 1
        later = Clearances(store, draft.repo)
        assert later.covers(draft.entries[0].impact[0]) and not later.covers(draft.entries[1].impact[0])


@pytest.mark.parametrize(("line", "said"), [
    ("accept FusedMoE.forward ds/other.py", "no impact of vllm-project/vllm"),
    ("accept FusedMoE.forward", "is not 'SYMBOL PATH'"),
])
def test_an_accept_that_names_no_impact_is_refused(line: str, said: str) -> None:
    fields, _ = parse_changes(line)
    with pytest.raises(ReviewRejected, match=said):
        apply_decision(_edition(), ReviewDecision(decision="send", approver="Lin", **fields))
