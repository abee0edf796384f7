"""Read first: the entries a reader should study before anything else, ranked, within a budget.

Offline, each entry gets a score from the same evidence the offline verdict uses
(:mod:`prdigest.kernel.prtext.signals`), made explicit as a list of named features, each with its weight and
why: design decisions, semantics that change behaviour (a silently wrong result fixed, an API output that
means something else, a flipped default, a breaking change, an advisory), performance with evidence, and,
never alone, size. The entry's final verdict is the base: only deep reads, and skims with something every
reader must know, reach :data:`READ_FIRST_AT`. With a model drafter the model orders the deep reads it
drafted (``prompts/rank.yaml``); an answer that is not a ranking of those deep reads falls back to the
offline order. Each reader variant then takes its own entries from the edition's ranking, at most its
budget (:func:`prdigest.connect.variants.pick_read_first`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.connect.lede import Complete
from prdigest.kernel.models import Edition, Entry, EntryStatus, PullRequest, Verdict
from prdigest.kernel.prompts import load_prompt
from prdigest.kernel.prtext.signals import CI, DOC, SOURCE, TEST, Signals, extract
from prdigest.kernel.vocabulary import Vocabulary

log = logging.getLogger(__name__)

# ── Weights, written before either hand-labelled week was measured and not tuned since: the sample week
# (tests/fixtures/readfirst/sample-week-ranking.yaml) is the one tuning may use, unseen-week.jsonl is only
# measured (benchmarks/read_first.py). A feature counts once; each names what a reader studies. ──
W_VERDICT = {Verdict.DEEP_READ: 2.0, Verdict.SKIM: 0.0}
W_ADVISORY = 2.0         # a published advisory: operators must act on the new behaviour
W_BREAKING = 1.5         # a breaking change or a new default: every user meets it
W_KIND = {"silent-fix": 1.5, "default-flip": 1.5, "api-meaning": 1.0, "cache-contract": 1.0,
          "extension-point": 1.0, "new-architecture": 0.5}
W_KIND_CAP = 2.0
W_PERF = 0.75            # a before/after figure: performance with evidence
W_EVALS = 0.5            # accuracy checked: behaviour with evidence
W_DESIGN = 0.25          # per family of design words (interfaces, restructuring, failures, trade-offs)
W_DESIGN_CAP = 0.75
W_ROOT_CAUSE = 0.5       # a fix that names its failure mode
W_REVIEW = 0.25          # per substantive review remark, at most two: the trade-offs were argued
W_EXPLAINED = 0.25       # the author explains why at length
W_CORE = 0.25            # a core subsystem: many readers build on it
W_SIZE = 0.25            # ≥ 500 changed lines: never a reason alone
W_GROUNDWORK = -1.0      # the wiring lands later: read that PR instead
W_UNCHANGED = -1.0       # the author says behaviour is unchanged
W_MODEL_ONLY = -0.5      # one model's files only
W_DELETION = -0.5        # mostly deletions
W_PERIPHERAL = -1.0      # docs, tests or CI only
W_REVERTED = -1.5        # reverted since (and not re-landed): what ships is the revert
W_FACT_BREAKING = 1.0    # the entry is marked breaking (by its facts, unless the editor cleared it)
W_FACT_API = 0.5         # a public API, configuration or kernel fact: code other people build on moved
W_FACT_CORE = 0.25       # ... in a core subsystem: more readers build on it
READ_FIRST_AT = 2.0      # a score at or above this deserves a place in read-first
#: The most deep reads a model is asked to order (the offline ranking's best): a 300-PR week's prompt stays bounded.
MODEL_RANKS = 40


@dataclass(frozen=True)
class Feature:
    """One piece of evidence in an entry's read-first score, and why it counts."""

    key: str
    weight: float
    why: str


@dataclass(frozen=True)
class Ranked:
    """An entry's read-first score and the features behind it."""

    number: int
    score: float
    features: tuple[Feature, ...]

    @property
    def deserves(self) -> bool:
        """True when the entry earns a place in read-first."""
        return self.score >= READ_FIRST_AT

    def explain(self) -> str:
        """``#41873 3.25: deep read +2, flips a default +1.5, …``: the score, feature by feature."""
        parts = ", ".join(f"{f.why} {f.weight:+g}" for f in self.features)
        return f"#{self.number} {self.score:g}: {parts}"


