"""A repository's verdict calibration: a small multinomial logistic regression, fitted offline on labelled PRs (a
gold file, or the editors' recorded decisions), that moves the drafter's verdict toward the team's taste.

Its features are read from the PR and its code facts alone (the verdict the drafter proposed, the size, which kinds
of files, the facts' kinds and reach, the subsystems, the title's tags and words, and through the offline drafter's
eyes its score, its reasons, the parts of the tree touched and the description's length:
prdigest/draft/calibration_features.py); its weights start from "keep the drafter's verdict" and the
regularisation pulls them back there, so a few labels move little and a few hundred can move what they show. The
strength is chosen by cross-validation on the labels themselves (by log loss), and so is the probability from which
a PR is a deep read (the best deep-read F1 of the held-out probabilities that keeps their agreement); the
cross-validation also says whether the calibration beat the drafter there (:attr:`Calibration.cv_calibrated` vs
:attr:`Calibration.cv_drafter`). Pure Python: a few hundred labels fit in about a second. Kept as JSON in the
state store (prdigest/state/calibrations.py); applied by :func:`calibrated` in the draft step of a run and of
``digest eval``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prdigest.draft.calibration_features import action_features, drafter_features, part_features
from prdigest.draft.calibration_threshold import choose
from prdigest.kernel.models import DraftEntry, Language, PullRequest, Verdict
from prdigest.kernel.prtext.files import SOURCE, file_kind
from prdigest.kernel.prtext.pointing import is_code
from prdigest.kernel.prtext.restate import restated

CLASSES = (Verdict.DEEP_READ, Verdict.SKIM, Verdict.SKIP)
#: The weight that makes a fresh model keep the drafter's verdict (before any label moves it).
PRIOR = 2.0
#: Regularisation strengths tried by cross-validation, weakest first (a tie goes to the stronger: less moved).
STRENGTHS = (0.003, 0.01, 0.03, 0.3)
FOLDS = 5
#: The strength that stands for "keep the drafter's verdicts" (the prior alone) when nothing beats it.
KEEP = 1e9
#: A fitted calibration says deep-read once that verdict is this probable, even when another is more probable: a PR
#: worth studying that a reader never opens costs more than one opened in vain, and deep reads are rare (about one
#: label in ten), so the most probable verdict alone would almost never be a deep read. A fit moves it to where its
#: cross-validation's held-out probabilities find the labels' deep reads best (prdigest/draft/calibration_threshold.py).
DEEP_READ_AT = 0.3
_TAG = re.compile(r"\[([^\[\]]{1,40})\]")
_WORDS = frozenset({"fix", "fixes", "bug", "bugfix", "revert", "add", "adds", "support", "refactor", "remove",
                    "deprecate", "perf", "optimize", "speed", "doc", "docs", "test", "tests", "ci", "bump",
                    "upgrade", "update", "typo", "cleanup", "feat", "feature", "kernel", "new", "enable",
                    "disable", "rename", "default", "api", "breaking", "experimental", "misc", "minor"})
_SIZE = ((5, "xs"), (30, "s"), (150, "m"), (600, "l"))
_FILES = ((1, "1"), (3, "2-3"), (10, "4-10"))


def _bucket(value: int, edges: Sequence[tuple[int, str]], last: str) -> str:
    return next((name for edge, name in edges if value <= edge), last)


def features(pr: PullRequest, subsystems: Sequence[str], drafted: Verdict) -> set[str]:
    """The PR's features: names of the binary signals the calibration weighs."""
    out = {"bias", f"drafted:{drafted.value}"}
    lines = (pr.additions + pr.deletions) or sum(f.additions + f.deletions for f in pr.files)
    out.add(f"size:{_bucket(lines, _SIZE, 'xl')}")
    if pr.files:
        out.add(f"files:{_bucket(len(pr.files), _FILES, '11+')}")
        kinds = {("data" if (k := file_kind(f.path)) == SOURCE and not is_code(f.path) else k) for f in pr.files}
        out.update(f"kind:{k}" for k in kinds)
        if len(kinds) == 1:
            out.add(f"only:{next(iter(kinds))}")
        if any(f.status == "added" and is_code(f.path) and file_kind(f.path) == SOURCE for f in pr.files):
            out.add("new-code-file")
    facts = pr.changes
    out.add("facts:none" if not facts else "facts:many" if len(facts) >= 5 else "facts:few")
    out.update(f"fact:{c.kind}" for c in facts)
    if any(c.public for c in facts):
        out.add("fact:public")
    if any(c.breaks for c in facts):
        out.add("fact:breaking")
    public = sum(1 for c in facts if c.public)
    if public:
        out.add("public:" + ("1-2" if public <= 2 else "3+"))
    out |= drafter_features(pr, subsystems) | part_features(pr) | action_features(pr)
    out.update(f"sub:{s}" for s in subsystems[:3])
    out.update(f"label:{' '.join(label.lower().split())[:40]}" for label in pr.labels[:5])
    out.update(f"tag:{' '.join(t.lower().split())}" for t in _TAG.findall(pr.title)[:3])
    out.update(f"word:{w}" for w in re.findall(r"[a-z]+", pr.title.lower()) if w in _WORDS)
    return out


