"""Code facts as readers and the editor see them: compact lines, code as code, and "Action required" per reader."""

from __future__ import annotations

import json

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.kernel.actions import actions
from prdigest.kernel.factlines import fact_line, fact_lines
from prdigest.kernel.models import Change, DraftEntry, Entry, PullRequest, Verdict
from prdigest.readers.file import Reader
from prdigest.review import apply_decision, changes_text, check_decision, parse_changes, review_markdown
from prdigest.review.decision import ReviewDecision
from renderers import render_email, render_slack, render_text
from renderers.feishu import render_feishu
from renderers.site import build_site
from tests.factories import WEEK, edition, entry

RENAME = Change(kind="renamed", symbol="FusedMoEFactory", path="vllm/moe/layer.py", line=12, before="FusedMoE",
                after="FusedMoEFactory")
PARAM = Change(kind="signature", symbol="get_kv_cache_spec", path="vllm/attn.py", line=40, detail="+layer_names")
OPTIONAL = Change(kind="signature", symbol="get_kv_cache_spec", path="vllm/attn.py", detail="+layer_names=None")
ENV_GONE = Change(kind="env", symbol="VLLM_USE_V1", path="vllm/envs.py", before="1", language="config")
ENV_NEW = Change(kind="env", symbol="VLLM_FAST", path="vllm/envs.py", after="0", language="config")
PIN = Change(kind="dependency", symbol="torch", path="requirements.txt", before=">=2.5", after=">=2.6",
             language="config")
PRIVATE = Change(kind="removed", symbol="_helper", path="vllm/moe/layer.py", public=False)


@pytest.mark.parametrize(("change", "zh", "en"), [
    (RENAME, "重命名 `FusedMoE` 为 `FusedMoEFactory`", "renamed `FusedMoE` to `FusedMoEFactory`"),
    (PARAM, "`get_kv_cache_spec` 新增参数 `layer_names`", "`get_kv_cache_spec` gained parameter `layer_names`"),
    (Change(kind="signature", symbol="f", path="a.py", detail="-dtype"), "`f` 移除参数 `dtype`",
     "`f` lost parameter `dtype`"),
    (Change(kind="signature", symbol="f", path="a.py", detail="block_size=16→32"),
     "`f` 的参数 `block_size` 默认值由 `16` 改为 `32`", "`f`: default of `block_size` changed from `16` to `32`"),
    (ENV_GONE, "移除环境变量 `VLLM_USE_V1`", "removed environment variable `VLLM_USE_V1`"),
    (ENV_NEW, "新增环境变量 `VLLM_FAST`（默认 `0`）", "added environment variable `VLLM_FAST` (default `0`)"),
    (PIN, "依赖 `torch` 由 `>=2.5` 改为 `>=2.6`", "pin `torch` changed from `>=2.5` to `>=2.6`"),
    (Change(kind="moved", symbol="Sampler", path="b.py", before="vllm.a", after="vllm.b"),
     "`Sampler` 从 `vllm.a` 移至 `vllm.b`", "moved `Sampler` from `vllm.a` to `vllm.b`"),
    (Change(kind="kernel", symbol="moe_align", path="csrc/moe.cu", after="void moe_align(int)", language="cuda"),
     "新增内核 `moe_align`", "added kernel `moe_align`"),
    (Change(kind="file-deleted", symbol="old.py", path="vllm/old.py"), "删除文件 `vllm/old.py`",
     "deleted `vllm/old.py`"),
    # A backtick in a name cannot end the code span early.
    (Change(kind="added", symbol="a`b", path="a.py"), "新增 `a'b`", "added `a'b`"),
])
def test_each_fact_reads_in_both_languages_with_names_as_code(change: Change, zh: str, en: str) -> None:
    assert fact_line(change, "zh-CN") == zh
    assert fact_line(change, "en") == en


@pytest.mark.parametrize(("change", "breaks"), [
    (RENAME, True), (PARAM, True), (OPTIONAL, False), (ENV_GONE, True), (ENV_NEW, False), (PIN, False),
    (PRIVATE, False), (Change(kind="added", symbol="New", path="a.py"), False),
    (Change(kind="moved", symbol="Sampler", path="b.py", before="vllm.a", after="vllm.b"), True),
    (Change(kind="argument", symbol="--max-len", path="vllm/args.py", before="--max-len", after="--max-model-len",
            detail="renamed", language="config"), True),
    (Change(kind="tests", symbol="test_x", path="tests/test_x.py", before="test_x"), False),
])
def test_breaking_is_a_removal_rename_or_signature_change_of_something_public(change: Change, breaks: bool) -> None:
    assert change.breaks is breaks


