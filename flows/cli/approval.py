"""Review from a terminal (Prefect has no resume command): ``digest review RUN_ID`` and ``digest approve RUN_ID``.

Both talk to the Prefect API the environment names (PREFECT_API_URL, PREFECT_API_AUTH_STRING). The input
is checked exactly as the flow checks the form (prdigest.review.check_decision) before the run is resumed;
the flow checks it again after resuming, so a stale or concurrent decision can never be applied in part.
"""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.exceptions import ObjectNotFound
from prefect.flow_runs import resume_flow_run

from flows.review import DRAFT_KEY
from flows.review_form import form_input
from prdigest.kernel.errors import ReviewError
from prdigest.kernel.models import Edition
from prdigest.review import (
    EntryEdit,
    ReviewDecision,
    ReviewRejected,
    apply_decision,
    check_decision,
    flagged_left_out,
    flagged_numbers,
    review_markdown,
)
from prdigest.state.record import content_hash_of_json


def _waiting_run(run_id: str) -> tuple[Any, dict[str, str], Edition]:
    """The paused run, its input keyset and its draft edition; ReviewError when it is not waiting for review."""
    try:
        uid = UUID(run_id)
    except ValueError:
        raise ReviewError(f"'{run_id}' is not a flow run id (copy it from the run's page or the "
                          "notification)") from None
    with get_client(sync_client=True) as client:
        try:
            run = client.read_flow_run(uid)
        except ObjectNotFound:
            raise ReviewError(f"flow run {run_id} not found on this Prefect API (check PREFECT_API_URL)") from None
        state = run.state
        keyset = state.state_details.run_input_keyset if state else None
        if state is None or not state.is_paused() or not keyset:
            raise ReviewError(f"flow run {run_id} is not waiting for review (state: "
                              f"{state.name if state else 'none'})")
        try:
            draft = Edition.model_validate_json(client.read_flow_run_input(uid, DRAFT_KEY))
        except ObjectNotFound:
            raise ReviewError(f"flow run {run_id} is paused but holds no pr-digest draft: is it a digest-edition "
                              "run with --approve ui?") from None
    return run, keyset, draft


def _draft_hash(flow_run_id: Any) -> str:
    """The content hash of the draft exactly as the run published it: the decision names it (prdigest.state.record)."""
    with get_client(sync_client=True) as client:
        return content_hash_of_json(client.read_flow_run_input(flow_run_id, DRAFT_KEY))


def review_text(run_id: str) -> str:
    """The draft digest as the UI shows it above the resume form (markdown)."""
    run, keyset, draft = _waiting_run(run_id)
    with get_client(sync_client=True) as client:
        try:
            raw = client.read_flow_run_input(run.id, keyset["description"])
        except ObjectNotFound:
            return review_markdown(draft)
    return json.loads(raw) if raw.startswith('"') else raw


def approve_run(run_id: str, all: bool = False, reject: list[int] | None = None, approver: str = "",
                note: str = "", approve: list[int] | None = None, include_flagged: bool = False,
                nobreak: list[int] | None = None, verdicts: list[tuple[int, str]] | None = None) -> str:
    """Resume a waiting run with "send" and return a one-line summary: every unflagged entry except ``reject``
    (``--all`` or ``--reject``), plus the flagged entries named in ``approve`` or all of them with
    ``include_flagged``; or only the ``approve`` numbers (``--approve`` without ``--all``). A flagged entry is
    never sent unless named or included; the summary says how many were left out. ``nobreak`` clears the
    breaking mark of those entries (they leave the readers' "Action required" block). ``verdicts`` changes entries'
    verdicts (PR number, new verdict), as the form's edits do.

    Raises ReviewError (shown to the user) when the run is not waiting, or when the input fails the same
    checks as the form (unknown PR numbers, no approver, nothing left to send).
    """
    reject, approve = list(reject or []), list(approve or [])
    if not all and not reject and not approve and not include_flagged:
        raise ReviewError("say --all to approve every unflagged entry, --reject N … to leave some out, --approve N "
                          "… to send only those (or, with --all, flagged ones too), --include-flagged to send the "
                          "flagged entries as well (numbers separated by spaces or commas)")
    run, _, draft = _waiting_run(run_id)
    decision = ReviewDecision(decision="send", approver=approver.strip(),
                              approve_all=all or include_flagged or not approve,
                              reject=" ".join(str(n) for n in reject), approve=" ".join(str(n) for n in approve),
                              include_flagged=include_flagged, note=note, snapshot=_draft_hash(run.id),
                              edits=[EntryEdit.model_validate({"number": n, "verdict": v}) for n, v in verdicts or []],
                              nobreak=" ".join(str(n) for n in nobreak or []))
    reasons = check_decision(draft, decision)
    if reasons:
        raise ReviewRejected(reasons)
    try:
        resume_flow_run(run.id, run_input=form_input(draft, decision))
    except RuntimeError as exc:
        raise ReviewError(f"flow run {run_id} refused the input: {exc}") from None
    sent = len(apply_decision(draft, decision).published)
    return f"{draft.name}: resumed by {decision.approver}: " + approval_summary(draft, decision, sent)


def approval_summary(draft: Edition, decision: ReviewDecision, sent: int) -> str:
    """How many entries go out and how many are left out, naming the flagged ones left out."""
    flagged = flagged_numbers(draft)
    unsent = flagged_left_out(draft, decision)
    text = f"{sent} entries approved, {len(draft.entries) - sent} left out."
    if flagged:
        text += (f" {len(flagged)} flagged (⚠): {len(flagged) - len(unsent)} approved"
                 + (f", {len(unsent)} left out ({', '.join(f'#{n}' for n in unsent[:10])}"
                    f"{', …' if len(unsent) > 10 else ''}; to send them: --approve N or --include-flagged)"
                    if unsent else "") + ".")
    return text + " The run delivers them now (or when a worker picks it up)."
