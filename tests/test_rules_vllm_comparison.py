"""A proposal for vLLM from a mergify.yml modelled on its own auto-labelling, next to the shipped rules file
(which stays as it is): on the sample week, what the proposal misses and what it adds."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.classify.proposal.check import check_rules
from prdigest.classify.proposal.compare import compare_rules
from prdigest.classify.proposal.propose import Proposal, propose
from prdigest.classify.proposal.repo import from_checkout, from_prs
from prdigest.classify.rulesfile import load_rules, rules_for_repo
from prdigest.collect.sources import read_jsonl, sample_week_path

FIXTURE = Path(__file__).parent / "fixtures" / "vllm-mergify"
REPO = "vllm-project/vllm"


def vllm_proposal() -> tuple[Proposal, list]:
    """The proposal from the mergify fixture, with the sample week's changed files as the tree."""
    prs = read_jsonl(sample_week_path())
    snapshot = from_prs(REPO, prs)
    snapshot.configs = from_checkout(FIXTURE, REPO).configs
    return propose(snapshot), prs


@pytest.fixture(scope="module")
def comparison():
    proposal, prs = vllm_proposal()
    shipped_path = rules_for_repo(REPO)
    assert shipped_path is not None
    return proposal, compare_rules(load_rules(shipped_path), proposal.rules(), prs), prs


def test_mergify_labels_become_subsystems_named_as_vllm_labels_them(comparison) -> None:
    proposal, _, _ = comparison
    shown = {p.name: p.shown for p in proposal.subsystems}
    assert shown["ci-build"] == "ci/build" and shown["speculative-decoding"] == "speculative-decoding"
    assert "needs-rebase" not in shown  # a process label mergify adds on conflicts
    assert any("'needs-rebase' says how a PR is handled" in n for n in proposal.notes)


def test_the_areas_mergify_labels_match_the_shipped_subsystems(comparison) -> None:
    _, result, _ = comparison
    matched = result.matched
    for shipped, proposed in {"rocm": "rocm", "tpu": "tpu", "tool-calling": "tool-calling",
                              "structured-output": "structured-output", "docs": "documentation",
                              "perf-benchmarks": "performance", "kv-cache": "kv-connector",
                              "frontend-api": "frontend"}.items():
        assert matched.get(shipped) == proposed, (shipped, matched)
    # Folders of code no mergify rule labels are found by the tree, under their folder names.
    assert matched.get("moe") == "fused-moe" and matched.get("kernels") == "csrc"


def test_what_the_proposal_misses_and_adds(comparison) -> None:
    _, result, _ = comparison
    # vLLM's mergify has no label for these core areas: the shipped file's hand-written title and path
    # rules are what a proposal cannot know.
    assert {"attention", "distributed", "quantization", "security", "sampling"} <= set(result.missed)
    # Model families and the v1 engine are labels in vLLM but not subsystems a reader follows in the
    # shipped file; the proposal keeps them (a team may drop them after `digest rules check`).
    assert {"llama", "qwen", "deepseek", "v1"} <= set(result.added)


def test_the_proposal_still_meets_the_weekly_targets_on_vllm(comparison) -> None:
    proposal, _, prs = comparison
    report = check_rules(proposal.rules(), prs)
    assert report.largest[1] <= 0.40 and report.catch_all_share <= 0.10, report.as_json()
