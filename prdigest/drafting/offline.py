"""The offline drafter: a deterministic draft from the PR's own data, with no network and no model.

The verdict is a transparent sum of named weights over :mod:`prdigest.drafting.signals`, then a few
rules for kinds of PR whose verdict the score does not decide (typo fixes, reverts, docs-, tests- or
CI-only changes, dependency bumps, security advisories). Every sentence of the draft is built from what
the PR's data shows (its files, the code names its body uses, its reviewers' remarks), so the grounding
check never finds a citation the PR does not support.

This module is longer than our usual 300 lines because it holds four small parts that change together:
the weights, the headline phrasebook, the text templates and the drafter. Split it (verdict.py,
headline.py) when one of them grows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.drafting.signals import (BENCH, BUILD, CI, CORE_AREAS, DOC, EXAMPLE, FEATURE_AREAS, SOURCE,
                                       TEST, FileFact, Remark, Signals, clean_line, extract)
from prdigest.models import DraftEntry, Language, PullRequest, Verdict

# ── Verdict weights: a PR's score is the sum of the weights whose signal it shows. ──────────────────
W_SIZE_LARGE = 1.0       # ≥ 500 changed lines: a change that size usually carries design decisions
W_SIZE_MEDIUM = 0.5      # ≥ 250 changed lines
W_SIZE_TINY = -1.0       # < 40 changed lines: rarely more than a local tweak
W_CORE = 1.0             # an engine-core subsystem (attention, MoE, kernels, …): many readers build on it
W_CORE_CROSS = 0.5       # a second core subsystem: cross-cutting changes are where contracts move
W_FEATURE = 0.5          # a security, platform or feature area: a narrower but real audience
W_PERF_CLAIM = 1.0       # a before/after figure or an N× / N% claim: a measured trade-off to study
W_EVALS = 0.5            # accuracy evidence (GSM8K, lm-eval, acceptance length): behaviour was checked
W_PERF_NUMBERS = 0.25    # throughput or latency figures without a comparison: weak evidence
W_ROOT_CAUSE = 0.5       # a bug fix that names its failure mode (overflow, crash, wrong output)
W_GROUNDWORK = -1.0      # "only adds", "first step": what readers will feel lands in a later PR
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
# A missed deep read costs a reader more than an extra one, so the bar sits a notch (0.25) below the
# sample week's best agreement: there, no single weight moved by ±0.25 drops deep-read recall below 0.85.
DEEP_READ_AT = 2.75      # a score at or above this is a deep read
SKIM_AT = 1.0            # a score at or above this is worth skimming
MIN_SHIPPED_LINES = 40   # a change this big to shipped source (or a fix of a crash there) is never skipped

# ── Output bounds: whatever the PR holds, the draft stays this short. ────────────────────────────────
MAX_HEADLINE, MAX_RATIONALE, MAX_POINT, MAX_FOLLOWUP, MAX_AUDIENCE = 80, 320, 260, 220, 80

_AREA_LABEL = {  # subsystem → (zh, en): headline prefix and reasons
    "kernels": ("内核", "Kernels"), "moe": ("MoE", "MoE"), "attention": ("注意力", "Attention"),
    "spec-decode": ("投机解码", "Speculative decoding"), "distributed": ("分布式", "Distributed"),
    "kv-cache": ("KV 缓存", "KV cache"), "scheduler-core": ("调度器", "Scheduler"), "rocm": ("ROCm", "ROCm"),
    "tpu": ("TPU", "TPU"), "cpu-xpu": ("CPU/XPU", "CPU/XPU"), "models": ("模型", "Models"),
    "multimodal": ("多模态", "Multimodal"), "frontend-api": ("前端 API", "Frontend API"),
    "tool-calling": ("工具调用", "Tool calling"), "structured-output": ("结构化输出", "Structured output"),
    "quantization": ("量化", "Quantization"), "ci-build": ("CI/构建", "CI and build"),
    "deps": ("依赖", "Dependencies"), "docs": ("文档", "Docs"), "security": ("安全", "Security"),
    "perf-benchmarks": ("性能基准", "Benchmarks"), "lora": ("LoRA", "LoRA"), "sampling": ("采样", "Sampling"),
    "other": ("其他", "Other"),
}
_AUDIENCE = {  # subsystem → (zh, en) readers
    "kernels": ("内核开发者", "kernel developers"), "moe": ("MoE 开发者", "MoE developers"),
    "attention": ("注意力后端开发者", "attention-backend developers"),
    "spec-decode": ("投机解码开发者", "speculative-decoding developers"),
    "distributed": ("分布式并行开发者", "parallelism developers"),
    "kv-cache": ("KV 缓存与 P/D 分离开发者", "KV-cache and P/D developers"),
    "scheduler-core": ("调度器开发者", "scheduler developers"), "rocm": ("ROCm 用户与开发者", "ROCm users"),
    "tpu": ("TPU 用户", "TPU users"), "cpu-xpu": ("CPU/XPU 平台开发者", "CPU/XPU platform developers"),
    "models": ("模型适配开发者", "model integrators"), "multimodal": ("多模态开发者", "multimodal developers"),
    "frontend-api": ("API 服务运维", "API server operators"),
    "tool-calling": ("工具解析器维护者", "tool-parser maintainers"),
    "structured-output": ("结构化输出开发者", "structured-output developers"),
    "quantization": ("量化开发者", "quantization developers"), "ci-build": ("CI 维护者", "CI maintainers"),
    "deps": ("打包与部署负责人", "packagers and deployers"), "docs": ("文档读者", "docs readers"),
    "security": ("部署与安全运维", "operators and security reviewers"),
    "perf-benchmarks": ("性能基准维护者", "benchmark maintainers"), "lora": ("LoRA 开发者", "LoRA developers"),
    "sampling": ("采样器开发者", "sampler developers"), "other": ("相关模块维护者", "maintainers of the code"),
}
_DESIGN_TOPIC = {"interface": ("接口与契约", "interfaces and contracts"), "restructure": ("结构调整", "restructuring"),
                 "failure": ("失败模式", "failure modes"), "trade-off": ("取舍", "trade-offs")}


@dataclass(frozen=True)
class Reason:
    """One signal's part in the verdict, and how to say it in each language."""

    key: str
    weight: float
    zh: str
    en: str

    def text(self, zh: bool) -> str:
        return self.zh if zh else self.en


