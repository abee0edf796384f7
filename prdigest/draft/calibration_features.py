"""The calibration's features read through the offline drafter's eyes: its score and the reasons behind it, which
parts of a repository the files touch, and how much the description says.

These are what a team's taste is most often about beyond the verdict itself: how far the drafter's score was from
its thresholds (a skim at 2.2 is nearly a deep read), which of its reasons the team discounts or values (a perf
figure, a root cause, a groundwork PR), and which parts of the tree it touches (kernels and ops, compiled sources,
docs, tests, CI, examples). Each is a binary feature of :func:`prdigest.draft.calibration.features`; a saved
calibration without them still applies (a feature without a weight weighs nothing).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.draft.verdict import assess
from prdigest.kernel.actions import actions, upgrades
from prdigest.kernel.models import PullRequest
from prdigest.kernel.prtext.signals import extract

#: The drafter's score, bucketed around its own thresholds (skim at 1.0, deep read at 2.25).
_SCORE = ((0.0, "<0"), (1.0, "0-1"), (1.75, "1-1.75"), (2.25, "1.75-2.25"), (3.0, "2.25-3"), (4.5, "3-4.5"))
#: Characters of description (template removed), bucketed as the drafter reads them (< 150: unexplained, ≥ 400:
#: explained).
_BODY = ((150, "<150"), (400, "150-400"), (1200, "400-1200"))
#: Parts of a tree by path, in any repository's usual layout: a PR's files put it in each part one of them is in.
PARTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx)) for name, rx in (
    ("ops", r"(^|/)(ops|kernels?|ascendc|op_kernel|op_host|triton)(/|$)"),
    ("csrc", r"^csrc/|\.(cc|cpp|cu|cuh|h|hpp)$"),
    ("docs", r"^docs?/|\.(md|rst)$"),
    ("tests", r"(^|/)tests?/|(^|/)test_[^/]*\.py$"),
    ("ci", r"^\.github/|(^|/)\.?ci/|(^|/)(Dockerfile|requirements)[^/]*$"),
    ("examples", r"^examples?/"),
    ("models", r"(^|/)models?/"),
    ("quantization", r"quant"),
    ("attention", r"attention|attn"),
    ("distributed", r"distributed|parallel|eplb|moe|comm"),
    ("runtime", r"worker|model_runner|compilation|graph|scheduler"),
))


def _bucket(value: float, edges: Sequence[tuple[float, str]], last: str) -> str:
    return next((name for edge, name in edges if value < edge), last)


def drafter_features(pr: PullRequest, subsystems: Sequence[str]) -> set[str]:
    """The offline drafter's score bucket, its reasons' keys and the rule that decided, for ``pr``."""
    signals = extract(pr, list(subsystems))
    assessment = assess(signals)
    out = {f"score:{_bucket(assessment.score, _SCORE, '4.5+')}"}
    out.update(f"why:{reason.key}" for reason in assessment.reasons)
    if assessment.rule is not None:
        out.add(f"rule:{assessment.rule.key}")
    out.add(f"body:{_bucket(len(signals.body), _BODY, '1200+')}")
    return out


def part_features(pr: PullRequest) -> set[str]:
    """The parts of the tree the PR's files are in (``part:ops``, ``part:docs``, ...)."""
    return {f"part:{name}" for name, pattern in PARTS if any(pattern.search(f.path) for f in pr.files)}


def action_features(pr: PullRequest) -> set[str]:
    """What the PR asks a reader to do: ``action:upgrade`` when it moves a public runtime pin forward or adds one
    (a platform upgrade is a deep read for those who run it, as teams label it), ``action:other`` for any other
    Action required item (a setting renamed, a script removed)."""
    out = set()
    if any(newer is not False for _, _, newer in upgrades(pr.changes)):
        out.add("action:upgrade")
    elif actions(pr.changes, "en"):
        out.add("action:other")
    return out