def test_at_most_five_lines_then_a_count_breaking_first() -> None:
    many = [Change(kind="added", symbol=f"f{i}", path="a.py") for i in range(6)] + [RENAME]
    lines = fact_lines(many, "en")
    assert lines[0] == "renamed `FusedMoE` to `FusedMoEFactory`"
    assert len(lines) == 6 and lines[-1] == "+2 more"
    assert fact_lines(many, "zh-CN")[-1] == "另有 2 项"
    assert fact_lines(many[:3], "en") == ["added `f0`", "added `f1`", "added `f2`"]


def test_an_entry_drafted_from_a_pr_with_facts_carries_them_and_its_breaking_mark() -> None:
    pr = PullRequest(number=7, url="https://github.com/vllm-project/vllm/pull/7", title="Rename", merged_at=WEEK,
                     changes=[RENAME, PIN])
    draft = DraftEntry(number=7, headline="h", verdict=Verdict.SKIM, rationale="r")
    made = Entry.from_draft(pr, ["moe"], draft)
    assert made.changes == [RENAME, PIN] and made.breaking
    quiet = Entry.from_draft(pr.model_copy(update={"changes": [PIN]}), ["moe"], draft)
    assert not quiet.breaking
    # digest.json keeps them (a record round-trips).
    assert Entry.model_validate(json.loads(made.model_dump_json())).changes == [RENAME, PIN]


def _week(language: str = "en"):
    return edition([
        # The block shows exactly an entry's actions (prdigest/kernel/actions.py), made from its facts when drafted.
        entry(1, ["moe"], "deep-read", changes=[RENAME, PIN], breaking=True, action=actions([RENAME], language)),
        entry(2, ["moe"], "skim", changes=[PIN]),
        entry(3, ["documentation"], "skip"),
    ], language).model_copy(update={"ranking": [1, 2, 3]})


READERS = [Reader(id="moe", name="MoE", email="moe@example.com", slack="#moe", feishu="moe-group",
                  subsystems=("moe",)),
           Reader(id="docs", name="Docs", email="docs@example.com", slack="#docs", feishu="docs-group",
                  subsystems=("documentation",))]


def _variants(language: str = "en"):
    ed = _week(language)
    variants, idle = plan_variants(ed, READERS)
    assert not idle
    by_reader = {v.readers[0].id: v for v in variants}
    return ed, by_reader["moe"], by_reader["docs"]


def test_the_email_opens_with_action_required_for_a_follower_of_the_subsystem_only() -> None:
    ed, moe, docs = _variants()
    html = render_email(ed, moe).html
    assert "Action required" in html
    assert "<code>FusedMoE</code>" in html and "<code>FusedMoEFactory</code>" in html
    # Before read first, and the facts in the entry itself.
    assert html.index("Action required") < html.index("Read first")
    assert "What the code did" in html and "<code>torch</code>" in html
    assert "Action required" not in render_email(ed, docs).html


def test_the_zh_email_says_it_in_chinese() -> None:
    ed, moe, docs = _variants("zh-CN")
    html = render_email(ed, moe).html
    assert "需要处理" in html and "重命名 <code>FusedMoE</code> 为 <code>FusedMoEFactory</code>" in html
    assert "需要处理" not in render_email(ed, docs).html


def test_plain_text_lists_the_breaking_entries_before_read_first() -> None:
    ed, moe, docs = _variants()
    text = render_text(ed, moe)
    assert text.index("Action required (1):") < text.index("Read first:")
    assert "renamed `FusedMoE` to `FusedMoEFactory`" in text
    assert "What the code did:" in text and "pin `torch` changed from `>=2.5` to `>=2.6`" in text
    assert "Action required" not in render_text(ed, docs)


def test_slack_parent_opens_with_action_required_and_facts_are_code() -> None:
    ed, moe, docs = _variants()
    parent, *replies = render_slack(ed, moe)
    sections = [b["text"]["text"] for b in parent["blocks"] if b["type"] == "section"]
    action = [s for s in sections if "Action required" in s]
    assert action and "`FusedMoE`" in action[0]
    first = [i for i, s in enumerate(sections) if "Read first" in s]
    assert first and sections.index(action[0]) < first[0]
    assert any("`FusedMoEFactory`" in b["text"]["text"] for r in replies for b in r["blocks"] if b["type"] == "section")
    docs_parent = render_slack(ed, docs)[0]
    assert "Action required" not in json.dumps(docs_parent)


def test_feishu_first_card_opens_with_action_required() -> None:
    ed, moe, docs = _variants("zh-CN")
    cards = render_feishu(ed, moe)
    contents = [el.get("content", "") for el in cards[0]["card"]["elements"]]
    action = next(i for i, c in enumerate(contents) if "需要处理" in c)
    assert "`FusedMoE`" in contents[action]
    assert action < next(i for i, c in enumerate(contents) if "先读这些" in c)
    assert "需要处理" not in json.dumps(render_feishu(ed, docs), ensure_ascii=False)


def test_the_archive_page_has_the_block_and_each_entry_its_facts() -> None:
    ed = _week()
    files = build_site([ed])
    page = next(v.decode() for k, v in files.items() if k.startswith("editions/") and k.endswith("index.html"))
    assert page.index('class="action"') < page.index('class="read-first"')
    assert 'class="action"' in page and "<code>FusedMoEFactory</code>" in page
    assert '<ul class="facts">' in page