@dataclass(frozen=True)
class Assessment:
    """The verdict, the score behind it and, when a rule decided, that rule's reason."""

    verdict: Verdict
    score: float
    reasons: tuple[Reason, ...]
    rule: Reason | None = None


def _names(items: tuple[str, ...] | list[str], limit: int, zh: bool) -> str:
    """Backticked code names, verbatim: a shortened name would cite something the PR never wrote."""
    fit = [i for i in items if "`" not in i and len(i) <= 120]
    return ("、" if zh else ", ").join(f"`{i}`" for i in fit[:limit])


def _area_names(areas: tuple[str, ...], zh: bool) -> str:
    return ("、" if zh else ", ").join(_AREA_LABEL[a][0 if zh else 1] for a in areas[:2])


def _scored(s: Signals) -> list[Reason]:
    """The weights a PR earns, each with a short phrase grounded in the signal."""
    out: list[Reason] = []

    def add(key: str, weight: float, zh: str, en: str) -> None:
        out.append(Reason(key, weight, zh, en))

    # The +/- figures follow the reasons in the rationale, so the size phrases carry no numbers.
    if s.size >= 500:
        add("size", W_SIZE_LARGE, "改动量大", "a large change")
    elif s.size >= 250:
        add("size", W_SIZE_MEDIUM, "改动量中等", "a mid-sized change")
    elif s.size < 40:
        add("size", W_SIZE_TINY, "改动很小", "a tiny change")
    core = tuple(a for a in s.areas if a in CORE_AREAS)
    if core:
        add("core", W_CORE + (W_CORE_CROSS if len(core) > 1 else 0.0),
            f"触及核心子系统（{_area_names(core, True)}）", f"touches core areas ({_area_names(core, False)})")
    feature = tuple(a for a in s.areas if a in FEATURE_AREAS)
    if feature:
        add("feature", W_FEATURE, f"涉及{_area_names(feature, True)}", f"concerns {_area_names(feature, False)}")
    if s.perf_claims:
        add("perf", W_PERF_CLAIM, f"正文给出性能对比（{'、'.join(s.perf_claims[:2])}）",
            f"the body reports {', '.join(s.perf_claims[:2])}")
    elif s.evals:
        add("evals", W_EVALS, f"附精度验证（{s.evals[0]}）", f"accuracy is checked ({s.evals[0]})")
    elif s.perf_units:
        add("perf", W_PERF_NUMBERS, "正文附有性能数据（无前后对比）", "the body has figures (no before/after)")
    if s.is_bugfix and "failure" in s.design:
        add("root-cause", W_ROOT_CAUSE, "修复说明了失败原因", "the fix explains its failure mode")
    if s.groundwork:
        add("groundwork", W_GROUNDWORK, "属于铺垫性改动，真正接入在后续 PR", "groundwork: the wiring lands later")
    if s.switches:
        add("switch", W_SWITCH, f"涉及开关 {_names(s.switches, 2, True)}", f"names {_names(s.switches, 2, False)}")
    sources = s.of_kind(SOURCE)
    if sources and all("models/" in f.path for f in sources):
        add("model-only", W_MODEL_ONLY, "只改模型文件", "only model files change")
    if s.new_sources:
        add("new", W_NEW_SOURCE, f"新增源码文件 `{s.new_sources[0].path}`", f"adds `{s.new_sources[0].path}`")
    if s.design:
        add("design", min(W_DESIGN_CAP, W_DESIGN * len(s.design)),
            f"正文讨论了{'、'.join(_DESIGN_TOPIC[d][0] for d in s.design)}",
            f"the body discusses {', '.join(_DESIGN_TOPIC[d][1] for d in s.design)}")
    if s.remarks:
        add("review", min(W_REVIEW_CAP, W_REVIEW * len(s.remarks)), f"评审有 {len(s.remarks)} 条实质讨论",
            f"{len(s.remarks)} substantive review remark{'s' if len(s.remarks) > 1 else ''}")
    if s.of_kind(TEST) and sources:
        add("tests", W_TESTS, "附带测试", "ships tests")
    if len(s.body) >= 400:
        add("explained", W_EXPLAINED, "描述详尽", "a detailed description")
    elif len(s.body) < 150:
        add("unexplained", W_UNEXPLAINED, "描述很少", "little description")
    if len(s.identifiers) >= 4:
        add("names", W_CODE_NAMES, "正文点名了具体代码", "the body names the code it changes")
    if s.breaking:
        add("breaking", W_BREAKING, f"含不兼容或默认值变化（{s.breaking[0]}）",
            f"a breaking or default change ({s.breaking[0]})")
    if s.deletions >= 50 and s.additions < 0.1 * s.deletions:
        add("deletion", W_DELETION, "以删除代码为主", "mostly deletions")
    return out


