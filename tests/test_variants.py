"""Reader filters and variants: who gets which entries, and shared renderings."""

from __future__ import annotations

import pytest

from prdigest.classify.subsystems import classifier_for
from prdigest.connect.variants import Filter, ordered, plan_variants
from prdigest.kernel.models import FileChange, PullRequest, Verdict
from prdigest.readers.file import Reader
from tests.factories import WEEK, edition, entry


def reader(rid: str, subsystems=(), exclude=(), min_verdict="skip") -> Reader:
    return Reader(id=rid, name=rid, email=f"{rid}@example.com", subsystems=tuple(subsystems),
                  exclude=tuple(exclude), min_verdict=Verdict(min_verdict))


@pytest.mark.parametrize(("flt", "subsystems", "verdict", "selected"), [
    (Filter(), ["docs"], "skip", True),                                         # follows everything
    (Filter(frozenset({"moe"})), ["kernels", "moe"], "skim", True),             # one subsystem followed
    (Filter(frozenset({"moe"})), ["kernels"], "deep-read", False),              # none followed
    (Filter(frozenset({"moe"}), frozenset({"docs"})), ["docs", "moe"], "deep-read", False),  # excluded primary
    (Filter(frozenset({"moe"}), frozenset({"docs"})), ["moe", "docs"], "deep-read", True),   # excluded secondary
    (Filter(exclude=frozenset({"docs"})), ["docs"], "skip", False),             # everything but docs
    (Filter(exclude=frozenset({"docs"})), [], "skip", True),                    # nothing to exclude
    (Filter(min_verdict=Verdict.SKIM), ["docs"], "skip", False),                # below the lowest verdict
    (Filter(min_verdict=Verdict.SKIM), ["docs"], "skim", True),
    (Filter(min_verdict=Verdict.DEEP_READ), ["moe"], "skim", False),
    (Filter(min_verdict=Verdict.DEEP_READ), ["moe"], "deep-read", True),
])
def test_filter_selects(flt: Filter, subsystems: list[str], verdict: str, selected: bool) -> None:
    assert flt.selects(entry(1, subsystems, verdict)) is selected


def test_readers_with_the_same_filter_share_one_variant_and_idle_readers_get_nothing() -> None:
    ed = edition([entry(1, ["moe"], "deep-read"), entry(2, ["docs"], "skip"), entry(3, ["moe"], "skim"),
                  entry(4, ["moe"], "deep-read", status="rejected")])
    readers = [reader("a", ["moe"]), reader("b", ["moe"]), reader("c"), reader("d", ["tpu"]),
               reader("e", ["docs"], min_verdict="skim")]
    variants, idle = plan_variants(ed, readers)
    by_key = {v.key: v for v in variants}
    assert {v.key: [r.id for r in v.readers] for v in variants} == {"moe": ["a", "b"], "all": ["c"]}
    assert [e.number for e in by_key["moe"].entries] == [1, 3]      # rejected #4 never goes out
    assert [e.number for e in by_key["all"].entries] == [1, 3, 2]   # deep-read first, then by subsystem
    assert [r.id for r in idle] == ["d", "e"]


def test_order_is_deep_read_first_then_subsystem_then_number() -> None:
    entries = [entry(5, ["moe"], "skim"), entry(2, ["attention"], "skim"), entry(9, ["tpu"], "deep-read"),
               entry(1, ["moe"], "skip")]
    assert [e.number for e in ordered(entries)] == [9, 2, 5, 1]


def test_variant_keys_are_file_safe_and_bounded() -> None:
    flt = Filter(frozenset({"kernels", "moe", "attention", "spec-decode", "distributed", "kv-cache"}),
                 frozenset({"docs"}), Verdict.SKIM)
    assert len(flt.key) <= 60 and "/" not in flt.key
    assert Filter(frozenset({"moe"}), frozenset({"docs"}), Verdict.SKIM).key == "moe_no-docs_min-skim"
    assert "订阅" in flt.describe("zh-CN") and "Following" in flt.describe("en")


@pytest.mark.parametrize(("a", "b"), [
    (Filter(frozenset({"docs-site"})), Filter(frozenset({"docs", "site"}))),      # a hyphen inside a name
    (Filter(frozenset({"all"})), Filter()),                                       # a subsystem called "all"
    (Filter(frozenset({"a"}), frozenset({"b-c"})), Filter(frozenset({"a"}), frozenset({"b", "c"}))),
    (Filter(frozenset({"x" * 70})), Filter(frozenset({"x" * 71}))),                # long: same readable prefix
    (Filter(frozenset({"no-docs"})), Filter(exclude=frozenset({"docs"}))),        # "no-" in a name
    (Filter(frozenset({"min-skim"})), Filter(min_verdict=Verdict.SKIM)),
])
def test_different_filters_never_share_a_key(a: Filter, b: Filter) -> None:
    assert a.key != b.key
    for key in (a.key, b.key):
        assert len(key) <= 60 and all(c.isalnum() or c in "+_-" for c in key)


