"""The verdict: a transparent sum of named weights over :mod:`prdigest.kernel.prtext.signals`, then a few rules.

The rules cover kinds of PR whose verdict the score does not decide (typo fixes, reverts, docs-, tests- or
CI-only changes, dependency bumps, security advisories). Each weight a PR earns comes with a short phrase
(the catalogs' ``draft.reason.*``), grounded in the signal, for the rationale to quote.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prdigest.draft import learn, scope
from prdigest.draft.phrasing import area_names, cjk, code_names
from prdigest.kernel.actions import (
    INSTALLER,
    actions,
    dropped,
    is_commit,
    product,
    release_key,
    switch,
    upgrades,
    version_of,
)
from prdigest.kernel.factlines import fact_line, news_first
from prdigest.kernel.i18n import Section
from prdigest.kernel.models import Change, Verdict, opt_in_signature
from prdigest.kernel.prtext.kinds import Kind
from prdigest.kernel.prtext.signals import CI, SOURCE, TEST, Signals, quiet_path
from prdigest.kernel.superseded import SUPPORT_DROPPED

# ── Verdict weights: a PR's score is the sum of the weights whose signal it shows. ──────────────────
W_SIZE_LARGE = 1.0       # ≥ 500 changed lines: a change that size usually carries design decisions
W_SIZE_MEDIUM = 0.5      # ≥ 250 changed lines
W_SIZE_TINY = -1.0       # < 40 changed lines: rarely more than a local tweak
W_CORE = 1.0             # a core subsystem (the rules file's drafting.core): many readers build on it
W_CORE_CROSS = 0.5       # a second core subsystem: cross-cutting changes are where contracts move
W_FEATURE = 0.5          # a security, platform or feature area: a narrower but real audience
W_PERF_CLAIM = 1.0       # a before/after figure or an N× / N% claim: a measured trade-off to study
W_EVALS = 0.5            # accuracy evidence (GSM8K, lm-eval, acceptance length): behaviour was checked
W_PERF_NUMBERS = 0.25    # throughput or latency figures without a comparison: weak evidence
W_ROOT_CAUSE = 0.5       # a bug fix that names its failure mode (overflow, crash, wrong output)
W_GROUNDWORK = -1.0      # "only adds", "first step": what readers will feel lands in a later PR
W_UNCHANGED = -0.5       # "no functional change", "behavior is identical": a refactor readers need not study
W_SWITCH = 0.25          # names a flag or environment variable: a user-visible switch to know about
W_MODEL_ONLY = -0.5      # only model files change: matters mostly to users of that model
W_NEW_SOURCE = 0.5       # a new source file (backend, kernel, connector): a new extension point
W_DESIGN = 0.5           # per family of design words (interfaces, restructuring, failures, trade-offs)
W_DESIGN_CAP = 1.0
W_REVIEW = 0.25          # per substantive review remark: discussion surfaces the trade-offs
W_REVIEW_CAP = 0.5
W_TESTS = 0.25           # source shipped with tests: a behaviour pinned down, worth seeing how
W_EXPLAINED = 0.5        # ≥ 400 characters of description beyond the template: the author explains why
W_UNEXPLAINED = -0.5     # < 150 characters of description: nothing to learn beyond the diff
W_CODE_NAMES = 0.5       # ≥ 4 code names in the prose: the author is concrete about what changed
W_BREAKING = 1.0         # a breaking change or new default: every operator must know
W_DELETION = -1.0        # mostly deletions: removing code teaches little unless you depended on it
# Code facts (prdigest/collect/facts/), when the PR has them: they stand in for size, which is not depth.
W_FACT_BREAKING = 1.0    # a public name removed, renamed, moved or re-signed: every caller must act
W_FACT_API = 0.5         # a public API or configuration surface changed (a default, a base, an abstract method)
W_FACT_ADDITIVE = 0.25   # ... only added to (a name, a parameter with a default): opt-in, no existing call changes
W_FACT_KERNEL = 0.75     # a kernel added or its signature changed: a hot path that others dispatch to
W_FACT_NONE = -0.5       # facts, but none of them about the API or a kernel: an internal change
W_FACT_MECHANISM = 0.25  # ... but a new class or function inside: a mechanism the repo's readers meet next
W_FACT_DEFAULT = 1.0     # a switch or mode every deployment runs with flipped: everyone who runs it meets it
# Kinds of change readers study in any repo (prdigest.kernel.prtext.kinds): each names a contract that moved.
W_KIND = {
    "new-architecture": 1.0,  # a new model or architecture: the template later ones copy
    "cache-contract": 1.0,    # what a cache owns or keys on: stale or shared state follows from it
    "silent-fix": 1.0,        # a fix of silently wrong results: what was wrong, and since when
    "api-meaning": 1.0,       # an API output that now means something else: every client must know
    "default-flip": 1.0,      # a default flipped on measurements: the study is the thing to read
    "extension-point": 0.5,   # a new backend, protocol or hook: later work builds on it
}
# Chosen by leave-out (benchmarks/generalisation.py): the lowest cost on the sample week's tuning halves
# (even PR numbers; the first half by merge time), where a missed deep read costs twice an extra one;
# readers of unseen weeks found 2.75 too conservative. The held-out halves are only reported.
_SHA = re.compile(r"[0-9a-f]{7,40}")
DEEP_READ_AT = 2.25      # a score at or above this is a deep read
SKIM_AT = 1.0            # a score at or above this is worth skimming
MIN_SHIPPED_LINES = 40   # a change this big to shipped source (or a fix of a crash there) is never skipped
SMALL_DIFF = 40          # a diff under this many changed lines is read whole in the time its entry takes



#: A value a reason's phrase takes: as is, or made in the phrase's language (labels, lists, fact lines).
Value = str | int | Callable[[Section], str]


@dataclass(frozen=True)
class Reason:
    """One signal's part in the verdict, and how to say it: the catalogs' ``draft.reason.<message>``."""

    key: str
    weight: float
    message: str
    values: tuple[tuple[str, Value], ...] = ()

    def text(self, words: Section) -> str:
        """The phrase in the language of ``words`` (:func:`~prdigest.draft.phrasing.draft_words`)."""
        given = {k: v(words) if callable(v) else v for k, v in self.values}
        return str(words["reason"][self.message].format(**given))


@dataclass(frozen=True)
class Assessment:
    """The verdict, the score behind it and, when a rule decided, that rule's reason."""

    verdict: Verdict
    score: float
    reasons: tuple[Reason, ...]
    rule: Reason | None = None