@dataclass
class Calibration:
    """A fitted calibration: weights per feature and class, how it was fitted, how it did in cross-validation."""

    weights: dict[str, list[float]]
    strength: float
    labels: int
    #: Verdict agreement with the labels in cross-validation: the calibrated verdicts', and the drafter's own.
    cv_calibrated: float | None = None
    cv_drafter: float | None = None
    source: str = ""
    created_at: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    #: Deep-read once its probability reaches this (:data:`DEEP_READ_AT`); None: the most probable verdict (the
    #: calibrations saved before the threshold existed).
    deep_read_at: float | None = None

    def probabilities(self, feats: set[str]) -> list[float]:
        """The probability of each verdict of :data:`CLASSES` for a PR with these features."""
        logits = [0.0] * len(CLASSES)
        for name in feats:
            for k, w in enumerate(self.weights.get(name, ())):
                logits[k] += w
        return _softmax(logits)

    def verdict(self, feats: set[str]) -> Verdict:
        """The calibrated verdict: deep-read once probable enough (:attr:`deep_read_at`), else the most probable."""
        p = self.probabilities(feats)
        if self.deep_read_at is not None:
            if p[0] >= self.deep_read_at:
                return CLASSES[0]
            return CLASSES[1] if p[1] >= p[2] else CLASSES[2]
        return CLASSES[max(range(len(CLASSES)), key=lambda k: p[k])]

    def to_json(self) -> dict[str, Any]:
        return {"weights": self.weights, "strength": self.strength, "labels": self.labels,
                "cv_calibrated": self.cv_calibrated, "cv_drafter": self.cv_drafter, "source": self.source,
                "classes": [c.value for c in CLASSES], "meta": self.meta, "deep_read_at": self.deep_read_at}

    @classmethod
    def from_json(cls, data: dict[str, Any], created_at: str = "") -> "Calibration":
        if data.get("classes") != [c.value for c in CLASSES]:
            raise ValueError(f"a calibration of classes {data.get('classes')} is not one of "
                             f"{[c.value for c in CLASSES]}")
        return cls(weights={k: [float(x) for x in v] for k, v in data["weights"].items()},
                   strength=float(data["strength"]), labels=int(data["labels"]),
                   cv_calibrated=data.get("cv_calibrated"),
                   cv_drafter=data.get("cv_drafter"), source=str(data.get("source", "")), created_at=created_at,
                   meta=dict(data.get("meta") or {}),
                   deep_read_at=None if data.get("deep_read_at") is None else float(data["deep_read_at"]))


def _softmax(logits: list[float]) -> list[float]:
    top = max(logits)
    exps = [math.exp(x - top) for x in logits]
    total = sum(exps)
    return [e / total for e in exps]


def _prior(name: str) -> list[float]:
    return [PRIOR if name == f"drafted:{c.value}" else 0.0 for c in CLASSES]


