"""``digest calibrate``: fit a repository's verdict calibration (prdigest/draft/calibration.py) from labelled PRs or
from the editors' recorded decisions, and keep it in the state store for every later run of that repo.

From a gold file the PRs go through the run's own steps first (code facts, draft context, the configured drafter
without any calibration), so each label is set against the verdict a run would propose. From the reviews each kept
entry is a label: the editor's final verdict against the verdict drafted, with the PR as the edition record (and the
GitHub collector's cache, for its files) holds it; rejected entries say nothing about the verdict and are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from prdigest.classify.subsystems import classifier_for
from prdigest.collect.sources import repo_of
from prdigest.draft import calibrations
from prdigest.draft.calibration import Calibration, features, fit
from prdigest.evaluation.gold import load_gold
from prdigest.evaluation.results import EvalConfig
from prdigest.evaluation.reviews import Reviewed, read_reviews, table_columns
from prdigest.evaluation.runner import candidate, draft_rows, prepared
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Entry, PullRequest, Verdict
from prdigest.pipeline.compose import command
from prdigest.state import record as records
from prdigest.state.store import Store

Example = tuple[set[str], Verdict]


@dataclass
class Fitted:
    """What ``digest calibrate`` kept: the repo, the calibration, and how many labels changed the drafter's verdict."""

    repo: str
    calibration: Calibration
    disagreements: int


def _fitted(store: Store, repo: str, examples: list[Example], source: str, where: str,
            groups: list[int] | None = None) -> Fitted:
    try:
        calibration = fit(examples, source=source, groups=groups)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}; label more PRs") from None
    disagreements = sum(1 for feats, label in examples if f"drafted:{label.value}" not in feats)
    return Fitted(repo, calibrations.save(store, repo, calibration), disagreements)


def from_gold(config: EvalConfig, settings: Settings, paths: Sequence[Path] = ()) -> Fitted:
    """Fit ``config.repo``'s calibration on the labelled files ``paths`` (default ``config.gold``; a folder stands for
    its ``*.jsonl``), each drafted as a run drafts it; a PR labelled in several files (by several people) is one
    example per label, its labels cross-validated together."""
    files = gold_files(paths or [Path(config.gold)])
    golds = [load_gold(path) for path in files]
    repos = {config.repo or repo_of([i.pr for i in gold.items], gold.path) for gold in golds}
    if len(repos) != 1:
        raise ConfigError(f"the labelled files are of {len(repos)} repos ({', '.join(sorted(repos))}): calibrate "
                          "one repo at a time")
    repo = repos.pop()
    classifier = classifier_for(repo, Path(config.rules) if config.rules else None)
    language = config.language or settings.language
    examples: list[Example] = []
    groups: list[int] = []
    with command(settings) as core:
        store = core.store
        with candidate(config, settings, classifier, store) as cand:
            for gold in golds:  # each file on its own: its PRs are one edition's, over the window they span
                gold, contexts = prepared(gold, repo, settings, classifier, store())
                subsystems = [classifier.classify(item.pr) for item in gold.items]
                rows = draft_rows(gold, subsystems, cand, language, None, contexts, calibration=None)
                examples += [(features(item.pr, subs, row.verdict), item.gold.verdict)
                             for item, subs, row in zip(gold.items, subsystems, rows)]
                groups += [item.pr.number for item in gold.items]
        names = ", ".join(path.name for path in files) if len(files) <= 3 else \
            f"{len(files)} files, {files[0].name} to {files[-1].name}"
        return _fitted(store(), repo, examples, f"gold {names}", names if len(files) > 1 else str(files[0]), groups)


def gold_files(paths: Sequence[Path]) -> list[Path]:
    """The labelled JSONL files ``paths`` name: each file, and each folder's ``*.jsonl`` in name order. A folder
    without one, or a label file without PR text (``{"labeller", "week", "labels"}``), is refused naming it."""
    out: list[Path] = []
    for given in paths:
        path = given.expanduser()
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise ConfigError(f"{path}: no labelled file (*.jsonl) in the folder")
            out += found
        elif path.is_file() and _label_file(path):
            raise ConfigError(f"{path}: a file of labels by PR number carries no PR text to draft; give the labelled "
                              "PRs as JSONL in the source format, each line with \"gold\": {\"verdict\": ...}")
        else:
            out.append(path)
    return list(dict.fromkeys(out))


def _label_file(path: Path) -> bool:
    """Whether ``path`` is one JSON object of labels by PR number (``{"labeller", "labels": {...}}``), not JSONL."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(data, dict) and isinstance(data.get("labels"), dict) and "number" not in data


def _pr_of(entry: Entry, cached: PullRequest | None) -> PullRequest:
    """The PR as the draft step saw it: the collector's cached record (files, labels) with the entry's facts, or the
    entry's own fields when the edition came from a JSONL file (no file list then)."""
    if cached is not None:
        return cached.model_copy(update={"changes": entry.changes})
    return PullRequest(number=entry.number, url=entry.url, title=entry.title, author=entry.author,
                       merged_at=entry.merged_at, additions=entry.additions, deletions=entry.deletions,
                       changes=entry.changes)


def review_examples(store: Store, repo: str | None, since: datetime | None = None) -> tuple[str, list[Example]]:
    """The editors' decisions on ``repo``'s reviewed editions as labelled examples (latest review of a PR wins)."""
    reviewed: list[Reviewed] = [r for r in read_reviews(store, since) if not r.rejected]
    entries: dict[tuple[str, int], tuple[Entry, Reviewed]] = {}
    repos: set[str] = set()
    for r in reviewed:
        record = records.resolve(store, r.edition)
        if record is None:
            continue
        edition = record.edition
        repos.add(edition.repo)
        entry = next((e for e in edition.entries if e.number == r.number), None)
        if entry is not None and (repo is None or edition.repo == repo):
            entries[(edition.repo, r.number)] = (entry, r)
    if repo is None:
        if len(repos) != 1:
            raise ConfigError("the review record holds " + (f"editions of {len(repos)} repos "
                                                             f"({', '.join(sorted(repos))}):"
                              " name one with --repo OWNER/NAME" if repos else "no reviewed edition: review some "
                              "editions first, or calibrate with --gold FILE"))
        repo = next(iter(repos))
    cached: dict[int, PullRequest] = {}
    if table_columns(store, "github_pulls"):
        from prdigest.collect.github.cache import PullCache

        cached = {n: c.pr for n, c in PullCache(store, repo).get_many([n for _, n in entries]).items()}
    examples = [(features(_pr_of(entry, cached.get(entry.number)), entry.subsystems, r.draft_verdict), r.final_verdict)
                for entry, r in entries.values()]
    return repo, examples


def from_reviews(settings: Settings, repo: str | None = None, since: datetime | None = None) -> Fitted:
    """Fit the calibration on the editors' recorded decisions (every kept entry's final verdict is a label)."""
    with command(settings) as core:
        store = core.store
        repo, examples = review_examples(store(), repo, since)
        return _fitted(store(), repo, examples, f"reviews of {len(examples)} entries", f"{repo}'s reviews")
