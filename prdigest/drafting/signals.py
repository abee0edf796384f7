"""Signals: the facts about a PR that a verdict and a draft can be grounded in, read from its own data.

Everything here is pure and deterministic. Untrusted text is bounded before any regex sees it, and every
pattern is linear (no nested quantifiers), so a 200 KB body or 3,000 files cost milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from prdigest.models import SUBSYSTEMS, FileChange, PullRequest, strip_control

#: Only this much of a body is scanned: PR descriptions that matter fit easily; logs pasted below do not.
MAX_SCAN = 20_000
MAX_TITLE = 400
MAX_COMMENT = 2_000
MAX_COMMENTS = 50
MAX_IDENTIFIERS = 12

#: Subsystems whose changes shape how the engine runs; a change there is worth more attention.
CORE_AREAS = ("attention", "moe", "kernels", "spec-decode", "distributed", "kv-cache", "scheduler-core")
#: Feature and platform areas: narrower audience than the core, more than docs or CI.
FEATURE_AREAS = ("security", "structured-output", "lora", "quantization", "cpu-xpu", "rocm", "tpu",
                 "tool-calling", "sampling")
#: Headline and audience order: the most specific, most engine-central area first.
AREA_PRIORITY = (
    "security", "spec-decode", "moe", "attention", "kv-cache", "scheduler-core", "structured-output",
    "tool-calling", "lora", "quantization", "sampling", "distributed", "kernels", "multimodal", "rocm",
    "tpu", "cpu-xpu", "frontend-api", "models", "perf-benchmarks", "deps", "ci-build", "docs", "other",
)

# File kinds, decided from the path alone.
SOURCE, TEST, DOC, CI, BUILD, BENCH, EXAMPLE = "source", "test", "doc", "ci", "build", "bench", "example"

_BUILD_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "cmakelists.txt", "uv.lock", "poetry.lock",
                "package.json", "package-lock.json", "cargo.toml", "cargo.lock", "go.mod", "go.sum")
_KERNEL_SUFFIXES = (".cu", ".cuh", ".cpp", ".hpp", ".cc", ".h", ".c")

#: Path tokens that place a file in a subsystem when the classifier gave none. A token must start at a
#: path boundary, so "tpu" does not match "output" and "hip" does not match "ship".
_PATH_AREAS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (area, re.compile(r"(?<![a-z0-9])(?:" + alternatives + ")")) for area, alternatives in (
        ("kernels", r"csrc/|kernels/|triton"),
        ("moe", r"moe|experts?"),
        ("attention", r"attention|attn|mla|flashinfer|flashmla"),
        ("spec-decode", r"spec_decode|eagle|mtp|medusa|speculat|dspark"),
        ("distributed", r"distributed/|parallel|all2all|dcp"),
        ("kv-cache", r"kv_cache|kv_transfer|kv_connector|block_manager|prefix_cach"),
        ("scheduler-core", r"core/sched|scheduler"),
        ("rocm", r"rocm|aiter|amd/|hip"),
        ("tpu", r"tpu|pallas"),
        ("cpu-xpu", r"cpu|xpu"),
        ("structured-output", r"structured_output|guided"),
        ("tool-calling", r"tool_parsers?"),
        ("quantization", r"quantization"),
        ("lora", r"lora"),
        ("sampling", r"sampler|sample/|sampling"),
        ("multimodal", r"multimodal|vision|vl_|vl\.|mm_"),
        ("frontend-api", r"entrypoints/"),
        ("models", r"model_executor/models/|models/"),
    ))
#: Title words and tags ("[Spec Decode]", "Expert Parallelism") as a further fallback; a needle must start
#: a word.
_TAG_AREAS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(r"(?<![a-z0-9])" + needle), area) for needle, area in (
        ("spec", "spec-decode"), ("eagle", "spec-decode"), ("mtp", "spec-decode"), ("moe", "moe"),
        ("kernel", "kernels"), ("attention", "attention"), ("mla", "attention"), ("rocm", "rocm"),
        ("amd", "rocm"), ("tpu", "tpu"), ("cpu", "cpu-xpu"), ("xpu", "cpu-xpu"), ("intel", "cpu-xpu"),
        ("doc", "docs"), (r"ci\b", "ci-build"), ("build", "ci-build"), ("frontend", "frontend-api"),
        (r"models?\b", "models"), ("vlm", "multimodal"), ("multimodal", "multimodal"), ("lora", "lora"),
        ("quant", "quantization"), ("structured", "structured-output"), ("tool", "tool-calling"),
        ("security", "security"), ("sched", "scheduler-core"), ("p/d", "kv-cache"), ("kv", "kv-cache"),
        ("perf", "perf-benchmarks"), ("bench", "perf-benchmarks"), (r"deps\b", "deps"),
        ("dependenc", "deps"), ("distributed", "distributed"), ("parallel", "distributed"),
        ("dcp", "distributed"), ("all2all", "distributed"), ("speculative", "spec-decode"),
        ("expert", "moe"), ("connector", "kv-cache"), ("prefix cach", "kv-cache"),
    ))

_TAGS = re.compile(r"^\s*((?:\[[^\]\n]{0,60}\]\s*:?\s*)+)")
_TAG = re.compile(r"\[([^\]\n]{0,60})\]")
_REVERT = re.compile(r'^\s*revert(?:s|ed)?\b\s*:?\s*"?(.*?)"?\s*$', re.IGNORECASE)
_PR_REF = re.compile(r"#(\d{1,7})\b")
_TYPO = re.compile(r"\b(typos?|misspell\w*|spelling)\b", re.IGNORECASE)
_BUGFIX = re.compile(r"^\s*(?:\[\s*bug\s*-?fix\s*\]|\[\s*fix\s*\]|fix(?:es|ed)?\b|hotfix\b)", re.IGNORECASE)
_BUMP = re.compile(r"\b(bump|upgrade|update|pin|unpin)\b.{0,60}?\b(to|from|version|v?\d+(?:\.\d+)+|==|>=)",
                   re.IGNORECASE)
_FLAKY = re.compile(r"\bflak(y|iness)\b", re.IGNORECASE)
_LATER_REVERTED = re.compile(r"\b(was|got|been) reverted\b", re.IGNORECASE)
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

# Performance evidence. Every number pattern starts at the first digit of a number and has bounded runs,
# so a body of 200,000 digits stays linear. A factor next to a GPU or node name ("8x H200") is hardware.
_NUM = r"(?<![\d.,/])\d[\d.,/]{0,12}"
_FACTOR = re.compile(
    r"(?<![\w.])~?(\d{1,4}(?:\.\d{1,3})?)\s?[x×](?!\w)"
    r"(?!\s?(?:[A-Z]{1,2}\d{2,}|GPUs?\b|nodes?\b|RTX|MI\d|cards?\b|devices?\b))")
_PCT_CLAIM = re.compile(
    r"(?<![\d.])[+-]?\d{1,4}(?:\.\d{1,3})?\s?%\s?(?:[A-Za-z]{1,15}\s){0,2}?(?:higher|lower|faster|better|"
    r"more|less|improve\w*|speed-?ups?|reduc\w*|increase\w*|decrease\w*|gain\w*)", re.IGNORECASE)
_ARROW = re.compile(_NUM + r"\s?[A-Za-z/%µ]{0,8}\s?(?:->|→|=>)\s?~?\d[\d.,/]{0,12}(?:\s?[A-Za-z/%µ]{1,5}\b)?")
_FROM_TO = re.compile(r"\bfrom ~?\d[\d.,]{0,12}\s?[A-Za-z/%µ]{0,8}\s?to ~?\d[\d.,]{0,12}", re.IGNORECASE)
_VERSUS = re.compile(_NUM + r"\s?%?\s?(?:[A-Za-z][\w.]{0,12}\s)?(?:vs\.?|versus)\s(?:[A-Za-z][\w.]{0,12}\s)?"
                     r"~?\d[\d.,]{0,12}%?", re.IGNORECASE)
_PERF_UNIT = re.compile(
    _NUM + r"\s?(?:k\s?)?(?:ms|us|µs|tok/s|tokens/s|req/s|GB/s|TB/s|TFLOPS|it/s)\b|"
    r"\b(?:throughput|latency|TTFT|TPOT|ITL|speed-?up)\b", re.IGNORECASE)

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
                         r"integration comes|not (?:yet )?(?:wired|integrated|used))\b", re.IGNORECASE)
_BACKTICK = re.compile(r"`([^`\n]{2,80})`")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+){0,6})\b")
_ENV = re.compile(r"\b(VLLM_[A-Z0-9_]{2,60}|HF_[A-Z0-9_]{2,60}|CUDA_[A-Z0-9_]{2,60})\b")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{0,60}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){0,3})\(")
_SNAKE = re.compile(r"\b([a-z][a-z0-9]{0,30}(?:_[a-z0-9]{1,30}){1,8}(?:\.[a-z_][a-z0-9_]{0,40}){0,2})\b")
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]{1,20}(?:[A-Z][A-Za-z0-9]{1,20}){2,8})\b")
_DOTTED = re.compile(r"\b([A-Z][A-Za-z0-9]{2,40}\.[a-z_][a-z0-9_]{2,40})\b")
_FILE_LIKE = re.compile(r"\.(py|md|cu|cuh|cpp|hpp|h|txt|yaml|yml|json|toml|sh|cmake|in)$", re.IGNORECASE)
_DEFINED = re.compile(r"^\+[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w{2,60})|"
                      r"^\+[^\n]{0,80}?__global__[ \t]+void[ \t]+(\w{3,60})", re.MULTILINE)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]", re.MULTILINE)
#: Template scaffolding that is not the author's words: headings, <details> wrappers, rules, shouted
#: instructions ("PLEASE FILL IN THE PR DESCRIPTION HERE …", "**BEFORE SUBMITTING, PLEASE READ …**").
_SCAFFOLD = re.compile(r"^\s*(?:#{1,6}\s.*|</?details>|<summary>.*|-{3,}|\**\s*)$|^\W*[A-Z][A-Z ,.'!:]{15,}")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n\s*\n|\n(?=\s*(?:[-*]|\d+[.)])\s)")
_LOW_VALUE_COMMENT = re.compile(r"^\W*(lgtm|looks good|thanks?|thank you|approved?|ship it|nice|\+1)\b",
                                re.IGNORECASE)


@dataclass(frozen=True)
class FileFact:
    """One changed file as the drafter sees it."""

    path: str
    additions: int
    deletions: int
    status: str
    kind: str
    symbols: tuple[str, ...] = ()  # functions and classes the patch adds, when the source sent a patch

    @property
    def changes(self) -> int:
        return self.additions + self.deletions

    @property
    def is_new(self) -> bool:
        return self.status == "added"

    @property
    def is_kernel(self) -> bool:
        return self.kind == SOURCE and (self.path.startswith("csrc/") or self.path.endswith(_KERNEL_SUFFIXES))


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
    switches: tuple[str, ...]
    max_factor: str | None
    design: tuple[str, ...]
    remarks: tuple[Remark, ...]
    identifiers: tuple[str, ...]
    later_work: tuple[str, ...]
    skipped_tests: bool

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


def clean_line(text: str, limit: int) -> str:
    """Control characters out, whitespace collapsed, cut at a word boundary to at most ``limit`` chars."""
    text = _SPACES.sub(" ", strip_control(text)).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:，、") + "…"


def _facts(changes: list[FileChange]) -> tuple[FileFact, ...]:
    """The files, most changed first; the ten biggest also carry what their patch defines."""
    ranked = sorted(changes, key=lambda c: (-c.changes, c.path))
    facts = []
    for rank, change in enumerate(ranked):
        symbols: tuple[str, ...] = ()
        if change.patch and rank < 10:
            symbols = _unique([a or b for a, b in _DEFINED.findall(change.patch[:MAX_SCAN])])[:6]
        facts.append(FileFact(clean_line(change.path, 300), change.additions, change.deletions, change.status,
                              file_kind(change.path), symbols))
    return tuple(facts)


def file_kind(path: str) -> str:
    """Classify a path as source, test, doc, ci, build, bench or example."""
    low = path.lower()
    name = low.rsplit("/", 1)[-1]
    if low.endswith((".md", ".rst", ".mdx")) or low.startswith(("docs/", "doc/")) or "/docs/" in low:
        return DOC
    if low.startswith("tests/") or "/tests/" in low or name.startswith("test_") or name.endswith("_test.py"):
        return TEST
    if low.startswith((".buildkite/", ".github/", "docker/", ".circleci/", ".gitlab")) or name.startswith(
            ("dockerfile", ".pre-commit")):
        return CI
    if (low.startswith("requirements") or "/requirements" in low or name in _BUILD_NAMES
            or low.startswith("cmake/") or name.endswith((".cmake", ".lock"))):
        return BUILD
    if low.startswith("benchmarks/"):
        return BENCH
    if low.startswith("examples/"):
        return EXAMPLE
    return SOURCE


def _cut(text: str, open_: str, close: str, drop: Callable[[str], bool]) -> str:
    """``text`` without the ``open_``…``close`` spans that ``drop`` selects (an unclosed one runs to the end)."""
    out, pos = [], 0
    while (start := text.find(open_, pos)) >= 0:
        end = text.find(close, start + len(open_))
        stop = len(text) if end < 0 else end + len(close)
        out.append(text[pos:start] if drop(text[start:stop]) else text[pos:stop])
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def strip_template(body: str) -> str:
    """Drop HTML comments, the checklist, template headings and instructions, in linear time."""
    body = _cut(body, "<!--", "-->", lambda _: True)
    body = _cut(body, "<details>", "</details>", lambda span: "checklist" in span[:400].lower())
    return "\n".join(x for x in body.splitlines()
                     if not _CHECKBOX.match(x) and not _SCAFFOLD.match(x[:300]) and "#xxxx" not in x).strip()


def sentences(text: str) -> list[str]:
    """Split prose into rough sentences and list items."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def _unique(items: list[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return tuple(seen)


