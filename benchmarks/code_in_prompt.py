"""Does the model see the code? On real weeks, the share of PRs that add code whose prompt holds added code lines,
with ``--git`` (hunks read from the clone) and without (the REST patches as the GitHub collector keeps them), and
as before this change. Called by ``benchmarks.model_context --weeks``.

A week is the squash merges on a clone's first-parent line (``benchmarks.facts_quality.week_prs``: title, message,
files from git, no hunks: what the GitHub source gives with ``--git``), its facts from the product's engine. The
REST patches are each file's ``git show`` hunks kept by the collector's own selection
(``prdigest.collect.github.fetch._files``, 16,000 characters). A PR adds code when a core code file
(``prdigest.kernel.prtext.pointing.tier`` 0) gains lines; its prompt holds added code when the packed hunks section
shows a ``+`` line under such a file.
"""

from __future__ import annotations

import re
import statistics
import tempfile
from collections.abc import Callable
from pathlib import Path

from benchmarks.facts_quality import week_prs, with_patches
from prdigest.collect.facts.surface import Surface
from prdigest.collect.facts.week import week_facts
from prdigest.collect.git import open_clone
from prdigest.collect.git.clone_hunks import clone_hunks
from prdigest.collect.git.texts import after_texts
from prdigest.collect.github.fetch import DEFAULT_PATCH_BUDGET, _files
from prdigest.draft.packing import SECTIONS, DraftContext, Packed, pack
from prdigest.kernel.models import PullRequest
from prdigest.kernel.prtext.pointing import is_code, tier

_HEAD = re.compile(r"^--- (.+)$")


def adds_code(pr: PullRequest) -> bool:
    return any(f.additions and tier(f.path) == 0 and is_code(f.path) for f in pr.files)


def shows_added_code(packed: Packed) -> bool:
    """True when the hunks section shows an added line of a core code file."""
    text = next((s.text for s in packed.sections if s.name == "hunks"), "")
    current = ""
    for line in text.splitlines():
        head = _HEAD.match(line)
        if head:
            current = head.group(1)
        elif line.startswith("+") and current and tier(current) == 0 and is_code(current):
            return True
    return False


def rest_patches(pr: PullRequest, git_dir: Path) -> PullRequest:
    """``pr`` with the hunks the GitHub collector keeps now (its own selection over every file's patch)."""
    every = with_patches(pr, git_dir, budget=10**9)  # each file's hunks, as GitHub's files endpoint lists them
    raw = [{"filename": f.path, "additions": f.additions, "deletions": f.deletions, "status": f.status,
            "patch": f.patch} for f in every.files]
    return pr.model_copy(update={"files": _files(raw, DEFAULT_PATCH_BUDGET, pr.title, pr.body)})


def measure_week(git_dir: Path, repo: str, week: str, surface: Surface, budget: int) -> dict[str, object]:
    """Per configuration: PRs adding code, how many of their prompts show added code, mean section shares."""
    prs, _ = week_prs(git_dir, repo, week)
    with tempfile.TemporaryDirectory() as state:
        clone = open_clone(str(git_dir), state_dir=Path(state))
        facts = week_facts(prs, surface=surface, clone=clone)
        prs = [pr.model_copy(update={"changes": facts.changes.get(pr.number, []),
                                     "facts_source": facts.source.get(pr.number)}) for pr in prs]
        hunks = clone_hunks(clone, prs)
        texts = after_texts(clone, prs, hunks=hunks)
    coders = [pr for pr in prs if adds_code(pr)]
    configs: dict[str, Callable[[PullRequest], Packed]] = {
        "--git (hunks from the clone)": lambda pr: pack(pr, budget, DraftContext(
            texts=texts.get(pr.number, {}), hunks=hunks.get(pr.number, {}))),
        "--git before (facts only, no hunk)": lambda pr: pack(pr, budget, DraftContext(texts=texts.get(pr.number, {}))),
        "REST patches (collector keeps code first)": lambda pr: pack(rest_patches(pr, git_dir), budget),
        "REST patches before (largest files first)": lambda pr: pack(with_patches(pr, git_dir), budget),
    }
    out: dict[str, object] = {"prs": len(prs), "coders": len(coders)}
    for name, make in configs.items():
        packed = [make(pr) for pr in coders]
        out[name] = {"seen": sum(shows_added_code(p) for p in packed),
                     "shares": {s: statistics.fmean(p.shares().get(s, 0.0) for p in packed) if packed else 0.0
                                for s in SECTIONS},
                     "fill": statistics.fmean(p.tokens / budget for p in packed) if packed else 0.0}
    return out
