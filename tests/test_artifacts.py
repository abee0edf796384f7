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
    ])

    @flow(name="delivery-artifact")
    def publish() -> list[dict[str, str]]:
        return delivery_artifact(reviewed, report)

    rows = publish()
    assert [(r["reader"], r["medium"], r["recipient"], r["variant"], r["result"]) for r in rows] == [
        ("ann", "email", "ann@example.com", "all", "sent"), ("ann", "slack", "#ann", "all", "failed"),
        ("bob", "slack", "#bob", "moe", "pending")]
    artifact = Artifact.get(f"sent-{reviewed.key.lower()}")
    assert artifact is not None and artifact.type == "table" and "channel_not_found" in str(artifact.data)
