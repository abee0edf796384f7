"""Tables of prose references (tests/fixtures/relations/*.yaml) run through the connect step's relation finder.

Shared by tests/test_references.py and benchmarks/prose_relations.py. Each row is one PR merged in week 1; its
``known`` PRs are either in the history (week 0) or in the same edition (merged earlier that week), its
``later`` ones are in the same edition, merged after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from prdigest.connect.relations import Known, find_relations
from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Edition, PullRequest, Verdict
from tests.connect_factories import entry_of, pr, week_edition

TABLES = Path(__file__).resolve().parent / "fixtures" / "relations"
Where = Literal["history", "edition"]


@dataclass(frozen=True)
class Row:
    """One PR's title and body, the PRs it may name, and the relations a careful reader draws."""

    repo: str
    pr: int
    title: str
    body: str
    known: tuple[int, ...]
    later: tuple[int, ...]
    expect: frozenset[tuple[str, int]]

    @property
    def label(self) -> str:
        return f"{self.pr}: {self.title[:50]}"


def load(name: str) -> list[Row]:
    """The rows of ``tests/fixtures/relations/<name>.yaml``."""
    data: dict[str, Any] = yaml.safe_load((TABLES / f"{name}.yaml").read_text(encoding="utf-8"))
    return [Row(data["repo"], r["pr"], r["title"], r.get("body") or "", tuple(r.get("known") or ()),
                tuple(r.get("later") or ()), frozenset((k, n) for k, n in r["expect"])) for r in data["rows"]]


def found(row: Row, where: Where = "history") -> set[tuple[str, int]]:
    """The (kind, number) relations the connect step gives ``row``'s PR."""
    source = PullRequest(**{**pr(row.pr, row.title, row.body, week=1, day=3).model_dump(),
                            "url": pr_link(row.repo, row.pr)})
    earlier = [pr(n, f"PR {n}", week=0 if where == "history" else 1, day=1) for n in row.known]
    later = [pr(n, f"PR {n}", week=1, day=5) for n in row.later]
    here = [source, *later, *(earlier if where == "edition" else [])]
    edition: Edition = week_edition(1, [entry_of(p) for p in here])
    edition = edition.model_copy(update={"repo": row.repo})
    history = [] if where == "edition" else [
        Known(p.number, "2026-W47", p.title, p.author, p.merged_at, Verdict.SKIM) for p in earlier]
    return {(r.kind, r.number) for r in find_relations(edition, here, history)[row.pr]}