def _scored(s: Signals) -> list[Reason]:
    """The weights a PR earns, each with a short phrase grounded in the signal."""
    out: list[Reason] = []

    def add(key: str, weight: float, message: str, **values: Value) -> None:
        out.append(Reason(key, weight, message, tuple(values.items())))

    # The +/- figures follow the reasons in the rationale, so the size phrases carry no numbers. With code
    # facts, what the code did replaces how much of it changed.
    taught = learn.lessons(s)
    if s.changes:
        _facts(s, add, taught=bool(taught))
    elif s.size >= 500:
        add("size", W_SIZE_LARGE, "size_large")
    elif s.size >= 250:
        add("size", W_SIZE_MEDIUM, "size_medium")
    elif s.size < 40:
        add("size", W_SIZE_TINY, "size_tiny")
    core = tuple(a for a in s.areas if a in s.vocabulary.hints.core)
    if core:
        add("core", W_CORE + (W_CORE_CROSS if len(core) > 1 else 0.0), "core",
            areas=lambda w: area_names(core, w, s.vocabulary))
    feature = tuple(a for a in s.areas if a in s.vocabulary.hints.features)
    if feature:
        add("feature", W_FEATURE, "feature", areas=lambda w: area_names(feature, w, s.vocabulary))
    if s.perf_claims:
        add("perf", W_PERF_CLAIM, "perf", figures=lambda w: w["list"].join(s.perf_claims[:2]))
    elif s.evals:
        add("evals", W_EVALS, "evals", evals=s.evals[0])
    elif s.perf_units:
        add("perf", W_PERF_NUMBERS, "perf_numbers")
    for lesson in taught:  # what a reader can learn, even where every name is internal (prdigest/draft/learn.py)
        add(f"lesson-{lesson.key}", learn.WEIGHT[lesson.key], "lesson", text=_lesson_text(lesson))
    if s.is_bugfix and "failure" in s.design and not any(x.key == "root-cause" for x in taught):
        add("root-cause", W_ROOT_CAUSE, "root_cause")
    if s.groundwork and not _changes_behaviour(s):
        add("groundwork", W_GROUNDWORK, "groundwork")
    if s.unchanged_behaviour:
        add("unchanged", W_UNCHANGED, "unchanged")
    if s.switches:
        add("switch", W_SWITCH, "switch", names=lambda w: code_names(s.switches, 2, cjk(w)))
    sources = s.of_kind(SOURCE)
    new_architecture = any(k.key == "new-architecture" for k in s.kinds)
    if sources and all("models/" in f.path for f in sources) and not new_architecture:
        add("model-only", W_MODEL_ONLY, "model_only")
    # With facts, new Python code's worth is its lesson (a mechanism) or none; a new compiled op (C++, AscendC) has
    # no classes that lesson reads, so its new files still count (a fused kernel and its integration).
    compiled = [f for f in s.new_sources if not f.path.endswith(".py")]
    if s.new_sources and (not s.changes or compiled):
        add("new", W_NEW_SOURCE, "new", path=(compiled or s.new_sources)[0].path)
    if s.design:
        add("design", min(W_DESIGN_CAP, W_DESIGN * len(s.design)), "design",
            topics=lambda w: w["list"].join(w["topic"][d] for d in s.design))
    if s.remarks:
        add("review", min(W_REVIEW_CAP, W_REVIEW * len(s.remarks)), "review", n=len(s.remarks))
    if s.of_kind(TEST) and sources:
        add("tests", W_TESTS, "tests")
    if len(s.body) >= 400:
        add("explained", W_EXPLAINED, "explained")
    elif len(s.body) < 150 and not any(x.key in learn.KERNEL_LESSONS for x in taught):
        add("unexplained", W_UNEXPLAINED, "unexplained")  # a kernel's lesson is in its code, not its description
    if len(s.identifiers) >= 4:
        add("names", W_CODE_NAMES, "names")
    if s.breaking:
        add("breaking", W_BREAKING, "breaking", what=s.breaking[0])
    for kind in s.kinds:
        add(kind.key, W_KIND[kind.key], "kind", text=_kind_text(kind))
    if s.deletions >= 50 and s.additions < 0.1 * s.deletions:
        add("deletion", W_DELETION, "deletion")
    return out