def test_readers_with_colliding_readable_names_get_their_own_variants() -> None:
    ed = edition([entry(1, ["docs-site"], "skim"), entry(2, ["docs", "site"], "skim")])
    variants, _ = plan_variants(ed, [reader("a", ["docs-site"]), reader("b", ["docs", "site"])])
    assert sorted(v.key for v in variants) == ["docs+site", "docs-site"]
    assert {v.key: [e.number for e in v.entries] for v in variants} == {"docs-site": [1], "docs+site": [2]}


# --- the repo's vocabulary: labels in the filter line, order of entries ------------------------------

def _quill():
    from pathlib import Path

    from prdigest.classify.subsystems import classifier_for

    return classifier_for("acme-labs/quill", Path(__file__).parent / "fixtures" / "quill" / "rules.yaml").vocabulary


def test_filter_line_shows_the_repos_labels_in_its_order() -> None:
    ed = edition([entry(1, ["web-ui"], "skim"), entry(2, ["parser"], "skim"), entry(3, ["misc"], "skim")])
    (variant,), _ = plan_variants(ed, [reader("a", ["web-ui", "parser"], ["misc"])], _quill())
    assert variant.filter.describe("zh-CN") == "订阅：解析器, 网页编辑器；排除：杂项"
    assert variant.filter.describe("en") == "Following: Parser, Web editor; excluding: Odds and ends"
    assert variant.key == "parser+web-ui_no-misc"        # keys and files keep the names


def test_entries_follow_the_vocabulary_order_when_labels_are_shown_and_names_otherwise() -> None:
    entries = [entry(1, ["web-ui"], "skim"), entry(2, ["parser"], "skim"), entry(3, ["misc"], "skim")]
    assert [e.number for e in ordered(entries, _quill())] == [2, 1, 3]          # parser, web-ui, misc
    assert [e.number for e in ordered(entries)] == [3, 2, 1]                    # by name: misc, parser, web-ui
    assert Filter(frozenset({"web-ui", "parser"})).describe("en") == "Following: parser, web-ui"


def test_a_reader_excluding_ci_build_still_gets_the_attention_pr_that_touched_ci() -> None:
    """``exclude`` drops entries whose primary subsystem is excluded, never those that merely touch it."""
    classifier = classifier_for("vllm-project/vllm")
    touched_ci = PullRequest(
        number=7, url="https://github.com/vllm-project/vllm/pull/7", author="alice", merged_at=WEEK,
        title="[Attention] FlashInfer backend: split-KV decode for long contexts",
        files=[FileChange(path="vllm/v1/attention/backends/flashinfer.py", additions=220, deletions=40),
               FileChange(path="vllm/attention/layer.py", additions=30, deletions=5),
               FileChange(path=".buildkite/test-pipeline.yaml", additions=60, deletions=12)])
    about_ci = PullRequest(
        number=8, url="https://github.com/vllm-project/vllm/pull/8", author="bob", merged_at=WEEK,
        title="[CI] Run the attention kernel tests on every push",
        files=[FileChange(path=".buildkite/test-pipeline.yaml", additions=40, deletions=3)])
    subsystems = {pr.number: classifier.classify(pr) for pr in (touched_ci, about_ci)}
    assert subsystems[7][0] == "attention" and "ci-build" in subsystems[7]
    assert subsystems[8][0] == "ci-build"
    ed = edition([entry(7, subsystems[7], "deep-read"), entry(8, subsystems[8], "skim")])
    (variant,), idle = plan_variants(ed, [reader("attn", ["attention", "ci-build"], exclude=["ci-build"])])
    assert [e.number for e in variant.entries] == [7] and idle == []


def test_a_filter_selects_from_the_facts_of_a_plan_the_entries_it_selects_one_by_one() -> None:
    # plan_variants reads each entry's fields once for thousands of filters (Filter.select); the test is the one
    # Filter.selects makes of each entry: followed subsystems, the primary one excluded, the verdict, downstreams.
    import random

    from prdigest.connect.variants import selection_facts
    from prdigest.kernel.models import Impact

    rng = random.Random(30)
    names = ["kernels", "moe", "docs", "attention", "ci-build", "core"]
    entries = []
    for n in range(120):
        e = entry(n + 1, rng.sample(names, rng.randint(0, 3)), rng.choice(["deep-read", "skim", "skip"]))
        if rng.random() < 0.2:
            e = e.model_copy(update={"impact": [Impact.model_construct(downstream=rng.choice(["acme/app", "b/c"]))]})
        entries.append(e)
    facts = selection_facts(entries)
    for _ in range(300):
        flt = Filter(frozenset(rng.sample(names, rng.randint(0, 3))), frozenset(rng.sample(names, rng.randint(0, 2))),
                     rng.choice(list(Verdict)), downstream=rng.choice([None, None, "acme/app"]))
        assert flt.select(facts) == [e for e in entries if flt.selects(e)]