def _rule(s: Signals, scored: Verdict) -> tuple[Verdict, Reason | None]:
    """Kinds of PR whose verdict the score does not decide; ``None`` as reason when the score stands."""
    if s.advisories:
        return Verdict.DEEP_READ, Reason("advisory", 0, f"修复了安全公告 {s.advisories[0]}，运维需要知道新行为",
                                         f"fixes advisory {s.advisories[0]}; operators need the new behaviour")
    if s.is_typo:
        return Verdict.SKIP, Reason("typo", 0, "拼写修正，无行为变化", "a typo fix with no behaviour change")
    if s.is_revert:
        if s.revert_has_reason:
            return Verdict.SKIM, Reason("revert", 0, "回滚，但正文解释了原因，值得了解",
                                        "a revert, but the body explains why")
        return Verdict.SKIP, Reason("revert", 0, "未说明原因的回滚", "a bare revert with no reason given")
    if s.tests_only:
        return Verdict.SKIP, Reason("tests", 0, "只改测试，无行为变化", "tests only, no behaviour change")
    if s.docs_only:
        return Verdict.SKIM, Reason("docs", 0, "只改文档，但内容对使用者有用", "docs only, but useful to users")
    if s.is_bump:
        if s.breaking:
            return Verdict.DEEP_READ, Reason("bump", 0, f"依赖大版本升级且有不兼容影响（{s.breaking[0]}）",
                                             f"a dependency jump with breakage ({s.breaking[0]})")
        return Verdict.SKIM, Reason("bump", 0, "常规依赖升级", "a routine dependency bump")
    if s.ci_only:
        return Verdict.SKIP, Reason("ci", 0, "只改 CI/构建配置", "CI or build configuration only")
    fixes_a_failure = s.is_bugfix and "failure" in s.design
    if scored is Verdict.SKIP and s.of_kind(SOURCE) and (s.size >= MIN_SHIPPED_LINES or fixes_a_failure):
        return Verdict.SKIM, None  # skip is for changes that ship nothing a user would notice
    return scored, None


def assess(s: Signals) -> Assessment:
    """Score the signals, apply the kind rules; a change its body says was reverted drops one step."""
    reasons = tuple(sorted(_scored(s), key=lambda r: (-r.weight, r.key)))
    score = round(sum(r.weight for r in reasons), 2)
    scored = Verdict.DEEP_READ if score >= DEEP_READ_AT else Verdict.SKIM if score >= SKIM_AT else Verdict.SKIP
    verdict, rule = _rule(s, scored)
    if s.later_reverted:
        verdict = Verdict.SKIM if verdict is Verdict.DEEP_READ else Verdict.SKIP
        rule = Reason("reverted", 0, "此改动随后已被回滚", "the change was later reverted")
    return Assessment(verdict, score, reasons, rule)


