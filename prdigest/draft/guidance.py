"""Guidance: for whom the entry is, why the verdict, what to look at and what to follow up, in two languages.

Every sentence is built from what the PR's data shows (its files, the code names its body uses, its
reviewers' remarks), so the grounding check never finds a citation the PR does not support.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prdigest.draft.phrasing import MAX_AUDIENCE, MAX_FOLLOWUP, MAX_POINT, MAX_RATIONALE, code_names, zh_spacing
from prdigest.kernel.prtext.signals import BENCH, BUILD, CI, DOC, EXAMPLE, SOURCE, TEST, FileFact, Remark, Signals, clean_line
from prdigest.collect.discussion import points
from prdigest.draft.verdict import Assessment
from prdigest.kernel.factlines import fact_line
from prdigest.kernel.models import Language, PullRequest, Verdict

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


_ALTERNATIVE = re.compile(r"\b(instead|alternative\w*|why not|what about|how about|could we|can we|would it be "
                          r"(?:better|simpler|cleaner)|rather than|another (?:way|approach|option|design)|prefer\w*|"
                          r"simpler (?:way|approach))\b|改为|不如|另一种|换成|为什么不", re.IGNORECASE)
_REQUEST = re.compile(r"\b(please|must|needs? to|should|let'?s (?:not|keep|move|add)|blocking|before (?:we )?merg\w*)\b"
                      r"|请|需要|必须", re.IGNORECASE)
_LOGIN = re.compile(r"[^A-Za-z0-9_.\[\]-]")


@dataclass(frozen=True)
class Ask:
    """A reviewer's alternative or a maintainer's request, from the PR's reviews and conversation."""

    login: str
    quote: str
    kind: str  # "request" | "alternative"


def asks(pr: PullRequest) -> list[Ask]:
    """The reviewers' requests (a review asking for changes, or a request in a review) and proposed alternatives,
    from the reviews and the conversation (bots and the author's own replies left out), strongest first. The
    quote is untrusted text: cleaned, bounded, its backticks made plain so it can never open a code span."""
    found: list[Ask] = []
    for p in points(pr):
        if p.own or p.kind == "inline":  # inline remarks are the review comments the remarks already read
            continue
        text = " ".join(p.text.split())
        if p.kind == "changes-requested" or (p.kind in ("approved", "review") and _REQUEST.search(text)
                                             and not _ALTERNATIVE.search(text)):
            kind = "request"
        elif _ALTERNATIVE.search(text):
            kind = "alternative"
        elif _REQUEST.search(text) and p.kind != "comment":
            kind = "request"
        else:
            continue
        login = _LOGIN.sub("", p.author)[:39] or "ghost"
        found.append(Ask(login, clean_line(text.replace("`", "'"), 110), kind))
    return sorted(found, key=lambda a: a.kind != "request")


def _ask_point(ask: Ask, zh: bool) -> str:
    if zh:
        said = "要求修改" if ask.kind == "request" else "提出另一种做法"
        return f"评审 `@{ask.login}` {said}：“{ask.quote}”"
    said = "asks for a change" if ask.kind == "request" else "proposes an alternative"
    return f"Review: `@{ask.login}` {said}: “{ask.quote}”"


def _suggestion(s: Signals) -> Remark | None:
    """The first review remark that proposes later work (docs, another design, a follow-up)."""
    return next((r for r in s.remarks if _SUGGESTS.search(r.text) and _LATER.search(r.text)), None)


def audience(s: Signals, lang: Language) -> str:
    """Who should read the entry, from its areas, most specific first."""
    zh = lang == "zh-CN"
    vocab = s.vocabulary
    areas = tuple(a for a in s.areas if a != vocab.fallback.name)[:2] or (vocab.fallback.name,)
    return clean_line(("、" if zh else ", ").join(vocab.get(a).audience(lang) for a in areas), MAX_AUDIENCE)


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
        return clean_line(zh_spacing(f"{label}：{'，'.join(why)}（{_facts(s, zh)}）。适合{who}。"), MAX_RATIONALE)
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
        tail = f"，留意 {code_names(names, 2, zh)}" if names else ""
        return f"`{path}`（+{f.additions}/−{f.deletions}）：{role}{tail}。"
    tail = f"; note {code_names(names, 2, zh)}" if names else ""
    return f"`{path}` (+{f.additions}/−{f.deletions}): {role}{tail}."


def _fact_points(s: Signals, zh: bool) -> list[str]:
    """What the code facts ask of a reader: callers to adapt to what broke, or the new API to know."""
    lang: Language = "zh-CN" if zh else "en"
    if s.breaking_changes:
        said = ("；" if zh else "; ").join(fact_line(c, lang) for c in s.breaking_changes[:2])
        return [f"调用方需要处理：{said}。" if zh else f"Callers must adapt: {said}."]
    api = s.api_changes or s.kernel_changes
    if api:
        said = ("；" if zh else "; ").join(fact_line(c, lang) for c in api[:2])
        return [f"接口变化：{said}。" if zh else f"API: {said}."]
    return []


def focus(s: Signals, a: Assessment, lang: Language, discussion: Sequence[Ask] = ()) -> list[str]:
    """Up to three points to look at, most important first, each citing a file or a name from the PR; a reviewer's
    request or alternative from ``discussion`` (:func:`asks`) comes right after the first file."""
    zh = lang == "zh-CN"
    ordered = [f for f in s.files if f.kind == SOURCE] + [f for f in s.files if f.kind != SOURCE]
    points = _fact_points(s, zh) + [_file_point(s, f, zh) for f in ordered[:1]]
    points += [_ask_point(ask, zh) for ask in discussion[:1]]
    cited = set(_file_names(s, ordered[0])[:2]) if ordered else set()
    names = [i for i in s.identifiers if i not in cited and not i.startswith("-") and not i.isupper()]
    names = [i for i in names if not any(o != i and o.endswith("." + i) for o in names)]
    if len(names) >= 2 or (names and not points):
        listed = code_names(names, 3, zh)
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
        listed = code_names(s.switches, 2, zh)
        points.append(f"用户可见的开关 {listed}：留意默认值与启用方式。" if zh
                      else f"User-visible switches {listed}: note defaults and how to turn them on.")
    wanted = {Verdict.DEEP_READ: 3, Verdict.SKIM: 2, Verdict.SKIP: 1}[a.verdict]
    return [clean_line(zh_spacing(p) if zh else p, MAX_POINT) for p in points[:wanted]]


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
    if s.is_bump or (deps and s.vocabulary.hints.file_kinds.get("dependency") in s.areas):
        where = f"：{code_names(deps, 2, zh)}" if zh and deps else f": {code_names(deps, 2, zh)}" if deps else ""
        out.append(f"核对依赖约束与锁文件{where}。" if zh else f"Check version bounds and lockfiles{where}.")
    later = _suggestion(s)
    if later is not None:
        quote = clean_line(later.text, 120)
        out.append(f"评审建议可作后续改进：{later.author}“{quote}”" if zh
                   else f"A reviewer's suggestion to follow up: {later.author} “{quote}”")
    return [clean_line(zh_spacing(x) if zh else x, MAX_FOLLOWUP) for x in dict.fromkeys(out)][:3]
