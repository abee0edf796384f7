"""Resume anywhere: the Prefect side of the edition record (:mod:`prdigest.state.record`).

A suspended run re-executes from the top when an editor resumes it, on whichever worker picks it up: another
machine, another PREFECT_HOME, no shared disk. The only thing it shares with the worker that started the review
is the state store (DIGEST_STATE), where the edition's record names this flow run as its reviewer: the loop
finds it there and reviews exactly that edition (no LLM or GitHub call). A run resumed from its review whose
record is not in this worker's state store fails before anything is sent.
"""

from __future__ import annotations

from typing import Any

from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext

from prdigest.kernel.errors import ReviewError
from prdigest.state import record as records
from prdigest.state.store import Store


def current_run_id() -> Any | None:
    """The id of the flow run this code runs in, or None outside one."""
    context = FlowRunContext.get()
    return context.flow_run.id if context is not None and context.flow_run is not None else None


def review_started(flow_run_id: Any) -> bool:
    """Whether this flow run already waited for its review (a pause key fired): it is being resumed."""
    with get_client(sync_client=True) as client:
        return bool(client.read_flow_run(flow_run_id).empirical_policy.pause_keys)


def check_resumable(store: Store, run_id: str, edition_hint: str) -> None:
    """Raise :class:`ReviewError` when this run was resumed from its review but the state store holds no record
    it reviews: collecting and drafting again would send text the editor never saw."""
    if records.load_by_run(store, run_id) is None and review_started(run_id):
        raise ReviewError(
            f"flow run {run_id} ({edition_hint}) was resumed from its review, but the state store {store.location} "
            "holds no edition record of what the editor was shown. Nothing was sent. Does this worker use the "
            "same DIGEST_STATE as the one that started the review? Set it in the worker's environment, or start a "
            "new run and review it")
