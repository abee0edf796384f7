"""Labelled PRs: a source JSONL file whose every line also carries ``gold`` (``subsystems``, ``verdict``).

The PR part is read by the pipeline's own reader (:func:`prdigest.collect.sources.read_jsonl`), so a file that
evaluates is a file that runs; the labels are checked here, each bad one named by file, line and PR.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from prdigest.collect.sources import read_jsonl
from prdigest.kernel.errors import SourceError, first_problem
from prdigest.kernel.models import PullRequest, Verdict


class GoldLabel(BaseModel):
    """A person's judgement of one PR: its subsystems, its verdict and (optionally) why."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    #: None: not labelled (labels from editors' reviews carry a verdict only); scored for verdicts alone.
    subsystems: list[str] | None = None
    verdict: Verdict
    why: str = ""


@dataclass(frozen=True)
class LabelledPR:
    """One PR with its gold label and the line it came from."""

    pr: PullRequest
    gold: GoldLabel
    line: int


@dataclass(frozen=True)
class GoldSet:
    """Every labelled PR of one file, in file order, with the file's SHA-256 (to tell two sets apart)."""

    path: Path
    items: list[LabelledPR]
    sha256: str


def load_gold(path: Path) -> GoldSet:
    """Read a labelled JSONL file; a line without a valid ``gold`` raises SourceError naming file:line."""
    prs = {pr.number: pr for pr in read_jsonl(path)}  # the PR fields: checked as the pipeline checks them
    raw = path.read_bytes()
    items: list[LabelledPR] = []
    for lineno, line in enumerate(raw.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        number = record["number"]
        where = f"{path}:{lineno}: PR #{number}"
        if "gold" not in record:
            raise SourceError(f"{where}: no 'gold' label; add \"gold\": {{\"subsystems\": [...], \"verdict\": "
                              "\"deep-read|skim|skip\"}} or leave the PR out of the labelled file")
        try:
            gold = GoldLabel.model_validate(record["gold"])
        except ValidationError as exc:
            problem = first_problem(exc, under=("gold",))
            raise SourceError(f"{where}: field '{problem.field}': {problem.message}") from None
        items.append(LabelledPR(prs[number], gold, lineno))
    if not items:
        raise SourceError(f"{path}: no labelled PR in the file; each line is a PR with a 'gold' label")
    return GoldSet(path, items, hashlib.sha256(raw).hexdigest())


def check_vocabulary(gold: GoldSet, known: Iterable[str]) -> None:
    """Every gold subsystem must be one the rules can assign; a typo would silently count as a miss."""
    names = set(known)
    for item in gold.items:
        unknown = sorted(set(item.gold.subsystems or ()) - names)
        if unknown:
            raise SourceError(f"{gold.path}:{item.line}: PR #{item.pr.number}: gold subsystem(s) "
                              f"{', '.join(repr(u) for u in unknown)} not in the rules' vocabulary "
                              f"({', '.join(sorted(names))}); fix the label or pass --rules")
