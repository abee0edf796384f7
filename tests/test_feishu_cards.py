"""The digest as Feishu cards: their structure, the 20 KB split, code spans and Chinese text, hostile text."""

from __future__ import annotations

import html
import json
import re

import pytest

from prdigest.connect.variants import Variant
from prdigest.deliver.feishu import CARD_BUDGET, MAX_BODY, body_bytes, sign
from prdigest.kernel.models import Entry
from renderers.feishu import MAX_CARDS, render_feishu
from renderers.lark_md import lark_md, lark_md_prose
from tests.factories import edition, entry
from tests.test_escaping import FIELDS, HOSTILE, hostile_entry
from tests.test_escaping import variant_of as _variant_of

SITE = "https://digest.example.com/"
FEISHU_HOSTILE = [
    ("at-all", '<at user_id="all">所有人</at>'),
    ("at-id-all", "<at id=all></at> 看这里"),
    ("at-user", "<at id=ou_1234567890abcdef>Lin</at>"),
    ("at-text", "@所有人 请注意 @all"),
    ("md-link", "[点我](https://evil.example/x) ![img](img_v2_key)"),
    ("font", "<font color='red'>红字</font> <link url='https://evil.example'>x</link>"),
    ("emoji-code", ":OK: :DONE:"),
    ("heading", "# 标题\n- 列表\n1. 有序\n---\n| a | b |\n|---|---|"),
]


def variant_of(entries: list[Entry], first: int = 1) -> Variant:
    """Every entry, with the first ``first`` of them to read first (as the ranking would pick)."""
    variant = _variant_of(entries)
    variant.read_first = variant.entries[:first]
    return variant


def contents(cards: list[dict]) -> list[str]:
    """Every markdown and lark_md text in the cards, in order."""
    out: list[str] = []
    for body in cards:
        for el in body["card"]["elements"]:
            out += [el["content"]] if el["tag"] == "markdown" else [t["content"] for t in el.get("elements", [])]
    return out


def assert_safe_cards(cards: list[dict]) -> None:
    for body in cards:
        assert body["msg_type"] == "interactive" and body_bytes(body) <= CARD_BUDGET
        assert body["card"]["header"]["title"]["tag"] == "plain_text"
        for el in body["card"]["elements"]:
            assert el["tag"] in ("markdown", "note", "hr")
            assert all(t["tag"] == "lark_md" for t in el.get("elements", []))
    for text in contents(cards):
        assert "<" not in text and ">" not in text  # no tag at all: no <at>, <font>, <link>
        assert "@" not in text  # no mention of anyone, not even as plain text
        for target in re.findall(r"\]\(([^)]*)\)", text):  # the only links are ours
            assert re.fullmatch(r"https://github\.com/vllm-project/vllm/pull/\d+", target) or target.startswith(SITE)


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("name,value", HOSTILE + FEISHU_HOSTILE, ids=[h[0] for h in HOSTILE + FEISHU_HOSTILE])
def test_hostile_text_is_inert_in_cards(field: str, name: str, value: str) -> None:
    bad, ok = hostile_entry(field, value), entry(7, ["moe"], "skim")
    cards = render_feishu(edition([bad, ok]), variant_of([bad, ok]), site_url=SITE)
    assert_safe_cards(cards)
    blob = "\n".join(contents(cards))
    assert blob.count("](https://github.com/vllm-project/vllm/pull/4242)") == 2  # read first, and its entry
    assert blob.count("](https://github.com/vllm-project/vllm/pull/7)") == 1


@pytest.mark.parametrize("value", ['<at user_id="all">所有人</at>', "@所有人", "*bold* [x](y) :OK:",
                                   "# not a heading"])
def test_hostile_markup_is_shown_as_written(value: str) -> None:
    ed = edition([hostile_entry("headline", value)])
    shown = html.unescape("\n".join(contents(render_feishu(ed, variant_of(ed.entries)))))
    assert value in shown  # Feishu decodes the character references: the group reads the text literally


def test_code_spans_stay_code_and_chinese_text_stays_itself() -> None:
    e = entry(1, ["kernels"], "deep-read", title="修复 MoE 对齐内核 🚀").model_copy(update={
        "headline": "调度器：`vllm/v1/core/sched/scheduler.py` 的 `_schedule()` 拆分",
        "focus": ["看 `hf_text_config` 与 `<at id=all>` 的处理"]})
    text = "\n".join(contents(render_feishu(edition([e]), variant_of([e]))))
    assert "`vllm/v1/core/sched/scheduler.py`" in text and "`_schedule()`" in text and "`hf_text_config`" in text
    assert "修复 MoE 对齐内核 🚀" in text and "&#96;&#60;at id=all&#62;&#96;" in text  # a tag is never code