def features(entry: Entry, signals: Signals | None) -> list[Feature]:
    """The evidence for reading ``entry`` first; ``signals`` None (a PR not at hand) leaves the verdict."""
    out = [Feature("verdict", W_VERDICT.get(entry.verdict, 0.0), entry.verdict.label("en").lower())]
    if any(r.kind == "reverted-by" for r in entry.relations) and not any(
            r.kind == "relanded-by" for r in entry.relations):
        out.append(Feature("reverted", W_REVERTED, "reverted since"))
    if signals is None:
        return out
    s = signals
    add = lambda key, weight, why: out.append(Feature(key, weight, why))  # noqa: E731
    if s.advisories:
        add("advisory", W_ADVISORY, f"fixes advisory {s.advisories[0]}")
    if s.breaking:
        add("breaking", W_BREAKING, f"breaking or default change ({s.breaking[0]})")
    kinds = [k for k in s.kinds if k.key in W_KIND]
    if kinds:
        weight = min(W_KIND_CAP, sum(W_KIND[k.key] for k in kinds))
        add("semantics", weight, "; ".join(k.key for k in kinds))
    if s.perf_claims:
        add("perf", W_PERF, f"measured ({s.perf_claims[0]})")
    elif s.evals:
        add("evals", W_EVALS, f"accuracy checked ({s.evals[0]})")
    if s.design:
        add("design", min(W_DESIGN_CAP, W_DESIGN * len(s.design)), "discusses " + ", ".join(s.design))
    if s.is_bugfix and "failure" in s.design:
        add("root-cause", W_ROOT_CAUSE, "names its failure mode")
    if s.remarks:
        add("review", min(2, len(s.remarks)) * W_REVIEW, f"{len(s.remarks)} review remark(s)")
    if len(s.body) >= 400:
        add("explained", W_EXPLAINED, "explains why")
    core = any(a in s.vocabulary.hints.core for a in s.areas)
    if core:
        add("core", W_CORE, "core subsystem")
    if entry.breaking:
        add("fact-breaking", W_FACT_BREAKING, "breaks callers")
    if s.api_changes or s.kernel_changes:
        add("fact-api", W_FACT_API + (W_FACT_CORE if core else 0.0),
            "changes the public API or a kernel" + (" of a core subsystem" if core else ""))
    if s.size >= 500 and not s.changes:  # with facts, what the code did stands in for how much changed
        add("size", W_SIZE, "large")
    if s.groundwork:
        add("groundwork", W_GROUNDWORK, "groundwork")
    if s.unchanged_behaviour:
        add("unchanged", W_UNCHANGED, "behaviour unchanged")
    sources = s.of_kind(SOURCE)
    if sources and all("models/" in f.path for f in sources) and not any(k.key == "new-architecture" for k in s.kinds):
        add("model-only", W_MODEL_ONLY, "one model's files")
    if s.deletions >= 50 and s.additions < 0.1 * s.deletions:
        add("deletion", W_DELETION, "mostly deletions")
    if s.files and s.only_kinds <= {DOC, TEST, CI}:
        add("peripheral", W_PERIPHERAL, "docs, tests or CI only")
    if s.is_revert:
        add("revert", W_REVERTED, "a revert")
    return out


def score(entry: Entry, signals: Signals | None) -> Ranked:
    """The entry's read-first score with its features, largest weight first."""
    found = sorted(features(entry, signals), key=lambda f: (-f.weight, f.key))
    return Ranked(entry.number, round(sum(f.weight for f in found), 2), tuple(found))


def offline_ranking(entries: Sequence[Entry], prs: Sequence[PullRequest],
                    vocabulary: Vocabulary | None = None) -> list[Ranked]:
    """Every live entry that deserves read-first, best first (ties: the larger change, then the number)."""
    by_number = {pr.number: pr for pr in prs}
    ranked: list[tuple[Ranked, int]] = []
    for entry in entries:
        if entry.status is EntryStatus.REJECTED or entry.verdict is Verdict.SKIP:
            continue
        pr = by_number.get(entry.number)
        if pr is not None and entry.changes and not pr.changes:  # facts attached after collection
            pr = pr.model_copy(update={"changes": entry.changes})
        signals = extract(pr, entry.subsystems, vocabulary) if pr is not None else None
        ranked.append((score(entry, signals), entry.additions + entry.deletions))
    ranked.sort(key=lambda pair: (-pair[0].score, -pair[1], pair[0].number))
    return [r for r, _ in ranked if r.deserves]


_NUMBERS = re.compile(r"\d{1,9}")


def rank_messages(edition: Edition, deep: Sequence[Entry]) -> list[dict[str, str]]:
    """The chat messages asking a model to order the deep reads it drafted (``prompts/rank.yaml``)."""
    entries = [{"number": e.number, "headline": e.headline, "subsystems": e.subsystems, "rationale": e.rationale,
                "focus": e.focus[:3]} for e in deep]
    return load_prompt("rank").messages({"language": edition.language, "edition": edition.name, "entries": entries})


def parse_model_ranking(text: str, allowed: set[int]) -> tuple[list[int], list[str]]:
    """The numbers a model's answer orders (``{"order": [..]}``) and why it cannot be used (empty when it can)."""
    try:
        data = json.loads(text.strip().removeprefix("```json").removeprefix("```").removesuffix("```"))
    except ValueError:
        return [], ["the answer is not JSON"]
    order = data.get("order") if isinstance(data, dict) else data
    if not isinstance(order, list) or not order or not all(isinstance(n, int) for n in order):
        return [], ["the answer has no non-empty list of PR numbers under 'order'"]
    problems = [f"#{n} is not a deep read of this edition" for n in order if n not in allowed]
    if len(set(order)) != len(order):
        problems.append("a PR is ranked twice")
    return order, problems


def edition_ranking(edition: Edition, prs: Sequence[PullRequest], vocabulary: Vocabulary | None = None,
                    complete: Complete | None = None) -> list[int]:
    """The edition's read-first ranking: offline, or the model's order of its deep reads (``complete``) with
    the offline ranking's other entries after them; the offline one when the model's answer is unusable."""
    offline = [r.number for r in offline_ranking(edition.entries, prs, vocabulary)]
    place = {n: i for i, n in enumerate(offline)}
    deep = sorted((e for e in edition.entries if e.status is not EntryStatus.REJECTED
                   and e.verdict is Verdict.DEEP_READ), key=lambda e: (place.get(e.number, len(place)), e.number))
    deep = deep[:MODEL_RANKS]
    if complete is None or not deep:
        return offline
    try:
        order, problems = parse_model_ranking(complete(rank_messages(edition, deep)), {e.number for e in deep})
    except Exception as exc:  # a ranking is never worth failing an edition for
        order, problems = [], [f"the model failed ({type(exc).__name__})"]
    if problems:
        log.warning("read-first: the model's ranking is not used (%s): the offline ranking is", "; ".join(problems))
        return offline
    return order + [n for n in offline if n not in order]