def _changes_behaviour(s: Signals) -> bool:
    """Whether the facts show shipped code behaving differently now (a body changed, a name removed): a PR "in
    preparation for" a later one that already does that is no groundwork; its readers feel it now."""
    return any(c.kind in ("body", "removed") and not quiet_path(c.path) for c in s.changes)


def _kind_text(kind: Kind) -> Callable[[Section], str]:
    """The reason's sentence for ``kind``, in the words of the section it is given."""
    return lambda w: w["kind"][kind.key].format(evidence=kind.evidence)


def _lesson_text(lesson: learn.Lesson) -> Callable[[Section], str]:
    """The reason's sentence for ``lesson``, in the words of the section it is given."""
    return lambda w: w["lesson"][lesson.key].format(evidence=lesson.evidence)


def _facts(s: Signals, add: Callable[..., None], *, taught: bool) -> None:
    """The weights of the code facts, each phrased by its most important fact; ``taught``: the PR has a lesson
    (prdigest/draft/learn.py), so internal facts are no reason to read less."""
    # Within each kind, the fact the title does not already name: the reason says something the title did not.
    breaking, api, kernels = (news_first(c, s.core_title) for c in (s.breaking_changes, s.api_changes,
                                                                    s.kernel_changes))
    if breaking:
        more = len(breaking) - 1
        add("fact-breaking", W_FACT_BREAKING, "fact_breaking_more" if more else "fact_breaking",
            fact=lambda w: fact_line(breaking[0], w.language), more=more, total=len(breaking))
    breaks = set(breaking)  # a set: ``in`` on the list compared every pair of facts (quadratic)
    others = [c for c in api if c not in breaks]
    if others:
        additive = all(_additive(c) for c in others)
        add("fact-api", W_FACT_ADDITIVE if additive else W_FACT_API, "fact",
            fact=lambda w: fact_line(others[0], w.language))
    if kernels:
        add("fact-kernel", W_FACT_KERNEL, "fact", fact=lambda w: fact_line(kernels[0], w.language))
    flipped = [c for c in s.api_changes if _default_flipped(c)]
    if flipped and not s.breaking:  # the prose already said "by default now": one reason, not two
        add("fact-default", W_FACT_DEFAULT, "fact_default", fact=lambda w: fact_line(flipped[0], w.language))
    if not (breaking or api or kernels):
        # Nothing public moved; a new class or function inside is still a mechanism its readers meet next.
        built = news_first([c for c in s.changes if c.kind == "added" and "." not in c.symbol and c.public
                            and not quiet_path(c.path)], s.core_title)
        if built:
            add("fact-mechanism", W_FACT_MECHANISM, "fact_mechanism", fact=lambda w: fact_line(built[0], w.language))
            return
        if taught:
            return  # in a plugin every name is internal: what it teaches is the reason to read it
        internal = news_first(s.changes, s.core_title)
        add("fact-internal", W_FACT_NONE, "fact_internal", fact=lambda w: fact_line(internal[0], w.language))


