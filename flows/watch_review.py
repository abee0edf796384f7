"""``digest watch --approve ui``: the watch flow pauses for an editor's approval of its alerts in the Prefect UI.

The editor reads every reader's alert as it would be sent (:func:`prdigest.pipeline.watch_approval.plan_markdown`)
above a two-field form: ``send`` or ``hold``, and their name. The run *pauses* (its process waits and polls)
rather than suspends: a watch's window ends "now", so a run started again from the top would watch another
window than the one the editor approved. An input that fails the form's checks (a blank name) is logged and the
run waits again under the next pause key; a pause nobody answers within the review timeout fails the run and
sends nothing (nothing was recorded either: the next watch covers the same PRs again). The readers file's
``editors:`` are told that alerts wait, on the run's media (:func:`flows.notify.tell_editors`).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Literal

import pydantic
from prefect import get_run_logger
from prefect.exceptions import FlowPauseTimeout
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput

from flows.notify import tell_editors
from flows.resume import current_run_id
from flows.review import run_url
from prdigest.kernel.errors import ConfigError, DeliveryError, problems
from prdigest.kernel.models import Edition
from prdigest.pipeline.compose import Services, make_channels, sender
from prdigest.pipeline.watch_approval import AlertMessage, WatchDecision, WatchPlan, plan_markdown
from prdigest.review import ReviewExpired


class WatchApprovalForm(RunInput):
    """The resume form of a paused watch: the decision and who made it."""

    decision: Literal["send", "hold"] = pydantic.Field(
        description="send: every alert above, once · hold: none of them (the next watch starts after this window)")
    #: Required, never pre-filled: whoever decides names themself.
    approver: str = pydantic.Field(min_length=1, pattern=r"\S", description="Your name, recorded with the watch")


def tell_watch_editors(plan: WatchPlan, services: Services, url: str | None, deadline: datetime) -> None:
    """Tell the readers file's editors that ``plan``'s alerts wait for their approval; a failure is logged and
    never blocks the watch."""
    logger = get_run_logger()
    editors = services.readers.editors
    if not editors:
        logger.info("no editors in the readers file: nobody is told that %s waits for approval", plan.key)
        return
    try:
        channels = make_channels(services.options, services.settings, Path(services.options.out), services.media)
    except (ConfigError, DeliveryError) as exc:
        logger.warning("editors not told that %s waits for approval: %s", plan.key, exc)
        return
    media = [m for m in services.delivered if m.name in channels]
    link = url or f"flow run {current_run_id()} (no PREFECT_UI_URL set)"
    text = (f"{plan.repo}: alerts for {len({r for r, _, _ in plan.alerts})} reader(s) about "
            f"{len(plan.numbers)} upstream PR(s) that break their code wait for your approval until "
            f"{deadline:%Y-%m-%d %H:%M} UTC. Open {link} and click Resume: send them, or hold them. Nothing is "
            "sent until an editor decides.")
    edition = Edition(repo=plan.repo, since=plan.since, until=plan.until, language=services.language,
                      generated_at=datetime.now(timezone.utc))
    try:
        report = tell_editors(edition, editors, text, media, channels, sender(services.settings))
    finally:
        for channel in {id(c): c for c in channels.values()}.values():
            channel.flush()
            channel.close()
    (logger.info if report.told else logger.warning)("%s", report.line(plan.key))


def await_watch_approval(plan: WatchPlan, message: AlertMessage, timeout: int,
                         services: Services | None = None) -> WatchDecision:
    """Pause this flow run until an editor sends or holds ``plan``'s alerts (the editors told first, through
    ``services``' media); raise :class:`ReviewExpired` when nobody does within ``timeout`` seconds (nothing is
    sent)."""
    logger = get_run_logger()
    description = plan_markdown(plan, message)
    url = run_url(current_run_id())
    if services is not None:
        tell_watch_editors(plan, services, url, datetime.now(timezone.utc) + timedelta(seconds=timeout))
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
