"""The editors' decisions as a growing labelled set: reviewed entries whose PR the collector cached, written
as a labelled JSONL file (``labels.jsonl``) that ``digest eval --gold`` scores any drafter against.

The label of a kept entry is the editor's final verdict; rejected entries are left out (a rejection says
the entry should not go out, not which verdict was right). Subsystems are labelled only when the review
record stores them, since editors do not change them. PR data comes from the GitHub collector's cache in
the same state store (:class:`prdigest.collect.github.cache.PullCache`); editions drafted from a JSONL file have
their labelled file already.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from prdigest.evaluation.reviews import Reviewed, table_columns
from prdigest.state.store import Store

_NOT_KEY = re.compile(r"[^A-Za-z0-9-]+")  # as Edition.key is made from the repo name


def _cached_repos(store: Store) -> list[str]:
    if not table_columns(store, "github_pulls"):  # no collector cache here (editions from JSONL files)
        return []
    return [r[0] for r in store.execute("SELECT DISTINCT repo FROM github_pulls").fetchall()]


def _repo_of(edition: str, repos: list[str]) -> str | None:
    """The cached repo whose name begins the edition's key (``vllm-project-vllm-2026-W47``), longest first."""
    for repo in sorted(repos, key=len, reverse=True):
        if edition.lower().startswith(_NOT_KEY.sub("-", repo).strip("-").lower() + "-"):
            return repo
    return None


def reviewed_labels(store: Store, entries: list[Reviewed]) -> list[dict[str, Any]]:
    """Source-format records with a ``gold`` label, one per kept entry whose PR is cached (latest review wins)."""
    from prdigest.collect.github.cache import PullCache

    repos = _cached_repos(store)
    by_edition: dict[str, list[Reviewed]] = {}
    for entry in entries:
        if not entry.rejected:
            by_edition.setdefault(entry.edition, []).append(entry)
    records: dict[int, dict[str, Any]] = {}
    for edition, kept in by_edition.items():  # oldest first: a later review of the same PR replaces it
        repo = _repo_of(edition, repos)
        if repo is None:
            continue
        cached = PullCache(store, repo).get_many([e.number for e in kept])
        for entry in kept:
            if entry.number in cached:
                record = json.loads(cached[entry.number].pr.model_dump_json())
                record["gold"] = {"verdict": entry.final_verdict.value,
                                  "subsystems": list(entry.subsystems) if entry.subsystems is not None else None,
                                  "why": f"editor's verdict in {edition} ({entry.status})"}
                records[entry.number] = record
    return list(records.values())


def write_labels(records: list[dict[str, Any]], path: Path) -> Path:
    """Write the labelled records as JSONL (one PR a line)."""
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path
