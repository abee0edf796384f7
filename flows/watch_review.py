"""``digest watch --approve ui``: the watch flow pauses for an editor's approval of its alerts in the Prefect UI.

The editor reads every reader's alert as it would be sent (:func:`prdigest.pipeline.watch_approval.plan_markdown`)
above a two-field form: ``send`` or ``hold``, and their name. The run *pauses* (its process waits and polls)
rather than suspends: a watch's window ends "now", so a run started again from the top would watch another
window than the one the editor approved. An input that fails the form's checks (a blank name) is logged and the
run waits again under the next pause key; a pause nobody answers within the review timeout fails the run and
sends nothing (nothing was recorded either: the next watch covers the same PRs again).
"""

from __future__ import annotations

from typing import Literal

import pydantic
from prefect import get_run_logger
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput

from flows.resume import current_run_id
from flows.review import run_url
from prdigest.kernel.errors import problems
from prdigest.pipeline.watch_approval import AlertMessage, WatchDecision, WatchPlan, plan_markdown
from prdigest.review import ReviewExpired


class WatchApprovalForm(RunInput):
    """The resume form of a paused watch: the decision and who made it."""

    decision: Literal["send", "hold"] = pydantic.Field(
        description="send: every alert above, once · hold: none of them (the next watch starts after this window)")
    #: Required, never pre-filled: whoever decides names themself.
    approver: str = pydantic.Field(min_length=1, pattern=r"\S", description="Your name, recorded with the watch")


def await_watch_approval(plan: WatchPlan, message: AlertMessage, timeout: int) -> WatchDecision:
    """Pause this flow run until an editor sends or holds ``plan``'s alerts; raise :class:`ReviewExpired` when
    nobody does within ``timeout`` seconds (nothing is sent)."""
    logger = get_run_logger()
    description = plan_markdown(plan, message)
    url = run_url(current_run_id())
    attempt = 1
    while True:
        logger.info("%s: %d alert(s) wait for an editor's approval (paused) for up to %d s: %s", plan.key,
                    len(plan.alerts), timeout, url or "this flow run in the Prefect UI")
        try:
            form = pause_flow_run(wait_for_input=WatchApprovalForm.with_initial_data(description=description),
                                  timeout=timeout, key=f"watch-approval-{attempt}",
                                  poll_interval=max(1, min(10, timeout // 60)))
        except FlowPauseTimeout:
            expired = f"the alerts of {plan.key} were not approved within {timeout} s: the run fails, nothing is sent"
            logger.error(expired)
            raise ReviewExpired(expired) from None
        except pydantic.ValidationError as exc:
            logger.warning("%s: approval input refused, nothing was sent; the run waits again: %s", plan.key,
                           "; ".join(f"{field}: {why}" for field, why in problems(exc)))
            attempt += 1
            continue
        decision = WatchDecision(send=form.decision == "send", approver=form.approver.strip())
        logger.info("%s: %s by %s", plan.key, "approved" if decision.send else "held", decision.approver)
        return decision