def test_the_review_lists_breaking_entries_and_nobreak_clears_a_mark() -> None:
    ed = _week().model_copy(update={"entries": [e.model_copy(update={"status": "draft"}) for e in _week().entries]})
    text = review_markdown(ed)
    assert "### Action required (1)" in text and "`nobreak 41873`" in text
    assert "renamed `FusedMoE` to `FusedMoEFactory`" in text
    assert "Code facts (**breaking**: clear with `nobreak 1`)" in text
    fields, errors = parse_changes("nobreak 1\nreject 3")
    assert not errors and fields["nobreak"] == "1"
    decision = ReviewDecision(decision="send", approver="ed", **fields)  # type: ignore[arg-type]
    reviewed = apply_decision(ed, decision)
    assert [e.breaking for e in reviewed.entries] == [False, False, False]
    assert not any(e.breaking for e in reviewed.published)
    assert "nobreak 1" in changes_text(decision)
    # Not marked, or not in the edition: one reason each, nothing applied.
    bad = ReviewDecision(decision="send", approver="ed", nobreak="2 99")
    reasons = check_decision(ed, bad)
    assert any("#99 is not in" in r for r in reasons) and any("#2 is neither marked breaking" in r for r in reasons)


def test_the_prefect_form_and_digest_approve_carry_nobreak() -> None:
    from flows.review_form import ReviewForm, decision_of, form_input

    ed = _week().model_copy(update={"entries": [e.model_copy(update={"status": "draft"}) for e in _week().entries]})
    decision = decision_of(ReviewForm(decision="send", approver="ed", changes="nobreak 1"))
    assert decision.nobreak == "1"
    # What digest approve resumes the run with: the form's input, read back the same way.
    sent = form_input(ed, ReviewDecision(decision="send", approver="ed", nobreak="1"))
    assert "nobreak 1" in sent["changes"]
    assert not apply_decision(ed, decision_of(ReviewForm(**sent))).entries[0].breaking


def test_a_week_of_many_breaking_entries_lists_twenty_and_counts_the_rest() -> None:
    ed = edition([entry(n, ["moe"], "skim", changes=[RENAME], breaking=True, action=actions([RENAME], "en"))
                  for n in range(1, 26)], "en")
    variant = plan_variants(ed, READERS[:1])[0][0]
    text = render_text(ed, variant)
    start = text.index("Action required (25):")
    block = text[start:text.index("=" * 20, start)]
    assert block.count("  - #") == 20 and "5 more breaking entries below." in block
    assert "5 more breaking entries below." in render_email(ed, variant).html
    zh = edition([entry(n, ["moe"], "skim", changes=[RENAME], breaking=True, action=actions([RENAME], "zh-CN"))
                  for n in range(1, 26)])
    assert "另有 5 个需要处理的条目，见下文。" in render_text(zh, plan_variants(zh, READERS[:1])[0][0])


@pytest.mark.parametrize("symbol", ["<!channel>", "<script>x</script>", "[x](http://e.io)", "*b*_i_", "a\u202eb\nc"])
def test_a_hostile_symbol_stays_inert_in_every_medium(symbol: str) -> None:
    bad = Change(kind="removed", symbol=symbol, path="a.py")
    ed = edition([entry(1, ["moe"], "skim", changes=[bad], breaking=True)], "en").model_copy(update={"ranking": [1]})
    variant = plan_variants(ed, READERS[:1])[0][0]
    html = render_email(ed, variant).html
    assert "<script>" not in html and '<a href="http://e.io' not in html
    slack = json.dumps(render_slack(ed, variant))
    assert "<!channel>" not in slack and "<http://e.io" not in slack
    # Inside a code span a link is literal text (as the medium shows any code span).
    feishu = json.dumps(render_feishu(ed, variant), ensure_ascii=False).replace("`[x](http://e.io)`", "")
    assert "](http://e.io)" not in feishu
    site = "".join(v.decode("utf-8", "replace") for k, v in build_site([ed]).items() if k.endswith(".html"))
    assert "<script>x" not in site and '<a href="http://e.io' not in site
    review = review_markdown(ed)
    assert "](http://e.io)" not in review.replace("`[x](http://e.io)`", "") and "\u202e" not in review
    assert "\u202e" not in render_text(ed, variant)


def test_the_review_lists_at_most_twenty_breaking_entries_and_counts_the_rest() -> None:
    ed = edition([entry(n, ["moe"], "skim", status="draft", changes=[RENAME], breaking=True) for n in range(1, 31)], "en")
    text = review_markdown(ed)
    head = text[text.index("### Action required (30)"):text.index("To clear a mark")]
    assert head.count("\n- [#") == 20 and "… and 10 more, each marked **breaking**" in head
