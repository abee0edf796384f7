"""The run's artifacts in the Prefect UI (flows/artifacts.py), under a real (ephemeral) Prefect API."""

from __future__ import annotations

import pytest

from prdigest.deliver.run import DeliveryReport, DeliveryResult, Outcome
from prdigest.review import ReviewDecision, apply_decision
from tests.factories import edition, entry


@pytest.mark.prefect
def test_delivery_table_artifact_lists_what_was_sent_to_whom(prefect_api) -> None:
    from prefect import flow
    from prefect.artifacts import Artifact

    from flows.artifacts import delivery_artifact

    reviewed = apply_decision(edition([entry(1, ["kernels"], status="draft"), entry(2, ["moe"], status="draft")]),
                              ReviewDecision(decision="send", approver="Ann"))
    report = DeliveryReport([
        DeliveryResult("ann", "email", "all", "ann@example.com", Outcome.SENT, "<id@x>"),
        DeliveryResult("ann", "slack", "all", "#ann", Outcome.FAILED, "channel_not_found"),
        DeliveryResult("bob", "slack", "moe", "#bob", Outcome.PENDING, "429"),
        # Failed before the fix: an uncertain row (no answer after DATA) raised KeyError in the flow.
        DeliveryResult("cy", "email", "all", "cy@example.com", Outcome.UNCERTAIN, "no answer after DATA"),
        DeliveryResult("di", "email", "all", "di@example.com", Outcome.ELSEWHERE, "being delivered by w2"),
    ])

    @flow(name="delivery-artifact")
    def publish() -> list[dict[str, str]]:
        return delivery_artifact(reviewed, report)

    rows = publish()
    assert [(r["reader"], r["medium"], r["recipient"], r["variant"], r["result"]) for r in rows] == [
        ("ann", "email", "ann@example.com", "all", "sent"), ("ann", "slack", "#ann", "all", "failed"),
        ("bob", "slack", "#bob", "moe", "pending"), ("cy", "email", "cy@example.com", "all", "uncertain"),
        ("di", "email", "di@example.com", "all", "another run")]
    artifact = Artifact.get(f"sent-{reviewed.key.lower()}")
    assert artifact is not None and artifact.type == "table" and "channel_not_found" in str(artifact.data)


def test_the_summary_artifact_names_pending_uncertain_and_the_runs_notices() -> None:
    from flows.artifacts import summary_markdown
    from prdigest.pipeline.edition import EditionSummary

    summary = EditionSummary(edition="o/r 2026-W47", out="out", entries=2, published=2, per_verdict={},
                             per_subsystem={}, variants={}, idle_readers=[], sent=[("ann", "email", "<id>")],
                             failed=[], pending=[("bob", "email", "451 greylisted")],
                             uncertain=[("cy", "slack", "no answer")], problems=[], files=[],
                             notices=["o/r 2026-W46: 1 message still pending from an earlier run"])
    text = summary_markdown(summary)
    assert "> o/r 2026-W46: 1 message still pending from an earlier run" in text
    assert "| bob | email | pending: 451 greylisted |" in text and "| cy | slack | uncertain: no answer |" in text
