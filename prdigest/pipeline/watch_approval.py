"""An editor's approval of a watch's alerts (``digest watch --approve ui``), before anything is sent.

Alerts carry facts, not drafted prose, so a watch sends them without a review by default. With ``--approve ui``
the watch shows an editor every reader's alert exactly as it would go out (:func:`plan_markdown`) and waits
for a decision (the Prefect flow pauses; :mod:`flows.watch_review`): ``send`` records and sends them as an
unreviewed watch would, ``hold`` sends nothing and closes the window, so the next watch starts after it (the
weekly edition still lists the breaks; ``--since``/``--until`` over the window proposes them again).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from prdigest.deliver.alert_log import AlertItem
from prdigest.review.markdown import md

#: (reader, downstream, downstream commit) → the PRs that reader's alert lists.
Planned = dict[tuple[str, str, str], list[AlertItem]]


@dataclass(frozen=True)
class WatchPlan:
    """What one watch would send: its ledger key, window and each reader's alert."""

    key: str
    repo: str
    since: datetime
    until: datetime
    alerts: Planned

    @property
    def numbers(self) -> list[int]:
        """Every PR some alert lists, once, in order."""
        return sorted({i.number for items in self.alerts.values() for i in items})


@dataclass(frozen=True)
class WatchDecision:
    """The editor's decision on a :class:`WatchPlan`: send it, or hold it (nothing sent); who decided."""

    send: bool
    approver: str


#: Shows a plan to an editor and returns their decision (the flow's pause); it raises when nobody answers in time.
Approve = Callable[[WatchPlan], WatchDecision]

#: (subject, plain text) of one reader's alert, as the watch renders it (``renderers.alert``).
AlertMessage = Callable[[str, str, str, datetime, Sequence[AlertItem]], tuple[str, str]]


def plan_markdown(plan: WatchPlan, message: AlertMessage) -> str:
    """The plan as the editor reads it above the form: per reader, the alert's subject and every line of its text
    as it would be sent, each line inert markdown (PR titles are untrusted)."""
    readers = sorted({reader for reader, _, _ in plan.alerts})
    lines = [f"## {md(plan.repo)}: {len(plan.numbers)} PR(s) break a downstream, alerts for {len(readers)} "
             f"reader(s)", "",
             f"Window [{plan.since:%Y-%m-%d %H:%M}, {plan.until:%Y-%m-%d %H:%M}) UTC, ledger key `{plan.key}`. "
             "Nothing is sent until you decide: **send** sends each alert below once; **hold** sends none of them "
             "and the next watch starts after this window.", ""]
    for (reader, downstream, commit), items in sorted(plan.alerts.items()):
        subject, text = message(plan.repo, downstream, commit, plan.since, items)
        lines += [f"### {md(reader)}: {md(subject, 200)}", ""]
        lines += [f"> {md(line, 400)}" if line.strip() else ">" for line in text.splitlines()]
        lines.append("")
    return "\n".join(lines)