# ── Headline: the title's verb and object, restated, with the area in front. ──────────────────────────
_VERBS = {  # base form → (zh, en past)
    "add": ("新增", "added"), "support": ("支持", "supported"), "enable": ("启用", "enabled"),
    "fix": ("修复", "fixed"), "correct": ("修正", "corrected"), "optimize": ("优化", "optimized"),
    "optimise": ("优化", "optimised"), "speed up": ("加速", "sped up"), "accelerate": ("加速", "accelerated"),
    "improve": ("改进", "improved"), "fuse": ("融合", "fused"), "refactor": ("重构", "refactored"),
    "remove": ("移除", "removed"), "delete": ("删除", "deleted"), "deprecate": ("弃用", "deprecated"),
    "update": ("升级", "updated"), "upgrade": ("升级", "upgraded"), "bump": ("升级", "bumped"),
    "implement": ("实现", "implemented"), "introduce": ("引入", "introduced"), "limit": ("限制", "limited"),
    "expand": ("扩充", "expanded"), "extend": ("扩展", "extended"), "link": ("链接", "linked"),
    "wire": ("接入", "wired"), "integrate": ("集成", "integrated"), "share": ("共享", "shared"),
    "ensure": ("确保", "ensured"), "import": ("导入", "imported"), "read": ("读取", "read"),
    "use": ("改用", "switched to"), "constrain": ("约束", "constrained"), "trim": ("裁剪", "trimmed"),
    "skip": ("跳过", "skipped"), "revert": ("回滚", "reverted"), "move": ("迁移", "moved"),
    "migrate": ("迁移", "migrated"), "rename": ("重命名", "renamed"), "allow": ("允许", "allowed"),
    "avoid": ("避免", "avoided"), "clean up": ("清理", "cleaned up"), "simplify": ("简化", "simplified"),
    "handle": ("处理", "handled"), "validate": ("校验", "validated"), "reduce": ("降低", "reduced"),
    "increase": ("提高", "increased"), "pin": ("固定", "pinned"), "unify": ("统一", "unified"),
    "register": ("注册", "registered"), "port": ("移植", "ported"), "replace": ("替换", "replaced"),
    "disable": ("禁用", "disabled"), "restore": ("恢复", "restored"), "drop": ("移除", "dropped"),
    "make": ("使", "made"), "set": ("设置", "set"), "document": ("补充文档", "documented"),
    "cache": ("缓存", "cached"), "expose": ("暴露", "exposed"), "split": ("拆分", "split"),
    "widen": ("放宽", "widened"), "sync": ("同步", "synced"), "adjust": ("调整", "adjusted"),
}


def _inflections(base: str) -> tuple[str, ...]:
    stem = base[:-1] if base.endswith("e") else base
    ies = (base[:-1] + "ies", base[:-1] + "ied") if base.endswith("y") else ()
    return (base, base + "s", base + "es", base + "d", base + "ed", stem + "ing", base + base[-1] + "ed",
            base + base[-1] + "ing", *ies)


#: Every inflected form ("adds", "adding", "pinned", "unified") → its base verb.
_VERB_FORMS = {form: base for base in _VERBS if " " not in base for form in reversed(_inflections(base))}
#: Trailing nouns that are really the verb: "DCP support" → support DCP.
_NOUN_VERBS = {"support": "support", "refactor": "refactor", "refactoring": "refactor", "fix": "fix",
               "bug": "fix", "cleanup": "clean up", "optimization": "optimize", "compatibility": "support"}
_GLOSSARY = (  # English term → zh, longest first; zh headlines only
    ("speculative decoding", "投机解码"), ("spec decode", "投机解码"), ("pipeline parallelism", "流水线并行"),
    ("expert parallelism", "专家并行"), ("tensor parallelism", "张量并行"), ("data parallelism", "数据并行"),
    ("context parallelism", "上下文并行"), ("structured outputs", "结构化输出"),
    ("structured output", "结构化输出"), ("tool parser", "工具解析器"), ("tool calling", "工具调用"),
    ("kv cache", "KV 缓存"), ("kv-cache", "KV 缓存"), ("documentation", "文档"), ("docs", "文档"),
    ("typos", "拼写错误"), ("typo", "拼写错误"), ("flaky", "不稳定的"), ("tests", "测试"), ("test", "测试"),
    ("benchmarks", "基准"), ("benchmark", "基准"), ("kernels", "内核"), ("kernel", "内核"),
    ("backends", "后端"), ("backend", "后端"), ("attention", "注意力"), ("scheduler", "调度器"),
    ("dependencies", "依赖"), ("dependency", "依赖"), ("quantization", "量化"), ("security", "安全"),
    ("authentication", "认证"), ("multimodal", "多模态"), ("models", "模型"), ("model", "模型"),
    ("guide", "指南"), ("config", "配置"), ("settings", "设置"), ("compatibility", "兼容性"),
    ("support", "支持"), ("error", "错误"), ("parser", "解析器"), ("buffer", "缓冲区"),
)
_GLOSSARY_RE = tuple((re.compile(rf"(?<![\w/.-]){re.escape(en)}(?![\w/.-])", re.IGNORECASE), zh)
                     for en, zh in _GLOSSARY)
