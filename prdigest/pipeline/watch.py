"""``digest watch``: alerts the day a change lands. What merged since the last watch, its code facts matched
against every reader's downstream, and one short alert per reader listing only the PRs that break their code.

No drafting, and no review unless one is asked for (an alert carries facts, not prose; ``--approve ui``: an editor
approves the alerts before anything is sent, :mod:`prdigest.pipeline.watch_approval`). Exactly once per
(PR, reader): the pairs are recorded with their run before anything is sent (:mod:`prdigest.deliver.alert_log`),
and each run's messages go through the delivery ledger under the run's own key, so a crash or a re-run sends
nothing twice and a run left unfinished is delivered by the next one from what was recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

from prdigest.connect.impact.cleared import Clearances
from prdigest.connect.impact.downstream import DownstreamSpec
from prdigest.connect.impact.fixes import file_text, find_fix, line_text
from prdigest.deliver.alert_log import Alerted, AlertItem, AlertLine, AlertLog, WatchRun
from prdigest.deliver.email_message import sender
from prdigest.deliver.media import ComposeContext
from prdigest.deliver.run import Delivery, DeliveryReport, Outcome, Retry, deliver, outbox_routes
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Change, Edition, Entry, Impact, PullRequest
from prdigest.kernel.window import Window, parse_instant
from prdigest.pipeline.compose import Services, make_channels
from prdigest.pipeline.edition import EditionPipeline
from prdigest.pipeline.impact_report import fact_entry
from prdigest.pipeline.watch_approval import Approve, WatchPlan
from prdigest.readers.file import Reader

log = logging.getLogger(__name__)

#: The window of a repo's first watch when no ``--since`` is given: one schedule interval (daily).
FIRST_INTERVAL = timedelta(days=1)

#: (repo, downstream, downstream commit, since, items, language) → (subject, plain text): the shell's renderer.
AlertText = Callable[[str, str, str, datetime, Sequence[AlertItem], str], tuple[str, str]]


@dataclass
class WatchSummary:
    """What one watch did, for the CLI and the flow."""

    repo: str
    since: datetime | None
    until: datetime | None
    prs: int = 0
    #: Reader id → the PR numbers newly alerted to them by this run.
    alerted: dict[str, list[int]] = field(default_factory=dict)
    #: Downstream name → (commit, files, uses).
    downstreams: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    #: Earlier runs left unfinished and delivered now.
    resumed: int = 0
    report: DeliveryReport = field(default_factory=DeliveryReport)
    #: Alerts whose flagged lines the downstream has changed since (found by this run).
    fixes: list[Alerted] = field(default_factory=list)
    cleared: int = 0
    #: This run's key in the ledger (``digest status KEY`` lists its messages), when it had a window.
    key: str = ""
    #: Who approved this run's alerts (``--approve ui``), or "".
    approver: str = ""
    #: Why nothing of this run was sent: the editor held its alerts (``--approve ui``), or "".
    held: str = ""

    @property
    def pending(self) -> bool:
        return bool(self.report.pending)


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def watch_window(services: Services, alerts: AlertLog, now: datetime) -> Window | None:
    """``[--since or the last watch's end or one interval ago, --until or now)``; None when it is empty."""
    options = services.options
    until = parse_instant(options.until, flag="--until") if options.until else now
    if options.since:
        since = parse_instant(options.since, flag="--since")
    else:
        since = alerts.last_until(services.source.repo) or until - FIRST_INTERVAL
    return Window(since, until) if since < until else None


def _composed(payload: object) -> Callable[[str | None], object]:
    """A delivery's compose for a payload already made (whatever the message id)."""
    return lambda _id: payload


def _change_for(impact: Impact, changes: Sequence[Change]) -> Change | None:
    """The entry's fact an impact came from: the same kind, on the name the impact names."""
    kind = impact.fact.split(":", 1)[0]
    for change in changes:
        if change.kind == kind and (impact.symbol == change.symbol or impact.symbol.endswith("." + change.symbol)):
            return change
    return None


def alert_items(entries: Sequence[Entry], downstream: str, spec: DownstreamSpec, state_dir: Path | None,
                commit: str, cleared: Clearances) -> list[AlertItem]:
    """The PRs among ``entries`` that break ``downstream``, each with its breaking lines (cleared ones left out)."""
    items: list[AlertItem] = []
    texts: dict[str, str | None] = {}
    for entry in sorted(entries, key=lambda e: e.number):
        lines = []
        for impact in sorted(entry.impact, key=lambda i: (i.path, i.line)):
            if impact.downstream != downstream or impact.severity != "breaks" or cleared.covers(impact):
                continue
            change = _change_for(impact, entry.changes)
            if impact.path not in texts:
                texts[impact.path] = file_text(spec, state_dir, commit, impact.path)
            lines.append(AlertLine(impact.path, impact.line, impact.symbol, impact.how, impact.fact,
                                   change.before if change else "", change.after if change else "",
                                   line_text(texts[impact.path], impact.line)))
        if lines:
            items.append(AlertItem(entry.number, entry.url, entry.title, tuple(lines)))
    return items


class Watch:
    """One ``digest watch`` over the run's services; ``text`` renders an alert (``renderers.alert``)."""

    def __init__(self, services: Services, text: AlertText, now: datetime | None = None,
                 approve: Approve | None = None) -> None:
        self.services = services
        self.text = text
        #: Asks an editor before this run's alerts are recorded and sent (``--approve ui``); None: sent as found.
        self.approve = approve
        self.now = now or datetime.now(timezone.utc)
        self.alerts = AlertLog(services.store())
        self.repo = services.source.repo
        self.specs = {s.name: s for s in services.downstreams().specs}

    def run(self) -> WatchSummary:
        """Deliver what earlier runs left unfinished, then alert what merged since the last watch. Raises
        :class:`ConfigError` when no reader names a downstream (there would be nothing to watch for)."""
        services = self.services
        if not any(r.downstream for r in services.readers.readers):
            where = services.options.readers or "the shipped example readers file"
            raise ConfigError(f"{where}: no reader names a downstream ('downstream:' and a 'downstreams:' section): "
                              "digest watch alerts only readers whose own code an upstream PR breaks")
        indexes = services.downstreams().indexes()  # checked when the services were built: never an all-clear
        window = watch_window(services, self.alerts, self.now)
        summary = WatchSummary(self.repo, window.since if window else None, window.until if window else None,
                               downstreams={n: (i.commit, i.files, len(i.uses)) for n, i in indexes.items()})
        for run in self.alerts.unfinished(self.repo):
            summary.resumed += 1
            self._deliver(run, summary.report)
        summary.fixes = self.find_fixes()
        if window is None:
            return summary
        prs = self.collect(window)
        summary.prs = len(prs)
        entries = services.downstreams().apply([fact_entry(pr, pr.changes, pr.facts_source or "patches")
                                                for pr in prs], prs)
        run = WatchRun(f"watch:{self.repo}:{_stamp(window.since)}-{_stamp(window.until)}", self.repo,
                       window.since, window.until)
        summary.key = run.key
        cleared = Clearances(services.store(), self.repo)
        planned: dict[tuple[str, str, str], list[AlertItem]] = {}
        done = {(a.reader, a.number) for a in self.alerts.alerted(self.repo)}
        for reader in self._watchers():
            name = reader.downstream
            assert name is not None
            index = indexes[name]
            items = alert_items(entries, name, self.specs[name], services.settings.clone_home(), index.commit,
                                cleared)
            summary.cleared += cleared.hits
            cleared.hits = 0
            items = [i for i in items if (reader.id, i.number) not in done]  # exactly once per (PR, reader)
            if items:
                planned[(reader.id, name, index.commit)] = items
                summary.alerted[reader.id] = [i.number for i in items]
        if planned and self.approve is not None:
            # Nothing recorded yet: a run that times out waiting, or crashes, leaves the window to the next watch.
            plan = WatchPlan(run.key, self.repo, window.since, window.until, planned)
            decision = self.approve(plan)
            summary.approver = decision.approver
            if not decision.send:
                summary.held = (f"{decision.approver} held the alerts of {run.key} "
                                f"({', '.join(f'#{n}' for n in plan.numbers)}): nothing was sent, and the next "
                                "watch starts after this window")
                summary.alerted = {}
                self.alerts.record(run, {}, self.now)  # the window is closed: the next watch starts after it
                self.alerts.finish(run.key, self.now)
                log.warning("%s", summary.held)
                return summary
        self.alerts.record(run, planned, self.now)  # before anything is sent: a crash now resumes from here
        self._deliver(run, summary.report)
        return summary

    def collect(self, window: Window) -> list[PullRequest]:
        """The PRs merged in ``window``, with their code facts (the ``--git`` clone, else GitHub's files, else the
        patches)."""
        prs = self.services.source.collect(window)
        return EditionPipeline(self.services).code_facts(prs)

    def _watchers(self) -> list[Reader]:
        """The readers with a downstream, as they chose (``digest web``): unsubscribed readers are left out."""
        return [r for r in self.services.audience() if r.downstream]

    def _deliver(self, run: WatchRun, report: DeliveryReport) -> None:
        """Push each reader's alert of ``run`` on each delivered medium, through the ledger under the run's key;
        the run is done when nothing of it is left pending."""
        services = self.services
        by_reader = self.alerts.of_run(run.key)
        readers = {r.id: r for r in services.readers.readers}
        edition = Edition(repo=run.repo, since=run.since, until=run.until, language=services.language,
                          generated_at=self.now)
        context = ComposeContext(edition=edition, sender=sender(services.settings), now=self.now)
        deliveries = []
        for reader_id, (downstream, commit, items) in by_reader.items():
            reader = readers.get(reader_id)
            if reader is None:
                log.warning("%s: reader %s is no longer in the readers file: its alert is not sent", run.key,
                            reader_id)
                continue
            subject, text = self.text(run.repo, downstream, commit, run.since, items, services.language)
            for medium in services.delivered:
                address = medium.address(reader)
                if medium.notice is None or not address:
                    continue
                payload = medium.notice(reader, subject, text, context)
                deliveries.append(Delivery(reader, medium.name, "alert", address, _composed(payload)))
        out = Path(services.options.out) / "watch" / run.key.rsplit(":", 1)[-1]
        channels = make_channels(services.options, services.settings, out, services.media)
        deliveries, channels = outbox_routes(deliveries, channels)
        retry = Retry(services.settings.delivery_retries, services.settings.delivery_retry_delay)
        result = deliver(run.key, deliveries, channels, services.ledger(), None, retry)
        report.results += result.results
        if not result.pending and not result.of(Outcome.ELSEWHERE):
            self.alerts.finish(run.key, self.now)

    def find_fixes(self) -> list[Alerted]:
        """Alerts whose flagged lines the downstream's own history has changed since: recorded (the lead time)."""
        found = []
        for alerted in self.alerts.alerted(self.repo):
            spec = self.specs.get(alerted.downstream)
            if alerted.fixed_sha or spec is None:
                continue
            head = self.services.downstreams().indexes()[spec.name].commit
            fixes = [find_fix(spec, self.services.settings.clone_home(), alerted.commit, head, line.path, line.text)
                     for line in alerted.item.lines]
            if fixes and all(f is not None for f in fixes):
                last = max((f for f in fixes if f is not None), key=lambda f: f.at)
                self.alerts.fixed(alerted, last.sha, last.at)
                found.append(replace(alerted, fixed_sha=last.sha, fixed_at=last.at))
        return found
