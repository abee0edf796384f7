"""PR sources: where merged pull requests come from (a JSONL file here; GitHub in prdigest.collect.github)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from pydantic import ValidationError

from prdigest.kernel.errors import SourceError, first_problem
from prdigest.kernel.links import page_pattern
from prdigest.kernel.models import PullRequest
from prdigest.kernel.window import Window

if TYPE_CHECKING:
    from prdigest.collect.facts.week import CommitReader

_PR_URL = re.compile("^" + page_pattern() + "$")


class Source(Protocol):
    """Yields the PRs merged into one repo in a window.

    Contract: returns every PR merged in ``window`` and nothing else, sorted by merge time then number;
    raises :class:`SourceError` (naming what to fix) when the source cannot be read.
    """

    repo: str

    def collect(self, window: Window | None) -> list[PullRequest]: ...

    def default_window(self) -> Window:
        """The window a run without ``--since``/``--until`` covers."""
        ...


@runtime_checkable
class ReadsCommits(Protocol):
    """A source that can read its PRs' merge commits, each changed file before and after (GitHub's API), for
    exact code facts without a clone."""

    def commit_reader(self, prs: Sequence[PullRequest]) -> "tuple[list[PullRequest], CommitReader] | None":
        """``prs`` (collected by this source) with their merge commits, and a reader of those commits; None when
        it has none."""
        ...


def sample_week_path() -> Path:
    """The sample week of vLLM PRs shipped with pr-digest (the demo's data)."""
    return Path(__file__).parent / "data" / "vllm-sample-week.jsonl"


def _span(length: timedelta) -> str:
    """A duration as people say it: ``9 days``, ``5 weeks``, ``19 months``."""
    days = length.days + (1 if length.seconds else 0)
    if days < 14:
        return f"{days} days"
    if days < 62:
        return f"{days // 7} weeks"
    return f"{round(days / 30.44)} months"


def _first_error(exc: ValidationError) -> str:
    problem = first_problem(exc, empty="(record)")
    return f"field '{problem.field}': {problem.message}{problem.and_more()}"


def read_jsonl(path: Path) -> list[PullRequest]:
    """Parse a source JSONL file; a malformed line raises SourceError with the file and line number."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"{path}: cannot open source file: {exc.strerror or exc}") from exc
    prs: list[PullRequest] = []
    seen: dict[int, int] = {}
    with handle:
        try:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise SourceError(f"{path}:{lineno}: invalid JSON: {exc.msg} (column {exc.colno})") from None
                if not isinstance(record, dict):
                    raise SourceError(f"{path}:{lineno}: expected a JSON object (one PR), got {type(record).__name__}")
                try:
                    pr = PullRequest.model_validate(record)
                except ValidationError as exc:
                    number = record.get("number", "?")
                    raise SourceError(f"{path}:{lineno}: PR #{number}: {_first_error(exc)}") from None
                if pr.number in seen:
                    raise SourceError(f"{path}:{lineno}: PR #{pr.number} already appears on line {seen[pr.number]}")
                seen[pr.number] = lineno
                prs.append(pr)
        except UnicodeDecodeError as exc:
            raise SourceError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return prs


def repo_of(prs: list[PullRequest], path: Path) -> str:
    """The single OWNER/NAME the PRs' URLs point at."""
    repos = {m.group(1) for pr in prs if (m := _PR_URL.match(pr.url))}
    if len(repos) > 1:
        raise SourceError(f"{path}: PRs from several repositories ({', '.join(sorted(repos))}); pass --repo")
    if not repos:
        raise SourceError(f"{path}: cannot tell the repository from the PR URLs; pass --repo OWNER/NAME")
    return repos.pop()


class JsonlSource:
    """PRs from a file in the source format (docs/contracts.md); without a window, every PR in the file."""

    def __init__(self, path: Path, repo: str | None = None) -> None:
        self.path = path
        self._prs = read_jsonl(path)
        if not self._prs:  # else an edition of nothing: "unknown/unknown", a proposal from 0 PRs, an empty page
            raise SourceError(f"{path}: no pull requests in the file (it is empty or only blank lines): a JSONL "
                              "source holds one merged PR per line (docs/contracts.md)")
        self.repo = repo or repo_of(self._prs, path)

    def collect(self, window: Window | None) -> list[PullRequest]:
        prs = [pr for pr in self._prs if window is None or pr.merged_at in window]
        return sorted(prs, key=lambda pr: (pr.merged_at, pr.number))

    def default_window(self) -> Window:
        """The window an edition of the whole file covers: the Monday-to-Monday week of its merges. A file whose
        merges run past that week is refused: its edition would be named and worded as one week ("2025-W04 …
        this week") while holding months; ``--since``/``--until`` choose the window instead."""
        first = min(pr.merged_at for pr in self._prs)
        last = max(pr.merged_at for pr in self._prs)
        start = datetime.combine(first.date() - timedelta(days=first.weekday()), datetime.min.time(),
                                 tzinfo=first.tzinfo)
        if last >= start + timedelta(days=7):
            last_week = datetime.combine(last.date() - timedelta(days=last.weekday()), datetime.min.time())
            raise SourceError(
                f"{self.path}: its {len(self._prs)} PRs were merged over {_span(last - first)} ({first.date()} to "
                f"{last.date()}), more than one week: pass --since and --until for the edition's window (the "
                f"last week: --since {last_week.date()} --until {(last_week + timedelta(days=7)).date()}; all of "
                f"it: --since {start.date()} --until {(last + timedelta(days=1)).date()})")
        return Window(start, start + timedelta(days=7))