_ZH_FRAME = {  # where a zh headline puts verb {v}, object {a} and the prepositional part {b}
    "under": "{v}{b}下的{a}", "for": "为{b}{v}{a}", "from": "从{b}{v}{a}", "in": "{v}{b}中的{a}",
    "on": "在{b}上{v}{a}", "at": "在{b}处{v}{a}", "to": "{v}{a}至{b}", "with": "{v}{a}，结合{b}",
    "via": "通过{b}{v}{a}", "into": "{v}{a}至{b}", "between": "在{b}之间{v}{a}", "across": "跨{b}{v}{a}",
}
_CJK = "\u4e00-\u9fff"
_CJK_ASCII = re.compile(rf"(?<=[{_CJK}])(?=[A-Za-z0-9`(\[\-_~$@#*+])|(?<=[A-Za-z0-9`)\]\-_%+])(?=[{_CJK}])")
_CJK_GAP = re.compile(rf"(?<=[{_CJK}]) +(?=[{_CJK}])")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_LONG_ASIDE = re.compile(r"\s*\([^()]{24,}\)\s*$")  # "(/inference does NOT bypass …)" goes; "(SM100)" stays
_ANY_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")
_VAGUE_TAIL = re.compile(r"\s+in (?:some|certain|rare|all) cases$", re.IGNORECASE)


def _verb(words: list[str]) -> tuple[str, int] | None:
    """The base verb that opens ``words`` and how many words it spans."""
    if len(words) >= 2 and f"{words[0]} {words[1]}".lower() in _VERBS:
        return f"{words[0]} {words[1]}".lower(), 2
    base = _VERB_FORMS.get(words[0].lower().rstrip(":,.")) if words else None
    return (base, 1) if base else None


def _zh_terms(text: str) -> str:
    """Known terms in Chinese; "X and <verb> Y" becomes "X，并<动词> Y", other "and"s "与"."""
    for pattern, chinese in _GLOSSARY_RE:
        text = pattern.sub(chinese, text)

    def conj(match: re.Match[str]) -> str:
        found = _verb([match.group(1)])
        return f"，并{_VERBS[found[0]][0]} " if found else f" 与 {match.group(1)} "
    return re.sub(r"\s+and\s+(\S+)\s*", conj, text).replace(": ", "，")


def _en_and(text: str) -> str:
    """"X and trim Y" → "X and trimmed Y": a second verb takes the tense of the first."""
    def past(match: re.Match[str]) -> str:
        found = _verb([match.group(1)])
        return f"and {_VERBS[found[0]][1]}" if found else match.group(0)
    return re.sub(r"\band (\w+)", past, text)


def _zh_spacing(text: str) -> str:
    """A space between Chinese and Latin text, none between two Chinese words."""
    return _CJK_GAP.sub("", re.sub(r" {2,}", " ", _CJK_ASCII.sub(" ", text))).strip()


def _parse_title(s: Signals, short: bool) -> tuple[str | None, str, str, str]:
    """(verb, object, preposition, prepositional part) of the title without tags and backticks."""
    text = _ARTICLE.sub("", s.core_title.replace("`", "")).strip(" .:")
    text = _VAGUE_TAIL.sub("", _LONG_ASIDE.sub("", text) or text)
    if short:
        text = _ANY_ASIDE.sub("", text) or text
    words = text.split()
    found = _verb(words)
    verb, rest = (found[0], " ".join(words[found[1]:])) if found else (None, text)
    prep, head, tail = "", rest, ""
    spots = [(m.start(), p) for p in _ZH_FRAME for m in [re.search(rf"(?:^|\s){p}\s", rest)] if m]
    if spots:
        start, prep = min(spots)
        head, tail = rest[:start].strip(), rest[start:].strip()[len(prep):].strip()
    if verb is None:
        last = head.rsplit(" ", 1)
        if len(last) == 2 and last[1].lower() in _NOUN_VERBS:
            verb, head = _NOUN_VERBS[last[1].lower()], last[0]
        elif s.is_bugfix:
            verb = "fix"
        elif s.new_sources:
            verb = "add"
    return verb, _ARTICLE.sub("", head), prep, _ARTICLE.sub("", tail)


