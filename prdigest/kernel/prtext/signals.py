"""Signals: the facts about a PR that a verdict and a draft can be grounded in, read from its own data.

Everything here is pure and deterministic. The text scanning lives in :mod:`prdigest.kernel.prtext.prose`, the
file facts in :mod:`prdigest.kernel.prtext.files` and the area inference in :mod:`prdigest.kernel.prtext.areas`;
their public names are re-exported here, where drafters have always imported them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from prdigest.kernel.factlines import API_KINDS
from prdigest.kernel.models import Change, PullRequest
from prdigest.kernel.prtext.areas import areas_from, by_priority
from prdigest.kernel.prtext.files import BENCH, BUILD, CI, DOC, EXAMPLE, SOURCE, TEST, FileFact, file_facts, file_kind
from prdigest.kernel.prtext.kinds import Kind, deep_kinds
from prdigest.kernel.prtext.prose import (
    MAX_IDENTIFIERS,
    MAX_SCAN,
    clean_line,
    identifiers_in,
    perf_evidence,
    sentences,
    snippets_with,
    strip_template,
    switches_in,
    unique,
)
from prdigest.kernel.text import clean
from prdigest.kernel.vocabulary import Vocabulary

__all__ = [
    "BENCH", "BUILD", "CI", "DOC", "EXAMPLE", "MAX_COMMENT",
    "MAX_COMMENTS", "MAX_IDENTIFIERS", "MAX_SCAN", "MAX_TITLE", "SOURCE", "TEST", "FileFact", "Remark",
    "Signals", "clean_line", "extract", "file_kind", "sentences", "strip_template",
]

MAX_TITLE = 400


def quiet_path(path: str) -> bool:
    """A file whose facts no user of the code sees: tests, docs, benchmarks, examples."""
    return file_kind(path) in (TEST, DOC, BENCH, EXAMPLE)


_quiet_path = quiet_path
MAX_COMMENT = 2_000
MAX_COMMENTS = 50

_TAGS = re.compile(r"^\s*((?:\[[^\]\n]{0,60}\]\s*:?\s*)+)")
_TAG = re.compile(r"\[([^\]\n]{0,60})\]")
_REVERT = re.compile(r'^\s*revert(?:s|ed)?\b\s*:?\s*"?(.*?)"?\s*$', re.IGNORECASE)
_PR_REF = re.compile(r"#(\d{1,7})\b")
_TYPO = re.compile(r"\b(typos?|misspell\w*|spelling)\b", re.IGNORECASE)
_BUGFIX = re.compile(r"^\s*(?:\[\s*bug\s*-?fix\s*\]|\[\s*fix\s*\]|fix(?:es|ed)?\b|hotfix\b)", re.IGNORECASE)
_BUMP = re.compile(r"\b(bump|upgrade|update|pin|unpin)\b.{0,60}?\b(to|from|version|v?\d+(?:\.\d+)+|==|>=)",
                   re.IGNORECASE)
_FLAKY = re.compile(r"\bflak(y|iness)\b", re.IGNORECASE)
#: The note a description gets when its change was reverted (one change: "it was reverted", "has been reverted";
#: not things "reverted to" an earlier state, nor parts that "have been reverted" by this change).
_LATER_REVERTED = re.compile(r"\b(?:was|got|has been|had been) reverted\b(?! to\b)", re.IGNORECASE)
#: A re-land says the *earlier* attempt "was reverted": that is not this change being reverted. It may say so
#: by restoring a PR, or by naming the original one as the change reverted.
_RELAND = re.compile(r"\b(?:re-?land\w*|re-?appl(?:y|ies|ied)|(?:second|another) (?:try|attempt)|attempt 2|"
                     r"try again|restor(?:e|es|ed|ing) (?:pr-?|#)\d+|(?:original|previous|earlier|prior|first) "
                     r"(?:PR|pull request|change|commit|attempt)\b[^.\n]{0,80}?\b(?:was|got|has been|had been) "
                     r"reverted)\b|重新(?:合入|提交|应用)", re.IGNORECASE)
_REASON = re.compile(
    r"\b(because|caus\w+|break\w*|broke\w*|regress\w*|problem\w*|fail\w*|crash\w*|wrong|unreachable|"
    r"dead code|can never|never run\w*|hang\w*|slower|incorrect|bug\w*|over-?appl\w+|verbose|leak\w*)\b",
    re.IGNORECASE)
_BREAKING = re.compile(
    r"\b(breaking|backwards?[- ]incompatible|incompatib\w+|temporarily (?:skipped|disabled)|"
    r"(?:tests?|architectures?|models?|features?) (?:are|were) (?:now )?(?:skipped|disabled)|"
    r"no longer (?:supported|works?)|drops? support|"
    r"changes? the default|new default|by default now|default (?:is|becomes) now|CVE-\d{4}-\d+|GHSA-[\w-]+)\b",
    re.IGNORECASE)
_ADVISORY = re.compile(r"\b(CVE-\d{4}-\d{3,7}|GHSA(?:-[0-9a-z]{4}){3})\b", re.IGNORECASE)
_LATER_WORK = re.compile(
    r"\b(?:follow-?ups?(?! to\b| commit|\s?:)|TODO|FIXME|next PR|future (?:PR|work)|left for|to follow|"
    r"will follow|separately|later PRs?|in a later|out of scope|not yet|remaining issues?|"
    r"further suspected|re-?enable)\b",
    re.IGNORECASE)
_SKIPPED = re.compile(r"\b(skip(?:s|ped)?|disabled?|xfail\w*|flaky)\b", re.IGNORECASE)

# Design evidence in the prose: each family counts once.
_DESIGN_TERMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("interface", re.compile(r"\b(interface|protocol|callbacks?|hooks?|abstraction|contract|extension point|"
                             r"plug-?in|registry|dispatch\w*)\b", re.IGNORECASE)),
    ("restructure", re.compile(r"\b(refactor\w*|restructur\w+|rewrit\w+|rewritten|redesign\w*|unif(?:y|ied)|"
                               r"decoupl\w+|monkey-?patch\w*|replaces?)\b", re.IGNORECASE)),
    ("failure", re.compile(r"\b(overflow\w*|race|deadlock\w*|crash\w*|invalid argument|illegal memory|root cause|"
                           r"corrupt\w*|wrong|accuracy|acceptance|NaNs?|hang\w*|OOM|out of memory|"
                           r"denial of service|DoS|SSRF|vulnerab\w+|unbounded)\b", re.IGNORECASE)),
    ("trade-off", re.compile(r"\b(trade-?offs?|instead of|rather than|at the cost|threshold|heuristic|"
                             r"only pays|low concurrency|padd(?:ed|ing)|lifetime|persistent buffer)\b",
                             re.IGNORECASE)),
)

_EVALS = re.compile(r"\b(GSM8K|MMLU|lm[_-]eval|exact match|perplexity|acceptance (?:rate|length)|"
                    r"accuracy (?:is|was|of|matches|unchanged)|pass@\d)\b", re.IGNORECASE)
_GROUNDWORK = re.compile(r"\b(only adds|first step|groundwork|in preparation for|preparatory|"
                         r"integration comes|not (?:yet )?(?:wired|integrated)|not (?:yet )?used(?! with| together))\b",
                         re.IGNORECASE)  # "is not used with op X" is a constraint, not unfinished wiring
_UNCHANGED_BEHAVIOUR = re.compile(
    r"\b(no\s(?:functional|behaviou?r(?:al)?|user-visible)\schanges?|behaviou?r\s(?:is\s|should\sbe\s|is\smeant\s"
    r"to\sbe\s|stays\s|remains\s)?(?:identical|unchanged|the\ssame)|pure(?:ly)?\s(?:refactor\w*|mechanical|cosmetic)|"
    r"(?:is|are)\s(?:purely\s)?mechanical)\b", re.IGNORECASE)
_LOW_VALUE_COMMENT = re.compile(r"^\W*(lgtm|looks good|thanks?|thank you|approved?|ship it|nice|\+1)\b",
                                re.IGNORECASE)


@dataclass(frozen=True)
class Remark:
    """A substantive review comment (not "LGTM"), cleaned and bounded."""

    author: str
    text: str


@dataclass(frozen=True)
class Signals:
    """Everything the verdict and the draft use, extracted once from a PR and its subsystems."""

    number: int
    author: str
    title: str            # control characters removed, whitespace collapsed, bounded
    core_title: str       # without [Tag] prefixes, a trailing "(#123)" or "Revert" wrapper
    tags: tuple[str, ...]
    body: str             # template comments and checklists removed, bounded
    additions: int
    deletions: int
    files: tuple[FileFact, ...]  # sorted: most changed first, then by path
    files_truncated: bool
    areas: tuple[str, ...]        # given subsystems, or inferred ones when none were given; priority order
    title_areas: tuple[str, ...]  # the areas the title's tags and words point to
    is_revert: bool
    revert_has_reason: bool
    reverted_refs: tuple[str, ...]
    is_typo: bool
    is_bugfix: bool
    is_bump: bool
    is_flaky: bool
    later_reverted: bool
    breaking: tuple[str, ...]
    advisories: tuple[str, ...]
    perf_claims: tuple[str, ...]
    perf_units: bool
    evals: tuple[str, ...]
    groundwork: bool
    unchanged_behaviour: bool  # the author says nothing a user sees changes ("behavior is identical")
    switches: tuple[str, ...]
    max_factor: str | None
    design: tuple[str, ...]
    remarks: tuple[Remark, ...]
    identifiers: tuple[str, ...]
    later_work: tuple[str, ...]
    skipped_tests: bool
    #: Kinds of change readers study in any repo (new architecture, cache contract, silent fix, ...).
    kinds: tuple[Kind, ...] = ()
    #: The repo's subsystems: labels, audiences and what counts as core, for the parts that phrase the draft.
    vocabulary: Vocabulary = field(default_factory=Vocabulary.open)
    #: The code facts read from the files before and after (empty when none were computed).
    changes: tuple[Change, ...] = ()

    @property
    def api_changes(self) -> tuple[Change, ...]:
        """Public Python API and configuration-surface facts (what callers and operators use)."""
        return tuple(c for c in self.changes if c.public and c.reach == "public" and c.kind in API_KINDS
                     and not _quiet_path(c.path))

    @property
    def kernel_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.kind == "kernel")

    @property
    def breaking_changes(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.breaks and not _quiet_path(c.path))

    @property
    def quiet_facts(self) -> bool:
        """True when the PR has facts and every one is about tests, docs, dependency pins, CI jobs or build
        variables."""
        return bool(self.changes) and all(c.kind in ("tests", "dependency", "ci", "build") or _quiet_path(c.path)
                                          for c in self.changes)

    @property
    def size(self) -> int:
        return self.additions + self.deletions

    def of_kind(self, *kinds: str) -> tuple[FileFact, ...]:
        return tuple(f for f in self.files if f.kind in kinds)

    @property
    def only_kinds(self) -> frozenset[str]:
        return frozenset(f.kind for f in self.files)

    @property
    def docs_only(self) -> bool:
        return bool(self.files) and self.only_kinds == {DOC}

    @property
    def tests_only(self) -> bool:
        return bool(self.files) and self.only_kinds == {TEST}

    @property
    def ci_only(self) -> bool:
        return bool(self.files) and self.only_kinds <= {CI, BUILD}

    @property
    def new_sources(self) -> tuple[FileFact, ...]:
        return tuple(f for f in self.files if f.kind == SOURCE and f.is_new)


def extract(pr: PullRequest, subsystems: list[str], vocabulary: Vocabulary | None = None) -> Signals:
    """Read the signals of one PR; ``subsystems`` may be empty or just the fallback.

    Without a ``vocabulary`` (a repo without rules) the areas are the fallback at most.
    """
    vocab = vocabulary or Vocabulary.open()
    fallback = vocab.fallback.name
    title = clean_line(pr.title[: MAX_TITLE * 4], MAX_TITLE)
    body = strip_template(clean(pr.body[: MAX_SCAN * 2]))[:MAX_SCAN]
    tag_match = _TAGS.match(title)
    tags = tuple(t.strip().lower() for t in _TAG.findall(tag_match.group(1))) if tag_match else ()
    core_title = title[tag_match.end():] if tag_match else title
    revert = _REVERT.match(core_title)
    is_revert = bool(revert) and core_title.lower().startswith("revert")
    if is_revert and revert:
        inner = revert.group(1)
        inner_tags = _TAGS.match(inner)
        if inner_tags:  # the reverted PR's tags name the area just as well
            tags += tuple(t.strip().lower() for t in _TAG.findall(inner_tags.group(1)))
        core_title = inner[inner_tags.end():] if inner_tags else inner
    core_title = re.sub(r"\s*\(#\d+\)\s*$", "", core_title).strip(" .\"'")

    facts = file_facts(pr.files, vocab.hints)
    additions = pr.additions or sum(f.additions for f in pr.files)
    deletions = pr.deletions or sum(f.deletions for f in pr.files)

    given = [s for s in subsystems if s != fallback]
    labels = tuple(clean_line(label, 60).lower() for label in pr.labels[:20])
    inferred = areas_from(facts, (*tags, *labels, core_title.lower()), vocab)
    areas = (by_priority(given, vocab) or by_priority(inferred, vocab)
             or ((fallback,) if fallback in subsystems else ()))
    comments = [(clean_line(c.author, 40), clean(c.body[:MAX_COMMENT]))
                for c in [*pr.review_comments, *pr.comments][:MAX_COMMENTS]]  # wherever the source put them
    remarks = tuple(Remark(author, clean_line(text, 400)) for author, text in comments
                    if len(text.strip()) >= 40 and not _LOW_VALUE_COMMENT.match(text[:200])
                    and "emoji" not in text[:80].lower())
    comment_texts = [text for _, text in comments]
    prose = f"{title}\n{body}"
    perf_claims, perf_units, max_factor = perf_evidence(body)
    evals = unique([m.group(1) for m in _EVALS.finditer(body)])[:3]
    is_bugfix = bool(_BUGFIX.search(core_title)) or any("fix" in t for t in tags)

    return Signals(
        number=pr.number, author=pr.author, title=title, core_title=clean_line(core_title, 200), tags=tags,
        body=body, additions=additions, deletions=deletions, files=facts, files_truncated=pr.files_truncated,
        areas=areas, title_areas=by_priority(areas_from((), (*tags, core_title.lower()), vocab), vocab),
        is_revert=is_revert,
        revert_has_reason=bool(_REASON.search(body)) if is_revert else False,
        reverted_refs=unique(_PR_REF.findall(f"{title}\n{body[:600]}"))[:3] if is_revert else (),
        is_typo=bool(_TYPO.search(title)),
        is_bugfix=is_bugfix,
        is_bump=bool(_BUMP.search(core_title)) and bool(facts) and all(
            f.kind in (BUILD, CI, TEST, DOC) for f in facts),
        is_flaky=bool(_FLAKY.search(title)),
        later_reverted=bool(_LATER_REVERTED.search(body)) and not is_revert and not _RELAND.search(prose[:2000]),
        breaking=unique([m.group(0) for m in _BREAKING.finditer(prose)])[:4],
        advisories=unique([m.group(1) for m in _ADVISORY.finditer(prose)])[:3],
        perf_claims=perf_claims, perf_units=perf_units, max_factor=max_factor,
        evals=evals,
        groundwork=bool(_GROUNDWORK.search(body)),
        unchanged_behaviour=bool(_UNCHANGED_BEHAVIOUR.search(body)),
        switches=switches_in(prose)[:4],
        design=tuple(name for name, pattern in _DESIGN_TERMS if pattern.search(prose)),
        remarks=remarks,
        identifiers=identifiers_in(f"{core_title}\n{body}", tuple(f.path for f in facts[:200])),
        later_work=snippets_with(_LATER_WORK, [body, *comment_texts]),
        skipped_tests=bool(_SKIPPED.search(title)) or bool(
            re.search(r"\b(tests?|architectures?|cases?)\b[^.\n]{0,40}\b(skipped|disabled)\b", body,
                      re.IGNORECASE)),
        kinds=deep_kinds(core_title, body, facts, is_bugfix=is_bugfix,
                         measured=bool(perf_claims or perf_units or evals)),
        vocabulary=vocab,
        changes=tuple(pr.changes),
    )