def test_lark_md_references_what_could_format_or_mention() -> None:
    assert lark_md("a_b _c_ *d* [e](f) <g> @h :i: x&y") == (
        "a_b &#95;c&#95; &#42;d&#42; &#91;e&#93;(f) &#60;g&#62; &#64;h &#58;i&#58; x&#38;y")
    assert lark_md("# h\n- l\n+ p\n2. o") == "&#35; h\n&#45; l\n&#43; p\n2&#46; o"
    assert lark_md_prose("run `a*b` now") == "run `a*b` now"


def test_a_rendered_card_has_the_edition_the_counts_the_lede_and_the_entries_by_verdict() -> None:
    entries = [entry(1, ["kernels"], "deep-read"), entry(2, ["moe"], "skim"), entry(3, ["docs"], "skip")]
    ed = edition(entries, "en").model_copy(update={"lede": "The edition's lede."})
    variant = variant_of(entries)
    variant.lede = "Three PRs; one changes the kernels."  # the reader's variant's own lede comes first
    (body,) = render_feishu(ed, variant, site_url=SITE)
    card = body["card"]
    assert set(body) == {"msg_type", "card"} and card["config"]["wide_screen_mode"] is True
    assert card["header"]["title"]["content"] == "PR digest · vllm-project/vllm · 2026-W47"
    tags = [el["tag"] for el in card["elements"]]
    texts = contents([body])
    assert tags[:2] == ["markdown", "note"] and texts[0].startswith("**3 PRs this week**")
    assert texts[2] == "Three PRs; one changes the kernels." and "The edition's lede." not in "".join(texts)
    assert texts[3] == "**Read first**\n1. [#1](https://github.com/vllm-project/vllm/pull/1) Headline 1"
    assert texts[4] == f"[View in browser]({SITE}editions/vllm-project/vllm/2026-W47/)"
    headings = [t for t in texts if re.fullmatch(r"\*\*\S+ (Deep read|Skim|Skip).*\*\*", t)]
    assert [h.split(" ")[1] for h in headings] == ["Deep", "Skim", "Skip"]
    entry_text = texts[texts.index(headings[0]) + 1]
    assert entry_text.startswith("**Headline 1**\nRationale 1\n**What to look at**\n1. Look at `f1.py`")
    meta = texts[texts.index(headings[0]) + 2]
    assert "[#1](https://github.com/vllm-project/vllm/pull/1) PR 1" in meta and "&#64;alice" in meta
    assert meta.endswith(f"[Permalink]({SITE}editions/vllm-project/vllm/2026-W47/#pr-1)")


def _long_week(n: int) -> list[Entry]:
    return [entry(i, ["kernels" if i % 2 else "moe"], ["deep-read", "skim", "skip"][i % 3]).model_copy(update={
        "headline": f"调度器改动 {i}：`scheduler_{i}.py` 重写", "rationale": "值得精读：" + "中文说明，" * 150,
        "focus": [f"看 `file_{i}_{k}.py` 的第 {k} 处改动" for k in range(4)]}) for i in range(1, n + 1)]


def test_a_week_over_20_kb_is_split_into_cards_in_order_each_within_the_limit() -> None:
    entries = _long_week(60)
    var = variant_of(entries)
    cards = render_feishu(edition(entries), var, site_url=SITE)
    assert len(cards) > 3 and all(body_bytes(c) <= CARD_BUDGET for c in cards)
    # Signed, every request is still within Feishu's 20 KB.
    assert all(body_bytes({"timestamp": "1764000000", "sign": sign("s", 1764000000), **c}) <= MAX_BODY for c in cards)
    titles = [c["card"]["header"]["title"]["content"] for c in cards]
    assert titles == [f"PR 周报 · vllm-project/vllm · 2026-W47 ({i}/{len(cards)})" for i in range(1, len(cards) + 1)]
    shown = [int(n) for t in contents(cards) for n in re.findall(r"· \[#(\d+)\]\(", t)]
    assert shown == [e.number for e in var.entries]  # every entry once, in the variant's order
    assert any("（续）" in t for t in contents(cards[1:]))  # a verdict group spanning cards says so


def test_a_huge_entry_is_shortened_to_fit_one_card() -> None:
    e = entry(1, ["kernels"], "deep-read").model_copy(update={
        "rationale": "<b>巨大</b> & " * 20_000, "focus": ["`x` " + "长" * 3000] * 10})
    (body,) = render_feishu(edition([e]), variant_of([e]))
    assert body_bytes(body) <= CARD_BUDGET and "[#1](" in "\n".join(contents([body]))


def test_a_week_beyond_the_card_cap_says_how_many_entries_are_elsewhere() -> None:
    entries = _long_week(400)
    cards = render_feishu(edition(entries), variant_of(entries))
    assert len(cards) == MAX_CARDS and all(body_bytes(c) <= CARD_BUDGET for c in cards)
    last = contents(cards)[-1]
    shown = len(re.findall(r"· \[#\d+\]\(", "\n".join(contents(cards))))
    assert last == f"**还有 {400 - shown} 个条目未在飞书中列出，见邮件或存档（本期共 400 个）。**"
    assert json.dumps(cards, ensure_ascii=False).count("还有") == 1
