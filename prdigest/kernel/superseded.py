"""Upgrades a later PR of the same edition asks again: ``VLLM_TAG`` moved to ``v0.14.0`` on Friday and to ``v0.14.1``
on Sunday, or ``triton-ascend`` pinned at ``3.2.0`` in a tutorial and then in the requirements; so is a downgrade a
later PR moves up again (a revert of last week's ``jax`` ``0.10.0``, re-applied two days later). A reader pulling main
at the end of the edition does the last one; the earlier PR's move is said there, once (as an upgrade and its
revert in one edition ask nothing: prdigest/connect/relations.py)."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from prdigest.kernel.actions import action_key, actions, dropped, is_commit, product, release_key, upgrades
from prdigest.kernel.models import Entry, PullRequest

log = logging.getLogger(__name__)
#: A ``dependency`` fact's detail for the last version gate on a release removed (collect/facts/versiongates.py).
SUPPORT_DROPPED = "support dropped"


@dataclass(frozen=True)
class Superseded:
    """The action keys of a PR's pin changes whose upgrade later PRs of the edition ask too, and those PRs."""

    keys: frozenset[str]
    by: tuple[int, ...]


def _asked(pr: PullRequest) -> list[tuple[str, str]]:
    """(package, version) of each upgrade or new install the PR asks for (a commit pin is no release: left out)."""
    return [(name.lower(), version) for name, version, newer in upgrades(pr.changes)
            if newer is not False and release_key(version)[0] and not _commit(version)]


def _commit(version: str) -> bool:
    return is_commit(version)


def superseded(prs: Sequence[PullRequest]) -> dict[int, Superseded]:
    """PR number → its pins whose upgrade or downgrade a PR merged later in the edition asks for the same package
    at the same or a later version (a revert to ``jax`` ``0.9.2``, then ``0.10.0`` again two days later: the reader
    pulling main at the end installs ``0.10.0``, said there); a later downgrade supersedes nothing: both are said."""
    ordered = sorted(prs, key=lambda p: (p.merged_at, p.number))
    asked = {pr.number: _asked(pr) for pr in ordered}
    out: dict[int, Superseded] = {}
    for i, pr in enumerate(ordered):
        released = dropped(pr.changes)  # a release replaced by a commit: the pins that say it go with it
        if not upgrades(pr.changes) and not released and not any(c.detail == SUPPORT_DROPPED for c in pr.changes):
            continue
        keys: set[str] = set()
        by: list[int] = []
        for name, old, _ in released:
            later = [q.number for q in ordered[i + 1:] for n, v in asked[q.number]
                     if n == name.lower() and release_key(v) >= release_key(old)]
            if later:  # the release a later PR moves to is what a reader installs, not this PR's commit
                keys |= {action_key(c) for c in pr.changes if c.kind == "dependency" and c.reach == "public"
                         and product(c).lower() == name.lower() and c.detail != SUPPORT_DROPPED}
                by += [n for n in later if n not in by]
        for c in pr.changes:
            pins = [(n.lower(), v) for n, v, _ in upgrades([c])]
            if c.kind == "dependency" and c.detail == SUPPORT_DROPPED and c.reach == "public" and c.before:
                # a release dropped: said by a later upgrade of the package past it (as beside its own upgrade)
                pins = [(c.symbol.lower(), c.before)] if release_key(c.before)[0] else []
            for name, version in pins:
                later = [q.number for q in ordered[i + 1:] for n, v in asked[q.number]
                         if n == name and release_key(v) >= release_key(version)]
                if later and not _commit(version):
                    keys.add(action_key(c))
                    by += [n for n in later if n not in by]
        if keys:
            out[pr.number] = Superseded(frozenset(keys), tuple(by))
    return out


def without_superseded(entries: Sequence[Entry], prs: Sequence[PullRequest], language: str,
                       cleared: Collection[str] = ()) -> list[Entry]:
    """``entries`` with each upgrade a later PR of the edition asks again left out of the earlier entry's
    ``action[]``; ``cleared``: the fact keys editors cleared (prdigest/review/cleared_actions.py), which stay out."""
    found = superseded(prs)
    by_number = {pr.number: pr for pr in prs}
    out = []
    for entry in entries:
        gone, pr = found.get(entry.number), by_number.get(entry.number)
        if gone is None or pr is None or not entry.action:
            out.append(entry)
            continue
        if entry.action == actions(pr.changes, language, cleared):  # as the draft made it: made again without them
            kept = actions(pr.changes, language, {*cleared, *gone.keys})
        else:  # its sentences edited since: only those the pins made change
            kept = kept_actions(entry.action, pr, language, gone.keys)
        log.info("PR #%s: its upgrade is asked again by #%s later in this edition: said there", entry.number,
                 ", #".join(str(n) for n in gone.by))
        out.append(entry.model_copy(update={"action": kept}))
    return out


def kept_actions(action: Sequence[str], pr: PullRequest, language: str, keys: frozenset[str]) -> list[str]:
    """``action`` without the sentences the pins of ``keys`` made (the upgrade sentence said again without them);
    the rest as it was, so an item the editor cleared stays out."""
    before, after = actions(pr.changes, language), actions(pr.changes, language, keys)
    kept = [s for s in action if s not in before or s in after]
    return kept + [s for s in after if s not in before and s not in kept]