#: A ``detail`` of a setting's fact: the platform used to force another value and now keeps the user's (and
#: the upstream's default): prdigest/collect/facts/overrides.py (the kernel does not import the collectors).
UNREWRITTEN = "no longer rewritten"


def _default_flipped(c: Change) -> bool:
    """A setting whose default is now another switch position or mode (``False`` → ``True``, ``PIECEWISE`` →
    ``FULL_AND_PIECEWISE``, or a value the platform no longer rewrites): what every deployment that does not set it
    now runs with. A tuned number (a timeout, a factor) is a setting readers look up, not a new way to run."""
    if c.kind not in ("env", "argument", "config") or c.detail not in ("default", UNREWRITTEN):
        return False
    old, new = (v.strip().strip("'\"") for v in (c.before, c.after))
    if not old or not new or old == new:
        return False
    if switch(old) is not None or switch(new) is not None:
        return switch(old) != switch(new)
    return all(re.fullmatch(r"[A-Za-z_][\w.-]*", v) for v in (old, new)) and not {old.lower(), new.lower()} & {"none"}


def _additive(c: Change) -> bool:
    """A fact that only adds to the API: a new name, a new setting, parameters added with a default or required
    ones given one. Code written before it works and means the same."""
    if c.kind == "added" or (c.kind in ("env", "argument", "config") and c.after and not c.before):
        return True
    return c.kind == "signature" and opt_in_signature(c.detail)


#: The Python packages that are a platform's own runtime, in any project built on PyTorch or JAX: the tensor
#: runtime and its device extension (``torch``, ``torch-npu``, ``torch_xla``), its kernel compilers (``triton``, a
#: vendor's ``triton-ascend``) and JAX with its TPU runtime. A pin of any other library (``transformers``, a KV-transfer
#: engine, ``psutil``) is a dependency its readers follow by its action, not the platform moving.
_RUNTIME = re.compile(r"(?:py)?torch(?:[-_][\w.-]+)?|triton(?:[-_][\w.-]+)?|jax(?:lib)?|libtpu(?:[-_][\w.-]+)?",
                      re.IGNORECASE)
#: Where an image's system toolchain is pinned: a Dockerfile (its base image, an ``ARG``/``ENV`` version) or a
#: ``version.info`` file.
_TOOLCHAIN_FILE = re.compile(r"(^|/)(Dockerfile[^/]*|[^/]+\.dockerfile|Containerfile[^/]*|version\.info)$",
                             re.IGNORECASE)
#: A Dockerfile setting naming a git ref (``VLLM_TAG``, ``VLLM_COMMIT``): a project the image builds from source,
#: which is the upstream or a library, not the toolchain the image runs on.
_GIT_REF = re.compile(r"_(?:TAG|COMMIT)$", re.IGNORECASE)
#: Stages of a preview build (dev, alpha, beta: prdigest.kernel.actions.release_key): main trying a toolkit out is
#: for those who test it; a release candidate is how some vendors ship their toolkits, so it counts as a release.
_PREVIEW = -2
#: A version that is only a build date (``20260105``): a nightly build, a preview like a dev build.
_NIGHTLY = re.compile(r"(?:19|20)\d{6}\d*")


def _release(version: str) -> bool:
    """Whether ``version`` names a release: not a commit, a preview build or a nightly."""
    return (bool(version) and not is_commit(version) and not _NIGHTLY.fullmatch(version)
            and release_key(version)[1] > _PREVIEW)


def _system_toolchain(c: Change) -> bool:
    """A pin of what an image is built on: a vendor installer, a base image or a ``*_VERSION`` setting of a
    Dockerfile, a ``version.info``. Even a patch release of these is a new toolkit to install: no ``pip -U``."""
    if c.detail == INSTALLER:
        return True
    return bool(_TOOLCHAIN_FILE.search(c.path)) and "==" not in c.after and not _GIT_REF.search(c.symbol)


