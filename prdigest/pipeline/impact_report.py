"""One week's impact on one downstream checkout, without a run (``digest impact``): the PRs collected from the
source, their facts (from the clone with ``--git``, else from the patches: partial), matched against the
downstream's index. Nothing is drafted, recorded or sent."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.cache import FactsCache
from prdigest.collect.git import GitUnavailable, open_clone
from prdigest.collect.registry import SOURCES, SourceContext
from prdigest.collect.sources import ReadsCommits
from prdigest.connect.impact.cleared import Clearances
from prdigest.connect.impact.downstream import DownstreamSpec
from prdigest.connect.impact.readable import readable_index
from prdigest.connect.impact.step import upstream_packages, with_impact
from prdigest.deliver.alert_log import Alerted, AlertLog
from prdigest.kernel.config import load_settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Change, Coverage, DraftEntry, Edition, Entry, PullRequest, Verdict
from prdigest.kernel.window import Window
from prdigest.pipeline.compose import command
from prdigest.pipeline.watch_notes import with_watch_notes


@dataclass
class ImpactReport:
    """The week as entries carrying their impact, and what was read."""

    edition: Edition
    name: str
    commit: str
    files: int
    uses: int
    problems: list[str] = field(default_factory=list)
    #: Impacts ``--accept`` cleared now.
    cleared: int = 0
    #: What ``digest watch`` alerted for this downstream, with the fixes found since (the lead times).
    alerts: list[Alerted] = field(default_factory=list)

    @property
    def breaks(self) -> bool:
        return any(i.severity == "breaks" for e in self.edition.entries for i in e.impact)


def fact_entry(pr: PullRequest, changes: list[Change], source: Literal["git", "patches"]) -> Entry:
    """An undrafted entry that carries only the PR's facts (digest impact, digest watch: nothing is drafted)."""
    draft = DraftEntry(number=pr.number, headline=pr.title or f"#{pr.number}", verdict=Verdict.SKIM, rationale="")
    return Entry(url=pr.url, title=pr.title, author=pr.author, merged_at=pr.merged_at, subsystems=[], draft=draft,
                 changes=changes, coverage=Coverage(source=source))


def impact_report(*, downstream: Path, source: str, repo: str | None = None, since: str | None = None,
                  until: str | None = None, git: str | None = None, packages: tuple[str, ...] = (),
                  upstream: tuple[str, ...] = (), name: str | None = None, language: str | None = None,
                  state: str | None = None, accept: str | None = None, accept_file: str | None = None,
                  who: str = "digest impact --accept") -> ImpactReport:
    """The report for the window (default: the source's) of ``source``; raises a ``DigestError`` subclass for a
    bad flag, source or downstream (one line). With ``accept`` (a symbol) and ``accept_file`` (a downstream
    path), the window's impacts on that symbol in that file are kept as "not a break" (:mod:`.cleared`)."""
    if (accept is None) != (accept_file is None):
        raise ConfigError("--accept SYMBOL and --file PATH go together: the upstream symbol and your file")
    settings = load_settings(state=state, language=language)
    state_dir = settings.clone_home()
    with command(settings) as core:
        store = core.store
        src = SOURCES.build(source, SourceContext(settings, repo, store))
        window = Window.from_flags(since, until) or src.default_window()
        packages_up = tuple(upstream) or upstream_packages(src.repo)
        # The downstream first: a typo'd --package is refused before the week is collected.
        spec = DownstreamSpec(name or downstream.resolve().name.lower(), path=str(downstream), packages=packages,
                              upstream=packages_up)
        index = readable_index(spec, packages_up, "--downstream, --package, --upstream", store=store(),
                               state_dir=state_dir)
        prs = src.collect(window)
        clone, problems = None, []
        if git:
            try:
                clone = open_clone(git, state_dir=state_dir)
                clone.fetch()
            except GitUnavailable as exc:
                problems.append(f"{exc}; facts come from the PRs' patches (partial)")
                clone = None
        # Without a clone, GitHub's API gives each changed file whole (exact facts, cached by merge commit).
        readable = src.commit_reader(prs) if clone is None and isinstance(src, ReadsCommits) else None
        reader = None
        if readable is not None:
            prs, reader = readable
        facts = week_facts(prs, surface=Surface(packages=packages_up), clone=clone, cache=FactsCache(store()),
                           reader=reader)
        problems += facts.problems
        entries = [fact_entry(pr, facts.changes.get(pr.number, []), facts.source.get(pr.number, "patches"))
                   for pr in prs]
        impacted = with_impact(entries, prs, {spec.name: index}, packages_up)
        cleared = 0
        if accept is not None and accept_file is not None:
            clearances = Clearances(store(), src.repo)
            found = clearances.matching(impacted, accept, accept_file, spec.name)
            if not found:
                raise ConfigError(f"--accept {accept} --file {accept_file}: no impact of the window on that symbol "
                                  f"in that file of downstream '{spec.name}' (names as the report shows them)")
            cleared = clearances.clear(found, who)
        impacted = with_watch_notes(store(), src.repo, impacted)
        alerts = [a for a in AlertLog(store()).alerted(src.repo) if a.downstream == spec.name]
    edition = Edition(repo=src.repo, since=window.since, until=window.until, language=settings.language,
                      generated_at=datetime.now(timezone.utc), entries=impacted)
    return ImpactReport(edition, spec.name, index.commit, index.files, len(index.uses), problems, cleared, alerts)


def report_json(report: ImpactReport) -> str:
    """``digest impact --json``: the downstream, each PR's impacts, and the watch's alerts with fix and lead time."""
    entries = [{"number": e.number, "title": e.title, "url": e.url,
                "impact": [i.model_dump(mode="json") for i in e.impact]} for e in report.edition.entries if e.impact]
    alerts = [{"number": a.number, "reader": a.reader, "alerted_at": a.alerted_at.isoformat(),
               "downstream_commit": a.commit, "fixed": a.fixed_sha,
               "fixed_at": a.fixed_at.isoformat() if a.fixed_at else None, "lead_days": a.lead_days}
              for a in report.alerts]
    return json.dumps({"edition": report.edition.name, "downstream": report.name, "commit": report.commit,
                       "files": report.files, "uses": report.uses, "breaks": report.breaks, "entries": entries,
                       "alerts": alerts}, ensure_ascii=False, indent=2)