def _areas_from(files: tuple[FileFact, ...], words: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for fact in files[:50]:  # the most changed files decide; a 3,000-file PR is no slower
        low = fact.path.lower()
        if fact.kind == DOC:
            found.append("docs")
        elif fact.kind in (CI, BUILD):
            found.append("deps" if "requirements" in low or low.endswith((".lock", "pyproject.toml"))
                         else "ci-build")
        elif fact.kind == BENCH:
            found.append("perf-benchmarks")
        if fact.is_kernel:
            found.append("kernels")
        if fact.kind in (SOURCE, TEST):
            found.extend(area for area, pattern in _PATH_AREAS if pattern.search(low))
    for word in words:
        found.extend(area for pattern, area in _TAG_AREAS if pattern.search(word))
    return found


def _by_priority(areas: list[str]) -> tuple[str, ...]:
    known = {a for a in areas if a in SUBSYSTEMS}
    return tuple(a for a in AREA_PRIORITY if a in known)


def _identifiers(text: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Code names the author wrote: backticked first, then flags, env vars, calls, dotted, snake, Camel."""
    stems = {p.rsplit("/", 1)[-1] for p in paths}
    found: list[str] = []
    for pattern in (_BACKTICK, _FLAG, _ENV, _CALL, _DOTTED, _SNAKE, _CAMEL):
        for match in pattern.finditer(text):
            name = match.group(1).strip().strip("`").rstrip(".,:;")
            before = text[match.start() - 1: match.start()]
            after = text[match.end(): match.end() + 1]
            if pattern is not _BACKTICK and "/" in (before + after):
                continue  # a segment of a path, not a code name
            if ("/" in name or " " in name or name in stems or _FILE_LIKE.search(name)
                    or len(name) < 4 or name.startswith("http")):
                continue
            found.append(name.replace("`", ""))
            if len(found) >= 4 * MAX_IDENTIFIERS:
                break
    return _unique(found)[:MAX_IDENTIFIERS]


def _snippets(pattern: re.Pattern[str], texts: list[str], limit: int = 3) -> tuple[str, ...]:
    out: list[str] = []
    for text in texts:
        parts = sentences(text)
        for i, sentence in enumerate(parts):
            if pattern.search(sentence):
                if len(sentence) < 40 and i > 0:  # a fragment ("to follow separately)."): keep its context
                    sentence = f"{parts[i - 1]} {sentence}"
                out.append(clean_line(sentence, 160))
                if len(out) >= limit:
                    return _unique(out)
    return _unique(out)


def _perf(body: str) -> tuple[tuple[str, ...], bool, str | None]:
    """(comparative claims as written, whether bare figures appear, the biggest speed-up factor)."""
    claims = [clean_line(m.group(0), 40).rstrip(".,;:")
              for pattern in (_FACTOR, _PCT_CLAIM, _ARROW, _FROM_TO, _VERSUS) for m in pattern.finditer(body)]
    factors = [f for f in (float(m.group(1)) for m in _FACTOR.finditer(body)) if 1.05 <= f <= 1000]
    return _unique(claims)[:6], bool(_PERF_UNIT.search(body)), f"{max(factors):g}x" if factors else None


def extract(pr: PullRequest, subsystems: list[str]) -> Signals:
    """Read the signals of one PR; ``subsystems`` may be empty or ``["other"]``."""
    title = clean_line(pr.title[: MAX_TITLE * 4], MAX_TITLE)
    body = strip_template(strip_control(pr.body[: MAX_SCAN * 2]))[:MAX_SCAN]
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

    facts = _facts(pr.files)
    additions = pr.additions or sum(f.additions for f in pr.files)
    deletions = pr.deletions or sum(f.deletions for f in pr.files)

    given = [s for s in subsystems if s in SUBSYSTEMS and s != "other"]
    labels = tuple(clean_line(label, 60).lower() for label in pr.labels[:20])
    inferred = _areas_from(facts, (*tags, *labels, core_title.lower()))
    areas = _by_priority(given) or _by_priority(inferred) or (("other",) if "other" in subsystems else ())
    comments = [(clean_line(c.author, 40), strip_control(c.body[:MAX_COMMENT]))
                for c in pr.review_comments[:MAX_COMMENTS]]
    remarks = tuple(Remark(author, clean_line(text, 400)) for author, text in comments
                    if len(text.strip()) >= 40 and not _LOW_VALUE_COMMENT.match(text[:200])
                    and "emoji" not in text[:80].lower())
    comment_texts = [text for _, text in comments]
    prose = f"{title}\n{body}"
    perf_claims, perf_units, max_factor = _perf(body)

    return Signals(
        number=pr.number, author=pr.author, title=title, core_title=clean_line(core_title, 200), tags=tags,
        body=body, additions=additions, deletions=deletions, files=facts, files_truncated=pr.files_truncated,
        areas=areas, title_areas=_by_priority(_areas_from((), (*tags, core_title.lower()))),
        is_revert=is_revert,
        revert_has_reason=bool(_REASON.search(body)) if is_revert else False,
        reverted_refs=_unique(_PR_REF.findall(f"{title}\n{body[:600]}"))[:3] if is_revert else (),
        is_typo=bool(_TYPO.search(title)),
        is_bugfix=bool(_BUGFIX.search(core_title)) or any("fix" in t for t in tags),
        is_bump=bool(_BUMP.search(core_title)) and bool(facts) and all(
            f.kind in (BUILD, CI, TEST, DOC) for f in facts),
        is_flaky=bool(_FLAKY.search(title)),
        later_reverted=bool(_LATER_REVERTED.search(body)) and not is_revert,
        breaking=_unique([m.group(0) for m in _BREAKING.finditer(prose)])[:4],
        advisories=_unique([m.group(1) for m in _ADVISORY.finditer(prose)])[:3],
        perf_claims=perf_claims, perf_units=perf_units, max_factor=max_factor,
        evals=_unique([m.group(1) for m in _EVALS.finditer(body)])[:3],
        groundwork=bool(_GROUNDWORK.search(body)),
        switches=_unique([m.group(1) for p in (_FLAG, _ENV) for m in p.finditer(prose)])[:4],
        design=tuple(name for name, pattern in _DESIGN_TERMS if pattern.search(prose)),
        remarks=remarks,
        identifiers=_identifiers(f"{core_title}\n{body}", tuple(f.path for f in facts[:200])),
        later_work=_snippets(_LATER_WORK, [body, *comment_texts]),
        skipped_tests=bool(_SKIPPED.search(title)) or bool(
            re.search(r"\b(tests?|architectures?|cases?)\b[^.\n]{0,40}\b(skipped|disabled)\b", body,
                      re.IGNORECASE)),
    )
