"""The run's artifacts in the Prefect UI: the edition summary and the table of what was sent to whom."""

from __future__ import annotations

from prefect.artifacts import create_table_artifact

from prdigest.deliver.run import DeliveryReport, Outcome
from prdigest.kernel.models import Edition
from prdigest.pipeline.edition import EditionSummary

#: Every outcome's word (a missing one raised KeyError in the flow after delivery, on an uncertain row).
_RESULT = {Outcome.SENT: "sent", Outcome.FAILED: "failed", Outcome.PENDING: "pending", Outcome.ALREADY: "sent before",
           Outcome.UNCERTAIN: "uncertain", Outcome.ELSEWHERE: "another run"}


def summary_markdown(summary: EditionSummary) -> str:
    """The edition-summary artifact: entries published, and each reader's result."""
    lines = [f"# {summary.edition}", "", *(f"> {n}" for n in summary.notices), *([""] if summary.notices else []),
             f"{summary.published} of {summary.entries} entries published.", "",
             *(f"- {line}" for line in summary.downstreams), *([""] if summary.downstreams else []),
             "| reader | medium | result |", "| --- | --- | --- |"]
    lines += [f"| {r} | {m} | sent |" for r, m, _ in summary.sent]
    lines += [f"| {r} | {m} | failed: {e[:80]} |" for r, m, e in summary.failed]
    lines += [f"| {r} | {m} | pending: {e[:80]} |" for r, m, e in summary.pending]
    lines += [f"| {r} | {m} | another run: {e[:80]} |" for r, m, e in summary.elsewhere]
    lines += [f"| {r} | {m} | uncertain: {e[:80]} |" for r, m, e in summary.uncertain]
    lines += [f"| {r} | – | nothing selected |" for r in summary.idle_readers]
    return "\n".join(lines)


def delivery_rows(report: DeliveryReport) -> list[dict[str, str]]:
    """One row per delivery: reader, medium, recipient, variant, result and the provider id or reason."""
    return [{"reader": r.reader, "medium": r.medium, "recipient": r.recipient, "variant": r.variant,
             "result": _RESULT[r.outcome], "detail": r.detail[:160]} for r in report.results]


def delivery_artifact(edition: Edition, report: DeliveryReport) -> list[dict[str, str]]:
    """A table artifact of what was sent to whom; returns its rows."""
    rows = delivery_rows(report)
    table = rows or [{"reader": "", "medium": "", "recipient": "", "variant": "", "result": "nothing sent",
                      "detail": ""}]
    sent = sum(1 for r in rows if r["result"] in ("sent", "sent before"))
    create_table_artifact(table, key=f"sent-{edition.key.lower()}"[:100],
                          description=f"{edition.name}: approved by {edition.approver or 'nobody'}; "
                                      f"{len(edition.published)} entries published, {sent} messages sent, "
                                      f"{len(rows) - sent} not (failed or pending)")
    return rows