def _runtime_pin(c: Change) -> bool:
    """An exact pin of a platform runtime package (:data:`_RUNTIME`), wherever it is written."""
    exact = "==" in c.after or not c.path.endswith((".txt", ".in", ".toml", ".py"))
    return exact and bool(_RUNTIME.fullmatch(product(c)))


def platform_upgrades(s: Signals) -> list[str]:
    """What of the platform the PR moves that everyone running main must follow, as ``name version``: its system
    toolchain (a base image, a toolkit's version or installer) to a newer release, a runtime package (torch and its
    device extension, triton, jax: :data:`_RUNTIME`) to a newer release line, or the upstream's release it stops
    supporting (its version gates removed, ``name > release``) when main does not move to a commit instead.

    Not the platform: a library pin, a source checkout's tag, a patch release of a Python package (readers follow
    its action), a preview build (dev, alpha, beta) and a commit (main tracking the upstream's main)."""
    pins = [c for c in s.changes if c.kind == "dependency" and c.reach == "public" and c.after
            and (_system_toolchain(c) or _runtime_pin(c))]
    moved = [c for c in pins if c.before and not is_commit(version_of(c.before)) and _release(version_of(c.after))
             and (_system_toolchain(c) or not _patch_release(c))]
    # Once the platform moved, every runtime pin it moves is said beside it (torch-npu's post-release with CANN).
    out = [f"{name} {version}" for name, version, newer in upgrades(pins)
           if newer and _release(version)] if moved else []
    # The upstream's release main stops supporting: the baseline moved, unless main moved to a commit of the
    # upstream's main instead, or to the next patch release of the same line (v0.20.1 → v0.20.2).
    to_commit = {name.lower() for name, _, _ in dropped(s.changes)}
    pinned = [(product(c).lower(), version_of(c.after)) for c in s.changes
              if c.kind == "dependency" and c.reach == "public" and c.after]
    for c in s.changes:
        if c.kind != "dependency" or c.reach != "public" or c.detail != SUPPORT_DROPPED:
            continue
        name = product(c).lower()
        if name not in to_commit and not any(n == name and _same_line(c.before, v) for n, v in pinned):
            out.append(f"{c.symbol} > {c.before}")
    return list(dict.fromkeys(out))


def _same_line(old: str, new: str) -> bool:
    """Whether two versions share their first two release numbers (``0.20.1`` and ``v0.20.2``)."""
    a, b = (re.findall(r"\d+", version_of(v))[:2] for v in (old, new))
    return len(a) == len(b) == 2 and a == b


def _patch_release(c: Change) -> bool:
    """A pin moving within one release line (``v0.20.1`` → ``v0.20.2``): a patch release, compatible by
    convention; readers follow its action, they need not study it."""
    old, new = (re.findall(r"\d+", version_of(v))[:3] if v else [] for v in (c.before, c.after))
    return len(old) == len(new) == 3 and old[:2] == new[:2]