def _fit(examples: Sequence[tuple[set[str], Verdict]], strength: float, iterations: int = 200,
         weights: Sequence[float] | None = None,
         penalty: Callable[[str], float] | None = None) -> dict[str, list[float]]:
    """Weights minimising the mean log loss (each example counted ``weights[i]`` times, 1 without) plus
    ``strength``/2 times the squared distance from the prior, a feature's distance scaled by ``penalty(name)`` (1
    without) (full-batch gradient descent with per-weight step sizes, AdaGrad: the features are sparse and binary)."""
    names = sorted({f for feats, _ in examples for f in feats} | {f"drafted:{c.value}" for c in CLASSES})
    index = {name: i for i, name in enumerate(names)}
    k_n = len(CLASSES)
    # One list of weights per class (feature i's weight for class k is w[k][i]), and each row's and each feature's
    # indices, so the sums run in map/sum rather than in Python loops: a fit of ~1,000 PRs stays within seconds.
    prior = [[_prior(name)[k] for name in names] for k in range(k_n)]
    pull = [strength * (1.0 if penalty is None else penalty(name)) for name in names]
    w = [list(p) for p in prior]
    g2 = [[1e-8] * len(names) for _ in range(k_n)]
    # One row per distinct feature set with its count of each label (a PR labelled by two people is one row): the
    # same loss, computed once per PR instead of once per label.
    counted: dict[frozenset[str], list[float]] = {}
    for i, (feats, v) in enumerate(examples):
        counted.setdefault(frozenset(feats), [0.0] * k_n)[CLASSES.index(v)] += 1.0 if weights is None else weights[i]
    rows = [[index[f] for f in feats] for feats in counted]
    counts = list(counted.values())
    totals = [sum(c) for c in counts]
    n = sum(totals) or 1.0
    rows_of: list[list[int]] = [[] for _ in names]  # feature → the rows it is in
    for r, at in enumerate(rows):
        for i in at:
            rows_of[i].append(r)
    for _ in range(iterations):
        d: list[list[float]] = [[0.0] * len(rows) for _ in range(k_n)]  # class → row → d loss / d logit
        for r, at in enumerate(rows):
            p = _softmax([sum(map(w[k].__getitem__, at)) for k in range(k_n)])
            for k in range(k_n):
                d[k][r] = (totals[r] * p[k] - counts[r][k]) / n
        for k in range(k_n):
            wk, pk, gk, dk = w[k], prior[k], g2[k], d[k]
            for i, its in enumerate(rows_of):
                g = pull[i] * (wk[i] - pk[i]) + sum(map(dk.__getitem__, its))
                gk[i] += g * g
                wk[i] -= 0.5 * g / math.sqrt(gk[i])
    return {name: [w[k][i] for k in range(k_n)] for i, name in enumerate(names)}


def _agreement(weights: dict[str, list[float]], examples: Sequence[tuple[set[str], Verdict]]) -> float:
    model = Calibration(weights, 0.0, 0, deep_read_at=DEEP_READ_AT)
    return sum(model.verdict(f) is v for f, v in examples) / len(examples)


def _drafted(feats: set[str]) -> Verdict:
    return next(c for c in CLASSES if f"drafted:{c.value}" in feats)


