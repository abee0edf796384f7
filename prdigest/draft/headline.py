"""The headline: the title's verb and object restated in zh-CN or English, with the area in front.

The verb table, the zh glossary and the zh sentence frames are the phrasebook. A zh-CN headline is in one
language: composed from the phrasebook when every word of the title is in it (code and names aside), else
composed in Chinese from the PR's code facts (``重命名 `FusedMoE` 为 `FusedMoEFactory```, identifiers in code
spans), else the title kept whole after the area (``内核：Fuse the MoE align kernel``), never half-translated
(:mod:`prdigest.draft.language`).
"""

from __future__ import annotations

import re

from prdigest.draft.language import code_words, mixes_languages
from prdigest.draft.phrasing import MAX_HEADLINE, zh_spacing
from prdigest.kernel.factlines import brief_line, fact_line, rank
from prdigest.kernel.models import Change
from prdigest.kernel.prtext.signals import Signals, clean_line
from prdigest.kernel.models import Language

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
    ("kv cache", "KV 缓存"), ("kv-cache", "KV 缓存"), ("prefix cache", "前缀缓存"), ("api key", "API 密钥"),
    ("chunked prefill", "分块预填充"), ("prefill", "预填充"), ("decode", "解码"), ("cache", "缓存"),
    ("error message", "错误信息"), ("memory", "内存"), ("output", "输出"), ("input", "输入"),
    ("requests", "请求"), ("request", "请求"), ("batch", "批次"), ("index", "索引"), ("sampling", "采样"),
    ("metrics", "指标"), ("policy", "策略"), ("scheduling", "调度"), ("connector", "连接器"),
    ("offloading", "卸载"), ("grammar", "语法"), ("warmup", "预热"), ("sparse", "稀疏"), ("text", "文本"),
    ("arguments", "参数"), ("flag", "参数"), ("path", "路径"), ("condition", "条件"), ("steps", "步骤"),
    ("documentation", "文档"), ("docs", "文档"),
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
_CJK = re.compile(r"[\u4e00-\u9fff]")
_TITLE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")
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


def from_facts(s: Signals, limit: int = MAX_HEADLINE) -> str | None:
    """The change said in Chinese from its code facts (``移除 `Int4CPULayout` 等 5 项改动``), None when the PR has
    none or none fits in ``limit``. The most important fact first (breaking, then API, kernels, files), those the
    title names before the others, tests and implementation changes last."""
    words = set(_TITLE_WORD.findall(s.core_title))

    def named(c: Change) -> bool:
        return any(v and (v in words or v.rsplit(".", 1)[-1] in words) for v in (c.symbol, c.before, c.after))

    facts = sorted(s.changes, key=lambda c: (rank(c)[0], not named(c), {"body": 1, "tests": 2}.get(c.kind, 0)))
    if not facts:
        return None
    if len(facts) == 2:
        both = f"{fact_line(facts[0], 'zh-CN')}，{fact_line(facts[1], 'zh-CN')}"
        if len(both) <= limit:
            return both
    more = f" 等 {len(facts)} 项改动" if len(facts) > 1 else ""
    for say in (fact_line, brief_line):  # a long first fact (a module path) gives way to one that fits
        for fact in facts[:10]:
            line = say(fact, "zh-CN") + more
            if len(line) <= limit:
                return line
    return None


def headline(s: Signals, lang: Language) -> str:
    """A short statement of the change in ``lang``, never the title itself."""
    zh = lang == "zh-CN"
    area = next((a for a in s.title_areas if a in s.areas), s.areas[0] if s.areas else None)
    label = s.vocabulary.label(area, lang) if area and area != s.vocabulary.fallback.name else ""
    fallback = label or ("变更" if zh else "Change")
    if not s.core_title:
        if s.files:
            top = s.files[0].path
            return clean_line(f"{fallback}：改动 {top}" if zh else f"{fallback}: changes to {top}", MAX_HEADLINE)
        return f"PR #{s.number}（无标题）" if zh else f"PR #{s.number} (untitled)"
    text, whole = "", False
    code = code_words([f.path for f in s.files], s.identifiers) if zh else frozenset()
    for short in (0, 1, 2):
        text, verbed = _statement(s, zh, short)
        if zh and (mixes_languages(text, code) or not _CJK.search(text)):
            composed = from_facts(s, MAX_HEADLINE - len(label) - 1)
            if composed is not None:
                text, verbed = composed, True  # what the code did, in Chinese, names as code
            elif mixes_languages(text, code):
                text, verbed, whole = s.core_title, False, True  # half-translated: the title, whole, reads better
        if whole:
            text = f"{fallback}：{text}"  # the area in front, then the title as its author wrote it
        elif label and label.lower() not in text.lower():
            text = f"{label}：{text}" if zh else f"{label}: {text[:1].lower() + text[1:] if verbed else text}"
        elif not zh:
            text = text[:1].upper() + text[1:]
        if len(text) <= MAX_HEADLINE:
            break
    if s.max_factor and not s.is_revert and not whole:
        suffix = f"，最高 {s.max_factor[:-1]} 倍" if zh else f" (up to {s.max_factor})"
        if len(text) + len(suffix) <= MAX_HEADLINE:
            text += suffix
    text = zh_spacing(text) if zh else text
    if text.strip().lower() == s.title.strip().lower():
        text = f"{fallback}：{text}" if zh else f"{fallback}: {text}"
    return clean_line(text, MAX_HEADLINE)