def _rule(s: Signals, scored: Verdict) -> tuple[Verdict, Reason | None]:
    """Kinds of PR whose verdict the score does not decide; ``None`` as reason when the score stands."""
    if s.advisories:
        return Verdict.DEEP_READ, Reason("advisory", 0, "rule_advisory", (("advisory", s.advisories[0]),))
    platform = platform_upgrades(s)
    if platform and not s.is_revert:
        return Verdict.DEEP_READ, Reason("platform", 0, "rule_platform", (("what", ", ".join(platform[:3])),))
    if s.is_typo:
        return Verdict.SKIP, Reason("typo", 0, "rule_typo")
    if s.is_revert:
        if s.revert_has_reason:
            return Verdict.SKIM, Reason("revert", 0, "rule_revert")
        return Verdict.SKIP, Reason("revert", 0, "rule_revert_bare")
    if s.tests_only:
        return Verdict.SKIP, Reason("tests", 0, "rule_tests")
    asks = bool(actions(s.changes, "en"))
    if scope.translation_only(s):
        return Verdict.SKIP, Reason("docs", 0, "rule_translation")
    if scope.touch_up(s) and not asks:
        return Verdict.SKIP, Reason("docs", 0, "rule_touch_up")
    if (s.docs_only and (scope.user_docs(s) or scope.new_pages(s))) or (scope.docs_and_ci(s) and not s.is_bump):
        return Verdict.SKIM, Reason("docs", 0, "rule_docs")
    if s.is_bump:
        if s.breaking:
            return Verdict.DEEP_READ, Reason("bump", 0, "rule_bump_breaking", (("what", s.breaking[0]),))
        if s.only_kinds == {CI} and not asks:  # a CI action's version: plumbing nobody who runs the code sees
            return Verdict.SKIP, Reason("ci", 0, "rule_ci")
        return Verdict.SKIM, Reason("bump", 0, "rule_bump")
    if s.ci_only and not asks:
        return Verdict.SKIP, Reason("ci", 0, "rule_ci")
    if scope.own_work(s):
        return Verdict.SKIP, Reason("own-work", 0, "rule_own_work")
    if scope.removal_only(s) and not s.kinds:
        return Verdict.SKIP, Reason("removal", 0, "rule_removal")
    if learn.mechanical(s) is not None:
        return Verdict.SKIM if scored is Verdict.DEEP_READ else Verdict.SKIP, Reason("mechanical", 0, "rule_mechanical")
    if s.quiet_facts and scored is Verdict.DEEP_READ:
        return Verdict.SKIM, Reason("quiet-facts", 0, "rule_quiet_facts")
    if (s.changes and scored is Verdict.DEEP_READ and s.size < SMALL_DIFF and not s.breaking_changes
            and not s.kernel_changes and not learn.lessons(s)):
        # A deep read is for what takes study: callers to adapt, a kernel, a change too big to take in at once.
        return Verdict.SKIM, Reason("small", 0, "rule_small", (("size", s.size),))
    if scored is Verdict.SKIP and upgrades([c for c in s.changes if c.kind == "dependency"]):
        return Verdict.SKIM, None  # a runtime requirement moved or was added: its readers must know
    fixes_a_failure = s.is_bugfix and "failure" in s.design
    if scored is Verdict.SKIP and s.of_kind(SOURCE) and (s.size >= MIN_SHIPPED_LINES or fixes_a_failure):
        return Verdict.SKIM, None  # skip is for changes that ship nothing a user would notice
    if scored is Verdict.SKIP and s.is_bugfix and s.of_kind(SOURCE) and not _follows_upstream(s):
        # a fix of shipped code, however small, is a behaviour a user may have met: labellers glance at nearly
        # every one (a fix that only follows the upstream's latest change, an import moved, stays skipped)
        return Verdict.SKIM, None
    if scored is Verdict.SKIP and (scope.adds_behaviour(s) or asks):
        return Verdict.SKIM, None  # shipped code gained a guard or a path, or a reader must act: worth a glance
    return scored, None


#: A fix that follows the upstream's latest change: the break and its lesson are the upstream's.
_FOLLOWS_UPSTREAM = re.compile(r"\b(?:upstream|lkg|fix_for_vllm\w*|imports?(?: error| issue|ing)?)\b"
                               r"|\bvllm\b.{0,30}\b(?:change|break|refactor)", re.IGNORECASE)


#: A fix of wording, not behaviour: what the rubric skips.
_WORDING = re.compile(r"\b(?:docstrings?|comments?|typos?|spelling|wording|lint\w*|format\w*|style|pre-commit|mypy)\b",
                      re.IGNORECASE)


def _follows_upstream(s: Signals) -> bool:
    """Whether a fix says it follows the upstream (an import moved, a break upstream, a CI-tagged repair) or only
    mends wording (a docstring, a lint error): neither is a behaviour a user met."""
    return bool(_FOLLOWS_UPSTREAM.search(s.title) or _WORDING.search(s.core_title)) or learn.adaptation(s) \
        or any(t.lower() in ("ci", "test", "tests", "ut") for t in s.tags)


def assess(s: Signals, *, deep_read_at: float = DEEP_READ_AT) -> Assessment:
    """Score the signals, apply the kind rules; a change its body says was reverted drops one step.

    ``deep_read_at`` is for measuring the threshold (benchmarks/generalisation.py); drafts use the default.
    """
    reasons = tuple(sorted(_scored(s), key=lambda r: (-r.weight, r.key)))
    score = round(sum(r.weight for r in reasons), 2)
    scored = Verdict.DEEP_READ if score >= deep_read_at else Verdict.SKIM if score >= SKIM_AT else Verdict.SKIP
    verdict, rule = _rule(s, scored)
    if s.later_reverted:
        verdict = Verdict.SKIM if verdict is Verdict.DEEP_READ else Verdict.SKIP
        rule = Reason("reverted", 0, "rule_reverted")
    return Assessment(verdict, score, reasons, rule)
