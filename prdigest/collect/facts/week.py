"""A week's facts: from the clone for every PR whose merge commit it has (cached by commit), from the REST
patches for the others, each PR marked with where its facts came from."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from prdigest.collect.facts import envowners, envreads, installers, newkeys, newreqs, reach_imports, rejections
from prdigest.collect.facts.cache import FactsCache
from prdigest.collect.facts.cap import MAX_FACTS, capped
from prdigest.collect.facts.commit import FACTS_VERSION, commit_facts
from prdigest.collect.facts.configkeys import still_read
from prdigest.collect.facts.hierarchy import GitTree
from prdigest.collect.facts.patches import patch_facts
from prdigest.collect.facts.reach import TreeReader, classify, pr_evidence
from prdigest.collect.facts.reading import reading
from prdigest.collect.facts.surface import Surface
from prdigest.collect.facts.tested import untested
from prdigest.collect.facts.versiongates import still_gated
from prdigest.collect.git import CommitDiff, GitUnavailable, UpstreamClone, read_commits
from prdigest.kernel.models import Change, FileChange, PullRequest

log = logging.getLogger(__name__)

Source = Literal["git", "patches"]


@dataclass
class WeekFacts:
    """Each PR's facts and their source; how many commits were computed, read from the cache, or missing."""

    changes: dict[int, list[Change]] = field(default_factory=dict)
    source: dict[int, Source] = field(default_factory=dict)
    #: The changed files of each PR read from git (path, status, line counts; no hunks).
    files: dict[int, list[FileChange]] = field(default_factory=dict)
    #: Facts left out of a PR by the cap (:data:`~prdigest.collect.facts.cap.MAX_FACTS`), by PR number.
    omitted: dict[int, int] = field(default_factory=dict)
    computed: int = 0
    cached: int = 0
    #: The one-line problems met (the clone unreachable, commits missing): logged as warnings.
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def version_key(surface: Surface) -> str:
    """The cache's version: the facts code's and the ``code:`` section's."""
    return f"{FACTS_VERSION}:{surface.key}"


#: Reads merge commits' diffs (the files before and after): ``(diffs by sha, shas it could not read)``.
CommitReader = Callable[[Sequence[str]], tuple[dict[str, CommitDiff], list[str]]]


def week_facts(prs: Sequence[PullRequest], *, surface: Surface, clone: UpstreamClone | None = None,
               cache: FactsCache | None = None, reader: CommitReader | None = None) -> WeekFacts:
    """The facts of every PR: one batched read of the clone (else of ``reader``: the GitHub API's files) for the
    merge commits not cached yet."""
    started = time.perf_counter()
    result = WeekFacts()
    version = version_key(surface)
    by_commit: dict[str, list[PullRequest]] = {}
    read: CommitReader | None = (lambda shas: read_commits(clone, shas)) if clone is not None else reader
    where = f"--git / $DIGEST_GIT {clone.name}" if clone is not None else "the GitHub API"
    if read is not None:
        for pr in prs:
            if pr.merge_commit:
                by_commit.setdefault(pr.merge_commit.lower(), []).append(pr)
    known = cache.get_many(by_commit, version) if cache is not None and by_commit else {}
    result.cached = len(known)
    todo = [sha for sha in by_commit if sha not in known]
    fresh: dict[str, tuple[list[Change], list[FileChange]]] = {}
    if todo and read is not None:
        try:
            diffs, missing = read(todo)
        except GitUnavailable as exc:
            result.problems.append(f"{exc}; facts come from the REST patches")
            diffs, missing = {}, []
            for sha in todo:
                by_commit.pop(sha, None)
        if missing:
            numbers = [f"#{pr.number} {sha[:10]}" for sha in missing for pr in by_commit.get(sha, [])]
            result.problems.append(f"{where}: {len(numbers)} merge commit(s) not readable there "
                                   f"({', '.join(numbers[:5])}{', …' if len(numbers) > 5 else ''}); their "
                                   "facts come from the REST patches")
            for sha in missing:
                by_commit.pop(sha, None)
        # Who can see each change: the tree at its merge commit from a clone; through the API (no tree listing),
        # what the PR itself shows, as for patches.
        trees = TreeReader(clone, surface) if clone is not None else None
        upstream_tree = GitTree(clone, surface.packages) if clone is not None else None  # bases in other modules
        for sha, diff in diffs.items():
            evidence = trees.of(diff) if trees is not None else pr_evidence(by_commit[sha][0])
            with reading(pr.number for pr in by_commit[sha]):  # a file skipped for its size names its PRs
                facts = commit_facts(diff, surface, tree=upstream_tree)
                if clone is not None:  # a config key one file stops reading may still be read elsewhere
                    facts = still_read(facts, sha, clone, surface)
                    # a release dropped only if no gate is left and main still installed it
                    facts = still_gated(facts, sha, clone, surface, parent=diff.parent,
                                        untested=untested((f.path, f.before, f.after) for f in diff.files))
                    facts = envreads.still_read(facts, sha, clone, surface)  # a variable renamed only if unread
                    facts = rejections.known_before(facts, diff.parent, clone, surface)  # a new setting: unset
                    # a key the PR documents for the first time, new to the module checking it: unset too
                    facts = newkeys.introduced(facts, diff, trees.at(diff.parent) if trees and diff.parent else None)
                else:  # the API's files alone cannot show that no other module still reads a variable
                    facts = [c for c in facts if not (c.kind == "env" and c.detail == envreads.UNREAD)]
                facts = classify(facts, surface, evidence, diff)
                if clone is not None:  # a development pin the shipped code imports: an optional backend's
                    facts = reach_imports.imported(facts, sha, clone, surface)
                    facts = newreqs.installed_before(facts, diff.parent, clone, surface)  # pip brings a new one along
                    facts = installers.caught_up(facts, diff.parent, clone)  # a page following the images
                    # a vendor library's variable the repository stopped reading: that library still reads it
                    facts = envowners.owned(facts, [s for s in (diff.parent, sha) if s], clone, surface)
                fresh[sha] = (facts, files_of(diff))
        result.computed = len(fresh)
        if cache is not None and fresh:
            cache.put_many(fresh, version)
    for pr in prs:
        sha = (pr.merge_commit or "").lower()
        if read is not None and sha in by_commit and (sha in known or sha in fresh):
            changes, files = known.get(sha) or fresh[sha]
            result.changes[pr.number], result.files[pr.number] = list(changes), list(files)
            result.source[pr.number] = "git"
        else:
            with reading([pr.number]):
                result.changes[pr.number] = classify(patch_facts(pr, surface), surface, pr_evidence(pr))
            result.source[pr.number] = "patches"
        result.changes[pr.number], left_out = capped(result.changes[pr.number])
        if left_out:
            result.omitted[pr.number] = left_out
            result.problems.append(f"#{pr.number}: {MAX_FACTS + left_out:,} code facts; the {MAX_FACTS:,} a reader "
                                   f"acts on first are kept, {left_out:,} more are counted, not kept")
    for problem in result.problems:
        log.warning("%s", problem)
    result.seconds = time.perf_counter() - started
    return result


_STATUS = {"A": "added", "D": "removed", "M": "modified", "R": "renamed"}


def files_of(diff: CommitDiff) -> list[FileChange]:
    """The commit's files as GitHub lists a PR's (path, status, line counts, the old path of a rename)."""
    return [FileChange(path=f.path, status=_STATUS[f.status], additions=f.additions, deletions=f.deletions,
                       previous_path=f.old_path) for f in diff.files]