def _statement(s: Signals, zh: bool, short: int) -> tuple[str, bool]:
    """The change as a phrase, and whether it opens with a verb (so an area prefix may lower-case it)."""
    if s.is_revert:
        return (f"回滚「{s.core_title}」" if zh else f"reverted “{s.core_title}”"), True
    verb, head, prep, tail = _parse_title(s, short > 0)
    if short > 1 and prep and head:
        prep, tail = "", ""  # still too long: the place phrase goes first
    if zh:
        second = re.search(r"\s+and\s+(\S+)", tail)
        if second and _verb([second.group(1)]):
            tail = tail[: second.start()]  # a second clause after the place phrase: too much for a headline
        v, a, b = (_VERBS[verb][0] if verb else ""), _zh_terms(head), _zh_terms(tail)
        if not prep:
            return f"{v}{a}", bool(verb)
        if not verb:
            return (f"面向{b}的{a}" if prep == "for" else _zh_terms(f"{head} {prep} {tail}")), False
        return _ZH_FRAME[prep].format(v=v, a=a, b=b), True
    rest = " ".join(x for x in (head.replace(": ", ", "), prep, tail) if x)
    if verb:
        return _en_and(f"{_VERBS[verb][1]} {rest}".strip()), True
    return rest[:1].upper() + rest[1:], False


def headline(s: Signals, lang: Language) -> str:
    """A short statement of the change in ``lang``, never the title itself."""
    zh = lang == "zh-CN"
    area = next((a for a in s.title_areas if a in s.areas), s.areas[0] if s.areas else None)
    label = _AREA_LABEL[area][0 if zh else 1] if area and area != "other" else ""
    fallback = label or ("变更" if zh else "Change")
    if not s.core_title:
        if s.files:
            top = s.files[0].path
            return clean_line(f"{fallback}：改动 {top}" if zh else f"{fallback}: changes to {top}", MAX_HEADLINE)
        return f"PR #{s.number}（无标题）" if zh else f"PR #{s.number} (untitled)"
    text = ""
    for short in (0, 1, 2):
        text, verbed = _statement(s, zh, short)
        if label and label.lower() not in text.lower():
            text = f"{label}：{text}" if zh else f"{label}: {text[:1].lower() + text[1:] if verbed else text}"
        elif not zh:
            text = text[:1].upper() + text[1:]
        if len(text) <= MAX_HEADLINE:
            break
    if s.max_factor and not s.is_revert:
        suffix = f"，最高 {s.max_factor[:-1]} 倍" if zh else f" (up to {s.max_factor})"
        if len(text) + len(suffix) <= MAX_HEADLINE:
            text += suffix
    text = _zh_spacing(text) if zh else text
    if text.strip().lower() == s.title.strip().lower():
        text = f"{fallback}：{text}" if zh else f"{fallback}: {text}"
    return clean_line(text, MAX_HEADLINE)


# ── Audience, rationale, focus points, follow-ups. ──────────────────────────────────────────────────
_CONFIG_FILE = re.compile(r"(^|/)(config|envs|cli_args|arg_utils|settings)[\w.]*\.py$")
_ROLE = {  # a file's role → (zh, en): what to look at in it
    "new": ("新文件，看它的对外接口以及在哪里注册、被谁调用",
            "new file: read its public surface and where it is registered and called"),
    "removed": ("整文件删除，确认下游没有仍依赖它的代码", "deleted: make sure nothing downstream still relies on it"),
    "kernel": ("内核代码，关注派发条件、边界处理与索引/数值类型",
               "kernel code: check dispatch conditions, bounds and index/numeric types"),
    "config": ("配置入口，关注新增选项、默认值与兼容性", "configuration surface: new options, defaults and compatibility"),
    "second": ("第二处主要改动，看它与主改动如何衔接", "the second main change: see how it meets the first"),
    SOURCE: ("改动最集中的源码，建议从这里读起", "most of the change is here; start reading here"),
    TEST: ("看测试用例固定了哪些行为，可作回归参考", "tests: see which behaviour the cases pin down"),
    BENCH: ("引用数据前先看基准脚本的参数与测量方法",
            "benchmark script: check parameters and method before quoting figures"),
    BUILD: ("核对版本约束与锁文件是否一致", "dependency/build file: check version bounds and lockfiles agree"),
    CI: ("看改变了哪些 CI 任务与触发条件", "CI configuration: which jobs and triggers changed"),
    DOC: ("对照代码行为核对文档表述", "docs: check the text against the code's behaviour"),
    EXAMPLE: ("示例脚本，看推荐的用法与参数", "example: the intended usage and flags"),
}
_LATER = re.compile(r"\b(later|follow|future|docs?|documentation|instead|hierarch\w*|separate\w*|"
                    r"other (?:ISA|backends?|platforms?))", re.IGNORECASE)
_SUGGESTS = re.compile(r"\b(suggest\w*|asked|should|could|consider\w*|prefer\w*|concern\w*|pointed out|"
                       r"requested|would like)\b", re.IGNORECASE)


def _suggestion(s: Signals) -> Remark | None:
    """The first review remark that proposes later work (docs, another design, a follow-up)."""
    return next((r for r in s.remarks if _SUGGESTS.search(r.text) and _LATER.search(r.text)), None)


