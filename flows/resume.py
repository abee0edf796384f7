"""Resume anywhere: the Prefect side of the reviewed snapshot (:mod:`prdigest.snapshot`).

A suspended run re-executes from the top when an editor resumes it, on whichever worker picks it up: another
machine, another PREFECT_HOME, no shared disk. The only thing it shares with the worker that started the review
is the state store (DIGEST_STATE). So the flow asks first "is there a snapshot for this run?": when there is,
it skips collecting and drafting and reviews exactly that edition (no LLM or GitHub call); when the review had
started but the snapshot is missing, it fails before anything is sent.
"""

from __future__ import annotations

from typing import Any

from prefect.client.orchestration import get_client
from prefect.context import FlowRunContext

from prdigest.config import Settings
from prdigest.models import Edition
from prdigest.services import RunOptions
from prdigest.snapshot import Snapshot, load_snapshot, missing_snapshot, save_snapshot
from prdigest.store import open_store


def current_run_id() -> Any | None:
    """The id of the flow run this code runs in, or None outside one."""
    context = FlowRunContext.get()
    return context.flow_run.id if context is not None and context.flow_run is not None else None


def review_started(flow_run_id: Any) -> bool:
    """Whether this flow run already waited for its review (a pause key fired): it is being resumed."""
    with get_client(sync_client=True) as client:
        return bool(client.read_flow_run(flow_run_id).empirical_policy.pause_keys)


def resumed_edition(options: RunOptions, settings: Settings) -> Edition | None:
    """The edition the editor was shown, when this run resumes from its review; None on a run's first pass.

    Raises :class:`prdigest.snapshot.SnapshotError` when the run was resumed but the state store holds no
    snapshot of it (a worker with another DIGEST_STATE): collecting and drafting again would send text the
    editor never saw.
    """
    run_id = current_run_id()
    if options.approve != "ui" or run_id is None:
        return None
    with open_store(settings.state) as store:
        snapshot = load_snapshot(store, str(run_id))
    if snapshot is not None:
        return snapshot.edition
    if review_started(run_id):
        raise missing_snapshot(str(run_id), f"{options.repo or options.source}", str(settings.state))
    return None


def start_review(edition: Edition, settings: Settings, run_id: Any) -> Snapshot:
    """Store the edition as shown to the editor (write-once per run) and return the stored snapshot."""
    with open_store(settings.state) as store:
        return save_snapshot(store, str(run_id), edition)