def fit(examples: Sequence[tuple[set[str], Verdict]], *, source: str = "",
        groups: Sequence[Hashable] | None = None, weights: Sequence[float] | None = None,
        tune_threshold: bool = True, strengths: Sequence[float] = STRENGTHS,
        penalty: Callable[[str], float] | None = None) -> Calibration:
    """A calibration fitted on ``examples`` (each PR's :func:`features` and its label; each counted ``weights[i]``
    times, 1 without), its strength chosen by cross-validation and, with ``tune_threshold``, its deep-read threshold
    too (:mod:`prdigest.draft.calibration_threshold`); ``groups`` names each example's PR (several labels of one PR
    are cross-validated together); ``strengths`` are those tried, ``penalty`` scales a feature's pull by its name.
    Raises ValueError for fewer than 10 labels: too few to say anything."""
    if len(examples) < 10:
        raise ValueError(f"{len(examples)} labelled PRs: a calibration needs at least 10")
    # The labels of one PR (two labellers, or two files) share a fold: one on each side would score the fit on what
    # it was fitted on, and favour the weakest strength.
    keys: Sequence[Hashable] = range(len(examples)) if groups is None else groups
    if len(keys) != len(examples):
        raise ValueError(f"{len(keys)} groups for {len(examples)} labelled PRs")
    w = [1.0] * len(examples) if weights is None else [float(x) for x in weights]
    if len(w) != len(examples) or any(not x >= 0 for x in w):
        raise ValueError(f"{len(w)} weights for {len(examples)} labelled PRs, each must be a number ≥ 0")
    order: dict[Hashable, int] = {}
    for key in keys:
        order.setdefault(key, len(order))
    n_folds = min(FOLDS, len(order))
    folds = [[i for i, key in enumerate(keys) if order[key] % n_folds == k] for k in range(n_folds)]
    total = sum(w) or 1.0
    drafter = sum(wi for (f, v), wi in zip(examples, w) if _drafted(f) is v) / total
    # The drafter's own verdicts are a candidate too (infinite strength: the prior alone), and win ties: a
    # calibration that does not beat the drafter in cross-validation keeps its verdicts.
    # The strength is the one whose held-out labels are most probable (log loss: every label's probability counts,
    # where agreement counts only which side of a threshold it fell, and on a few hundred labels swings with a
    # handful of PRs); it is kept only if its held-out verdicts also agree with the labels more than the drafter's.
    chosen: tuple[float, float, float] | None = None  # (log loss, agreement, strength)
    held_out: dict[float, list[list[float]]] = {}  # strength → each example's held-out probabilities
    for strength in strengths:
        right, loss = 0.0, 0.0
        probs: list[list[float]] = [[]] * len(examples)
        for held in folds:
            out = set(held)
            kept = [i for i in range(len(examples)) if i not in out]
            fitted = _fit([examples[i] for i in kept], strength, iterations=100, weights=[w[i] for i in kept],
                          penalty=penalty)
            model = Calibration(fitted, 0.0, 0, deep_read_at=DEEP_READ_AT)
            for i in held:
                probs[i] = model.probabilities(examples[i][0])
                right += w[i] * (model.verdict(examples[i][0]) is examples[i][1])
                loss -= w[i] * math.log(max(probs[i][CLASSES.index(examples[i][1])], 1e-12))
        held_out[strength] = probs
        if chosen is None or loss < chosen[0]:
            chosen = (loss, right / total, strength)
    best: tuple[float, float] = (drafter, KEEP)
    if chosen is not None and chosen[1] > drafter:
        best = (chosen[1], chosen[2])
    at = DEEP_READ_AT
    if tune_threshold and best[1] != KEEP:
        at = choose(held_out[best[1]], [CLASSES.index(v) for _, v in examples], DEEP_READ_AT, w)
    names = {f for feats, _ in examples for f in feats} | {f"drafted:{c.value}" for c in CLASSES}
    if best[1] == KEEP:
        fitted = {n: _prior(n) for n in sorted(names)}
    else:
        fitted = _fit(examples, best[1], weights=w, penalty=penalty)
    return Calibration(fitted, best[1], len(examples), cv_calibrated=best[0], cv_drafter=drafter, source=source,
                       meta={"train_agreement": _agreement(fitted, examples)}, deep_read_at=at)


def calibrated(draft: DraftEntry, pr: PullRequest, subsystems: Sequence[str], language: Language,
               calibration: Calibration | None) -> DraftEntry:
    """``draft`` with the calibrated verdict, its rationale then opening with that verdict's words; unchanged
    without a calibration or when it agrees. No warning is added: a warning flags the entry for the editor, and
    a calibrated verdict is the team's own taste, not a doubt (``digest eval`` reports both verdicts)."""
    if calibration is None:
        return draft
    verdict = calibration.verdict(features(pr, subsystems, draft.verdict))
    if verdict is draft.verdict:
        return draft
    return draft.model_copy(update={"verdict": verdict, "rationale": restated(draft.rationale, verdict, language)})