def audience(s: Signals, lang: Language) -> str:
    """Who should read the entry, from its areas, most specific first."""
    zh = lang == "zh-CN"
    areas = tuple(a for a in s.areas if a != "other")[:2] or ("other",)
    return clean_line(("、" if zh else ", ").join(_AUDIENCE[a][0 if zh else 1] for a in areas), MAX_AUDIENCE)


def _facts(s: Signals, zh: bool) -> str:
    size = f"+{s.additions}/−{s.deletions}"
    if not s.files:
        return size
    top = next((f for f in s.files if f.kind == SOURCE), s.files[0])
    folder = (top.path.rsplit("/", 1)[0] if "/" in top.path else top.path).replace("`", "'")
    count = f"{len(s.files)}{'+' if s.files_truncated else ''}"
    if zh:
        return f"{size}，{count} 个文件，集中在 `{folder}`"
    return f"{size} across {count} file{'' if count == '1' else 's'}, mostly in `{folder}`"


def rationale(s: Signals, a: Assessment, lang: Language) -> str:
    """The verdict, why (from the signals) and for whom, in one or two sentences."""
    zh = lang == "zh-CN"
    if a.rule is not None:
        why = [a.rule.text(zh)]
    elif a.verdict is Verdict.SKIP:
        why = [r.text(zh) for r in a.reasons if r.weight < 0][:2] or ["没有新内容" if zh else "nothing new"]
    else:
        why = [r.text(zh) for r in a.reasons if r.weight > 0 and r.key != "size"][:3]
        if a.verdict is Verdict.SKIM:
            minus = next((r.text(zh) for r in a.reasons if r.weight < 0),
                         "设计层面的新内容有限" if zh else "there is little design to study")
            why.append(minus if not why else f"但{minus}" if zh else f"but {minus}")
    label, who = a.verdict.label(lang), audience(s, lang)
    if zh:
        return clean_line(_zh_spacing(f"{label}：{'，'.join(why)}（{_facts(s, zh)}）。适合{who}。"), MAX_RATIONALE)
    return clean_line(f"{label}: {'; '.join(why)} ({_facts(s, zh)}). For {who}.", MAX_RATIONALE)


def _role(f: FileFact, first: bool = True) -> str:
    if f.status in ("removed", "deleted"):
        return "removed"
    if f.kind != SOURCE:
        return f.kind
    if f.is_new:
        return "new"
    return "kernel" if f.is_kernel else "config" if _CONFIG_FILE.search(f.path) else SOURCE if first else "second"


def _file_names(s: Signals, f: FileFact) -> tuple[str, ...]:
    """Code names tied to a file: what its patch defines, else what the body names next to the file."""
    if f.symbols:
        return f.symbols
    name = f.path.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    near: list[str] = []
    for line in [x for x in s.body.split("\n") if name in x or (len(stem) > 4 and stem in x)][:5]:
        near.extend(i for i in s.identifiers if i in line and i != stem)
    near.extend(i for i in s.identifiers if len(stem) > 4 and (stem in i or i in stem) and i != stem)
    return tuple(dict.fromkeys(near))


def _file_point(s: Signals, f: FileFact, zh: bool, first: bool = True) -> str:
    role, path, names = _ROLE[_role(f, first)][0 if zh else 1], f.path.replace("`", "'"), _file_names(s, f)
    if zh:
        tail = f"，留意 {_names(names, 2, zh)}" if names else ""
        return f"`{path}`（+{f.additions}/−{f.deletions}）：{role}{tail}。"
    tail = f"; note {_names(names, 2, zh)}" if names else ""
    return f"`{path}` (+{f.additions}/−{f.deletions}): {role}{tail}."


