"""One week's impact on one downstream checkout, without a run (``digest impact``): the PRs collected from the
source, their facts (from the clone with ``--git``, else from the patches: partial), matched against the
downstream's index. Nothing is drafted, recorded or sent."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from prdigest.connect.impact.downstream import DownstreamSpec
from prdigest.connect.impact.readable import readable_index
from prdigest.connect.impact.step import upstream_packages, with_impact
from prdigest.kernel.models import Coverage, DraftEntry, Edition, Entry, PullRequest, Verdict
from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.facts.cache import FactsCache
from prdigest.collect.git import GitUnavailable, open_clone
from prdigest.collect.registry import SOURCES, SourceContext
from prdigest.kernel.config import load_settings
from prdigest.kernel.window import Window
from prdigest.pipeline.compose import open_state


@dataclass
class ImpactReport:
    """The week as entries carrying their impact, and what was read."""

    edition: Edition
    name: str
    commit: str
    files: int
    uses: int
    problems: list[str] = field(default_factory=list)

    @property
    def breaks(self) -> bool:
        return any(i.severity == "breaks" for e in self.edition.entries for i in e.impact)


def _entry(pr: PullRequest, changes: list, source: str) -> Entry:  # noqa: ANN001 - list[Change]
    draft = DraftEntry(number=pr.number, headline=pr.title or f"#{pr.number}", verdict=Verdict.SKIM, rationale="")
    return Entry(url=pr.url, title=pr.title, author=pr.author, merged_at=pr.merged_at, subsystems=[], draft=draft,
                 changes=changes, coverage=Coverage(source=source))  # type: ignore[arg-type]


def impact_report(*, downstream: Path, source: str, repo: str | None = None, since: str | None = None,
                  until: str | None = None, git: str | None = None, packages: tuple[str, ...] = (),
                  upstream: tuple[str, ...] = (), name: str | None = None, language: str | None = None,
                  state: str | None = None) -> ImpactReport:
    """The report for the window (default: the source's) of ``source``; raises a ``DigestError`` subclass for a
    bad flag, source or downstream (one line)."""
    settings = load_settings(state=state, language=language)
    state_dir = settings.clone_home()
    with open_state(settings.state) as store:
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
        facts = week_facts(prs, surface=Surface(packages=packages_up), clone=clone, cache=FactsCache(store()))
        problems += facts.problems
        entries = [_entry(pr, facts.changes.get(pr.number, []), facts.source.get(pr.number, "patches")) for pr in prs]
        impacted = with_impact(entries, prs, {spec.name: index}, packages_up)
    edition = Edition(repo=src.repo, since=window.since, until=window.until, language=settings.language,
                      generated_at=datetime.now(timezone.utc), entries=impacted)
    return ImpactReport(edition, spec.name, index.commit, index.files, len(index.uses), problems)