def focus(s: Signals, a: Assessment, lang: Language) -> list[str]:
    """Up to three points to look at, most important first, each citing a file or a name from the PR."""
    zh = lang == "zh-CN"
    ordered = [f for f in s.files if f.kind == SOURCE] + [f for f in s.files if f.kind != SOURCE]
    points = [_file_point(s, f, zh) for f in ordered[:1]]
    cited = set(_file_names(s, ordered[0])[:2]) if ordered else set()
    names = [i for i in s.identifiers if i not in cited and not i.startswith("-") and not i.isupper()]
    names = [i for i in names if not any(o != i and o.endswith("." + i) for o in names)]
    if len(names) >= 2 or (names and not points):
        listed = _names(names, 3, zh)
        points.append(f"正文点出的关键名字 {listed}：对照 diff 看它们如何变化。" if zh
                      else f"Names the body singles out, {listed}: follow them through the diff.")
    later = _suggestion(s)  # quoted among the follow-ups instead
    remarks = [r for r in s.remarks if r is not later]
    if remarks:
        r = next((x for x in remarks if x.author != s.author), remarks[0])  # a reviewer's before the author's
        quote = clean_line(r.text, 140)
        points.append(f"评审讨论：{r.author} 提到“{quote}”" if zh else f"Review: {r.author} wrote “{quote}”")
    extra = [f for f in ordered[1:4] if _role(f) != _role(ordered[0]) or f.kind == SOURCE][:1]
    points.extend(_file_point(s, f, zh, first=False) for f in extra)
    if s.perf_claims:
        figures = ("、" if zh else ", ").join(s.perf_claims[:2])
        points.append(f"正文数据（{figures}）：对照测试环境与方法再引用。" if zh
                      else f"Reported figures ({figures}): check the setup and method before quoting them.")
    if s.switches:
        listed = _names(s.switches, 2, zh)
        points.append(f"用户可见的开关 {listed}：留意默认值与启用方式。" if zh
                      else f"User-visible switches {listed}: note defaults and how to turn them on.")
    wanted = {Verdict.DEEP_READ: 3, Verdict.SKIM: 2, Verdict.SKIP: 1}[a.verdict]
    return [clean_line(_zh_spacing(p) if zh else p, MAX_POINT) for p in points[:wanted]]


def followups(s: Signals, lang: Language) -> list[str]:
    """Later work the PR's own data points to; none when it points to none."""
    zh = lang == "zh-CN"
    out: list[str] = []
    if s.is_revert:
        ref = f"#{s.reverted_refs[0]}" if s.reverted_refs else ("原 PR" if zh else "the original PR")
        out.append(f"确认被回滚的 {ref} 是否会以修正版重新提交。" if zh
                   else f"Watch whether {ref} comes back in a fixed form.")
    if s.later_reverted:
        out.append("此改动随后被回滚：以回滚 PR 为准。" if zh else "This change was later reverted: read the revert first.")
    for advisory in s.advisories[:1]:
        out.append(f"确认部署的版本已包含 {advisory} 的修复。" if zh
                   else f"Make sure deployments include the fix for {advisory}.")
    for snippet in s.later_work[:2]:
        quote = clean_line(snippet, 140)
        out.append(f"跟踪后续工作：“{quote}”" if zh else f"Track the follow-up: “{quote}”")
    if s.groundwork and not s.later_work:
        out.append("这是铺垫性改动：关注后续真正接入的 PR。" if zh else "Groundwork only: watch for the PR that wires it in.")
    if s.skipped_tests or s.is_flaky:
        out.append("跟踪被跳过或禁用的测试何时恢复。" if zh else "Track when the skipped or disabled tests are re-enabled.")
    deps = [f.path for f in s.files if f.kind == BUILD and "requirements" in f.path.lower()]
    if s.is_bump or (deps and "deps" in s.areas):
        where = f"：{_names(deps, 2, zh)}" if zh and deps else f": {_names(deps, 2, zh)}" if deps else ""
        out.append(f"核对依赖约束与锁文件{where}。" if zh else f"Check version bounds and lockfiles{where}.")
    later = _suggestion(s)
    if later is not None:
        quote = clean_line(later.text, 120)
        out.append(f"评审建议可作后续改进：{later.author}“{quote}”" if zh
                   else f"A reviewer's suggestion to follow up: {later.author} “{quote}”")
    return [clean_line(_zh_spacing(x) if zh else x, MAX_FOLLOWUP) for x in dict.fromkeys(out)][:3]


class OfflineDrafter:
    """Drafts an entry from the PR's own data: deterministic, no network, never raises for a valid PR."""

    name = "offline"

    def draft(self, pr: PullRequest, subsystems: list[str], language: Language) -> DraftEntry:
        """Draft the entry for ``pr`` in ``language`` ("zh-CN"; anything else is English, as in Verdict.label)."""
        lang: Language = "zh-CN" if language == "zh-CN" else "en"
        zh = lang == "zh-CN"
        s = extract(pr, list(subsystems))
        a = assess(s)
        warnings: list[str] = []
        if not s.title:
            warnings.append("PR 没有标题：标题行由文件推断，请编辑。" if zh
                            else "The PR has no title: the headline was inferred from its files.")
        if s.files_truncated:
            warnings.append("文件列表被来源截断，统计只覆盖已列出的文件。" if zh
                            else "The source truncated the file list; the figures cover the listed files only.")
        if not s.files and not s.body:
            warnings.append("PR 既无文件也无描述：草稿只能依据标题。" if zh
                            else "No files and no description: the draft rests on the title alone.")
        return DraftEntry(
            number=pr.number, headline=headline(s, lang), verdict=a.verdict, rationale=rationale(s, a, lang),
            focus=focus(s, a, lang), followups=followups(s, lang), audience=audience(s, lang),
            drafter=self.name, needs_editing=bool(warnings), warnings=warnings,
        )
