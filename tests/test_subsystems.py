"""Subsystem classification: the shipped vLLM rules, the rules file format, and the folder fallback."""

from __future__ import annotations

import json
import random
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from prdigest.classify.subsystems import (
    RULES_DIR,
    FolderClassifier,
    Rules,
    RulesClassifier,
    classifier_for,
    load_rules,
    rules_for_repo,
)
from prdigest.kernel.errors import ConfigError, RulesError
from prdigest.kernel.models import FileChange, PullRequest
from prdigest.kernel.vocabulary import is_name

SAMPLE = Path(__file__).resolve().parents[1] / "prdigest" / "collect" / "data" / "vllm-sample-week.jsonl"
VLLM = "vllm-project/vllm"


FileSpec = str | tuple[str, int] | FileChange


def make_pr(files: list[FileSpec], title: str = "", labels: tuple[str, ...] = (), body: str = "") -> PullRequest:
    """A merged PR touching ``files`` (a bare path changes 10 lines)."""
    changes = []
    for f in files:
        if isinstance(f, FileChange):
            changes.append(f)
        else:
            path, lines = (f, 10) if isinstance(f, str) else f
            changes.append(FileChange(path=path, additions=lines))
    return PullRequest(
        number=1, url="https://github.com/vllm-project/vllm/pull/1", title=title, labels=list(labels), body=body,
        merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), files=changes,
    )


@pytest.fixture(scope="module")
def vllm() -> RulesClassifier:
    classifier = classifier_for(VLLM)
    assert isinstance(classifier, RulesClassifier)
    return classifier


# One row per tricky case: (files, title, labels, expected subsystems in order).
CASES = [
    pytest.param(["csrc/moe/topk_softmax_kernels.cu"], "", (), ["kernels", "moe"], id="csrc-moe-is-kernels-and-moe"),
    pytest.param(["csrc/quantization/fp8/common.cu"], "", (), ["kernels", "quantization"], id="csrc-quantization"),
    pytest.param(["csrc/cpu/attention.cpp"], "", (), ["kernels", "attention", "cpu-xpu"], id="csrc-cpu-attention"),
    pytest.param(["vllm/platforms/rocm.py"], "", (), ["rocm"], id="rocm-platform"),
    pytest.param(["docker/Dockerfile.rocm"], "", (), ["rocm", "ci-build"], id="rocm-dockerfile"),
    pytest.param(["cmake/hipify.py"], "", (), ["rocm", "ci-build"], id="hipify-is-rocm-build"),
    pytest.param(["docs/usage/quickstart.md", "docs/serving/env.md"], "", (), ["docs"], id="docs-only"),
    pytest.param(["docs/usage/security.md"], "", (), ["docs", "security"], id="security-docs"),
    pytest.param([".agents/skills/x/SKILL.md"], "", (), ["docs"], id="markdown-anywhere-is-docs"),
    pytest.param(["tests/test_utils.py"], "", (), ["ci-build"], id="tests-only-is-ci-build"),
    pytest.param(["tests/v1/core/test_scheduler.py"], "", (), ["scheduler-core", "ci-build"],
                 id="tests-only-keep-their-area"),
    pytest.param([".buildkite/test-pipeline.yaml"], "", (), ["ci-build"], id="buildkite"),
    pytest.param([".github/workflows/lint.yml"], "", (), ["ci-build"], id="github-workflows"),
    pytest.param(["requirements/cuda.txt"], "", (), ["deps"], id="requirements-are-deps"),
    pytest.param(["requirements/rocm.txt"], "", (), ["rocm", "deps"], id="rocm-requirements"),
    pytest.param(["vllm/v1/structured_output/backend_xgrammar.py"], "", (), ["structured-output"],
                 id="output-is-not-tpu"),
    pytest.param(["vllm/v1/worker/tpu_model_runner.py"], "", (), ["tpu"], id="tpu-runner"),
    pytest.param(["vllm/v1/kv_offload/cpu.py"], "", (), ["kv-cache"], id="cpu-offload-is-not-cpu-backend"),
    pytest.param(["vllm/platforms/xpu.py"], "", (), ["cpu-xpu"], id="xpu-platform"),
    pytest.param(["vllm/model_executor/models/llama_eagle3.py"], "", (), ["spec-decode"], id="eagle-head-not-a-model"),
    pytest.param(["vllm/model_executor/models/deepseek_mtp.py"], "", (), ["spec-decode", "models"], id="mtp-layers"),
    pytest.param(["vllm/model_executor/models/qwen2_5_vl.py"], "", (), ["models", "multimodal"], id="vlm-model"),
    pytest.param(["vllm/entrypoints/openai/tool_parsers/hermes_tool_parser.py"], "", (),
                 ["frontend-api", "tool-calling"], id="tool-parser"),
    pytest.param(["vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py"], "", (),
                 ["distributed", "kv-cache"], id="kv-connector"),
    pytest.param(["vllm/v1/core/kv_cache_manager.py"], "", (), ["kv-cache"], id="kv-manager-not-scheduler"),
    pytest.param(["vllm/v1/core/sched/scheduler.py"], "", (), ["scheduler-core"], id="scheduler"),
    pytest.param(["vllm/lora/layers/base.py"], "", (), ["lora"], id="lora"),
    pytest.param(["vllm/v1/sample/sampler.py"], "", (), ["sampling"], id="sampler"),
    pytest.param(["vllm/benchmarks/datasets.py"], "", (), ["perf-benchmarks"], id="bench-sampling-is-not-sampling"),
    pytest.param(["vllm/utils/__init__.py"], "Tidy helpers", (), ["other"], id="nothing-matches-fallback"),
    # Dominance: incidental and small files do not add a subsystem; the largest always counts.
    pytest.param([("vllm/v1/attention/backends/flash_attn.py", 100), ("tests/models/test_llama.py", 300)],
                 "", (), ["attention"], id="incidental-test-adds-nothing"),
    pytest.param([("vllm/entrypoints/openai/serving_chat.py", 200), ("docs/serving/openai.md", 10)],
                 "", (), ["frontend-api"], id="small-doc-touch-adds-nothing"),
    pytest.param([("vllm/entrypoints/openai/serving_chat.py", 100), ("docs/serving/openai.md", 40)],
                 "", (), ["frontend-api", "docs"], id="substantial-doc-counts"),
    pytest.param([("vllm/model_executor/layers/fused_moe/layer.py", 300),
                  ("vllm/model_executor/models/mixtral.py", 100)], "", (), ["moe", "models"],
                 id="primary-is-most-lines"),
    pytest.param([("vllm/lora/x.py", 15)] + [(f"vllm/{d}/x.py", 10) for d in (
        "multimodal", "distributed", "engine", "reasoning", "sample", "utils", "config", "compilation", "envs")],
        "", (), ["lora"], id="spread-thin-keeps-primary"),
    pytest.param([FileChange(path="vllm/utils/legacy.py", previous_path="vllm/lora/utils.py", status="renamed")],
                 "", (), ["lora"], id="moved-out-of-a-subsystem"),
    # Titles: vLLM's tags anywhere in the title, reverts, acronyms.
    pytest.param(["vllm/model_executor/layers/quantization/fp8.py"], "[ROCm] Fix fp8 padding", (),
                 ["quantization", "rocm"], id="rocm-title-without-rocm-path"),
    pytest.param(["vllm/config/speculative.py"], 'Revert "[Spec Decode] Use EAGLE3 by default (#123)"', (),
                 ["spec-decode"], id="revert-keeps-reverted-tags"),
    pytest.param(["tests/v1/tpu/test_basic.py"], "[TPU] Fix flaky test", (), ["tpu", "ci-build"],
                 id="tie-goes-to-first-title-tag"),
    pytest.param(["tests/v1/tpu/test_basic.py"], "[CI] Fix TPU test", (), ["ci-build", "tpu"],
                 id="tie-follows-title-order"),
    pytest.param([], "[Doc] Fix typo", (), ["docs"], id="title-only-no-files"),
    pytest.param(["vllm/utils/x.py"], "Support TP=2 with DCP", (), ["distributed"], id="parallelism-acronyms"),
    pytest.param(["vllm/utils/x.py"], "fix the step counter in ep loop", (), ["other"],
                 id="lowercase-acronym-not-parallelism"),
    pytest.param(["docker/Dockerfile"], "[CI/Build] Shrink the docker image", (), ["ci-build"],
                 id="docker-image-is-not-multimodal"),
    pytest.param(["vllm/model_executor/models/minicpm.py"], "Support Eagle3 for MiniCPM", (),
                 ["models", "spec-decode"], id="title-adds-spec-decode"),
    # Labels: mapped ones always count; path-derived mergify labels are deliberately not mapped.
    pytest.param(["vllm/engine/arg_utils.py"], "", ("rocm",), ["scheduler-core", "rocm"], id="label-adds"),
    pytest.param(["csrc/activation_kernels.cu"], "", ("documentation", "ready"), ["kernels"],
                 id="unmapped-labels-ignored"),
    pytest.param([], "Some change", ("kv-connector",), ["kv-cache"], id="label-only"),
]


@pytest.mark.parametrize(("files", "title", "labels", "expected"), CASES)
def test_vllm_rules_classify(vllm: RulesClassifier, files, title, labels, expected) -> None:
    assert vllm.classify(make_pr(files, title, labels)) == expected


# --- the rules file format ---------------------------------------------------------------------------

GOOD = """\
fallback: other
min_share: 0.2
incidental_paths: ['^tests/']
subsystems:
  kernels:
    paths: ['^csrc/']
  rocm:
    paths: ['rocm']
    titles: ['\\bROCm\\b']
    labels: [rocm]
"""


# The description: one row per tricky body, (files, title, body, subsystems that must be in the result,
# subsystems that must not). A body phrase is weaker evidence than a path: each distinct phrase is worth
# `body_share` (8 %) of the changed lines, so two phrases, or one with a few changed lines, count.
BODY_CASES = [
    pytest.param([("vllm/entrypoints/launcher.py", 80)], "Limit HTTP header count and size",
                 "The server accepted unbounded header counts, enabling denial of service.",
                 {"frontend-api", "security"}, set(), id="security-bound-named-only-in-body"),
    pytest.param([("vllm/entrypoints/openai/serving_chat.py", 60)], "Fix streaming of arguments",
                 "The tool call parser dropped the last delta; the tool parser now flushes it.",
                 {"frontend-api", "tool-calling"}, set(), id="tool-call-parser-named-only-in-body"),
    pytest.param([("vllm/model_executor/layers/rotary_embedding.py", 100)], "Speed up rotary embedding",
                 "Calls the fused CUDA kernel through torch.ops._C.rotary_embedding, a custom op.",
                 {"models", "kernels"}, set(), id="kernel-behind-a-custom-op"),
    pytest.param([("vllm/model_executor/layers/rotary_embedding.py", 92), ("vllm/distributed/utils.py", 8)],
                 "Shard rotary caches", "Each tensor parallel rank keeps its own slice.",
                 {"models", "distributed"}, set(), id="one-phrase-plus-a-few-lines"),
    # Near misses: none of these may add a subsystem.
    pytest.param([("vllm/model_executor/layers/rotary_embedding.py", 100)], "Shard rotary caches",
                 "Each tensor parallel rank keeps its own slice.", {"models"}, {"distributed"},
                 id="one-phrase-alone-is-not-enough"),
    pytest.param([("vllm/model_executor/models/llama.py", 100)], "Add Llama 5",
                 "Adds the Llama 5 architecture.\n\nTested with TP=8 on a multi-node setup with NCCL all-reduce.",
                 {"models"}, {"distributed"}, id="test-notes-name-the-setup-not-the-change"),
    pytest.param([("vllm/model_executor/models/llama.py", 100)], "Faster Llama loading",
                 "Benchmarked with vllm bench serve using expert parallelism and all2all on 8x H200.",
                 {"models"}, {"distributed", "moe", "perf-benchmarks"}, id="benchmark-notes-ignored"),
    pytest.param([("vllm/v1/core/sched/scheduler.py", 50)], "Fix the scheduler",
                 "<!-- Security: report vulnerabilities privately; denial of service, CVE-2025-1 -->\n"
                 "Fixes an off-by-one in the waiting queue.", {"scheduler-core"}, {"security"},
                 id="template-comments-not-read"),
    pytest.param([("docker/Dockerfile", 40)], "[CI/Build] Shrink the docker image",
                 "The image now ships fewer layers; images are pushed once.", {"ci-build"}, {"multimodal"},
                 id="docker-images-are-not-image-inputs"),
    pytest.param([("vllm/v1/sample/sampler.py", 60)], "Speed up the sampler",
                 "Vectorises top-k experts selection in MoE routing too.", {"sampling"}, {"moe"},
                 id="one-moe-phrase-in-a-sampler-pr"),
]


@pytest.mark.parametrize(("files", "title", "body", "present", "absent"), BODY_CASES)
def test_vllm_rules_read_the_description(vllm: RulesClassifier, files, title, body, present, absent) -> None:
    got = vllm.classify(make_pr(files, title, body=body))
    assert present <= set(got) and not absent & set(got), got


def test_paths_outrank_the_description(vllm: RulesClassifier) -> None:
    pr = make_pr([("vllm/v1/core/sched/scheduler.py", 50)], "Bound the waiting queue",
                 body="An attacker could grow the queue without bound: unbounded memory, a denial of service.")
    assert vllm.classify(pr) == ["scheduler-core", "security"]


BODY_RULES = """fallback: other
subsystems:
  kernels:
    paths: ['^csrc/']
    body: ['\\bcustom ops?\\b', '\\bCUDA kernels?\\b']
  security:
    body: ['\\bdenial of service\\b', '\\bunbounded\\b']
"""


def test_body_patterns_in_any_repo(tmp_path: Path) -> None:
    classifier = classifier_for("someone/else", write(tmp_path, BODY_RULES))
    twice = make_pr([("src/app.py", 30)], "Harden the parser", body="Unbounded input allowed a denial of service.")
    assert classifier.classify(twice) == ["security"]
    once = make_pr([("src/app.py", 30)], "Harden the parser", body="Input was unbounded.")
    assert classifier.classify(once) == ["other"]
    off = classifier_for("someone/else", write(tmp_path, "body_share: 0\n" + BODY_RULES))
    assert off.classify(twice) == ["other"]


def test_a_bad_body_pattern_names_file_line_and_rule(tmp_path: Path) -> None:
    path = write(tmp_path, BODY_RULES.replace("'\\bunbounded\\b'", "'(unbounded'"))
    with pytest.raises(RulesError) as info:
        load_rules(path)
    assert ":7:" in str(info.value) and "subsystems.security.body.1" in str(info.value)


def test_hostile_bodies_stay_fast(vllm: RulesClassifier) -> None:
    body = ("tool " * 40_000) + "(" * 50_000 + "CUDA kernel " * 10_000
    started = time.perf_counter()
    assert vllm.classify(make_pr([("vllm/a.py", 10)], "x", body=body))
    assert time.perf_counter() - started < 1.0


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_custom_rules_file_drives_the_classifier(tmp_path: Path) -> None:
    classifier = classifier_for("someone/else", write(tmp_path, GOOD))
    assert classifier.known_subsystems == {"kernels", "rocm", "other"}
    assert classifier.classify(make_pr(["csrc/a.cu"], "[rocm] tune")) == ["kernels", "rocm"]
    assert classifier.classify(make_pr(["src/a.py"])) == ["other"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(GOOD.replace("paths: ['rocm']", "paths: ['rocm', '(unclosed']"),
                     [":8:", "subsystems.rocm.paths.1", "(unclosed", "invalid regular expression"],
                     id="bad-path-regex"),
        pytest.param(GOOD.replace("'\\bROCm\\b'", "'[ROCm'"),
                     [":9:", "subsystems.rocm.titles.0", "[ROCm"], id="bad-title-regex"),
        pytest.param(GOOD.replace("['^tests/']", "['^tests/', '*.py']"),
                     [":3:", "incidental_paths.1", "*.py"], id="bad-incidental-regex"),
        pytest.param(GOOD.replace("  rocm:\n", "  ROCm:\n"),
                     [":7:", "'ROCm' is not a subsystem name", "^[a-z0-9][a-z0-9-]*$"], id="upper-case-name"),
        pytest.param(GOOD.replace("  rocm:\n", "  ../rocm:\n"),
                     [":7:", "'../rocm' is not a subsystem name"], id="path-like-name"),
        pytest.param(GOOD.replace("  rocm:\n", "  -rocm:\n"),
                     [":7:", "'-rocm' is not a subsystem name"], id="leading-hyphen"),
        pytest.param(GOOD + "  kernels:\n    titles: ['kernel']\n",
                     [":11:", "'kernels' appears twice"], id="duplicate-subsystem"),
        pytest.param(GOOD.replace("    labels: [rocm]", "    label: [rocm]"),
                     [":10:", "subsystems.rocm.label", "Extra inputs are not permitted"], id="unknown-rule-key"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_shares: 0.2"),
                     [":2:", "min_shares"], id="unknown-top-level-key"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 2"),
                     [":2:", "min_share"], id="share-above-one"),
        pytest.param(GOOD.replace("fallback: other", "fallback: Misc stuff"),
                     [":1:", "fallback", "'Misc stuff' is not a subsystem name"], id="invalid-fallback"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 0.2\norder: [rocm, kernels]"),
                     [":3:", "order", "missing ['other']"], id="order-misses-fallback"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 0.2\norder: [rocm, kernels, other, gpu]"),
                     [":3:", "undeclared ['gpu']"], id="order-names-undeclared"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 0.2\ndrafting: {core: [kernel]}"),
                     [":3:", "drafting names undeclared subsystem(s) kernel"], id="drafting-undeclared"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 0.2\ndrafting: {file_kinds: {docs: docs}}"),
                     [":3:", "drafting.file_kinds.docs"], id="drafting-unknown-file-kind"),
        pytest.param(GOOD.replace("min_share: 0.2", "min_share: 0.2\ndigest_shows: both"),
                     [":3:", "digest_shows"], id="unknown-digest-shows"),
        pytest.param(GOOD.replace("    labels: [rocm]", "    labels: [rocm]\n    display: {zh-CN: ROCm}"),
                     [":11:", "subsystems.rocm.display", "needs an English text"], id="display-without-en"),
        pytest.param(GOOD + "  docs: {}\n", [":11:", "subsystems.docs", "at least one of paths"], id="empty-rule"),
        pytest.param(GOOD.replace("    paths: ['^csrc/']", "    paths: ['^csrc/'"),
                     ["invalid YAML"], id="broken-yaml"),
        pytest.param("fallback: other\n", ["subsystems", "Field required"], id="no-subsystems"),
        pytest.param("just text\n", [":1:", "(top level)"], id="not-a-mapping"),
    ],
)
def test_invalid_rules_name_file_line_and_rule(tmp_path: Path, text: str, expected: list[str]) -> None:
    path = write(tmp_path, text)
    with pytest.raises(RulesError) as info:
        load_rules(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for part in expected:
        assert part in message


def test_missing_rules_file_is_a_rules_error(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="not found"):
        classifier_for(VLLM, tmp_path / "nope.yaml")
    assert issubclass(RulesError, ConfigError)


def test_shipped_vllm_rules_declare_their_vocabulary() -> None:
    path = rules_for_repo(VLLM)
    assert path is not None
    rules = load_rules(path)
    vocab = classifier_for(VLLM).vocabulary
    assert set(vocab.names) == set(rules.subsystems) | {rules.fallback} == classifier_for(VLLM).known_subsystems
    assert len(vocab.names) == 24 and vocab.names[0] == "security" and vocab.names[-1] == "other"
    assert (vocab.label("spec-decode", "zh-CN"), vocab.label("spec-decode", "en")) == ("投机解码", "Speculative decoding")
    assert vocab.get("kernels").audience("en") == "kernel developers"
    assert vocab.shows == "names"  # vLLM's readers know its subsystems by name
    assert {"attention", "moe", "kernels"} <= vocab.hints.core and vocab.hints.file_kinds["dependency"] == "deps"
    # Every subsystem carries both labels: none falls back to its bare name.
    assert all(s.label("zh-CN") != s.name or s.label("en") == s.label("zh-CN") for s in vocab.subsystems)


@pytest.mark.parametrize(
    ("repo", "found"),
    [("vllm-project/vllm", True), ("VLLM-Project/vLLM", True), (" vllm-project/vllm ", True),
     ("vllm-project/other", False), ("vllm", False), ("vllm-project/vllm/extra", False), ("", False),
     ("../vllm-project/vllm", False)],
)
def test_rules_for_repo(repo: str, found: bool) -> None:
    assert (rules_for_repo(repo) is not None) is found


def test_rules_model_rejects_invalid_names_built_in_code() -> None:
    with pytest.raises(ValueError, match="not a subsystem name"):
        Rules.model_validate({"subsystems": {"GPU": {"paths": ["x"]}}})
    assert Rules.model_validate({"subsystems": {"gpu": {"paths": ["x"]}}}).names == ("gpu", "other")


def test_a_repo_brings_its_own_names_labels_and_order(tmp_path: Path) -> None:
    text = """\
fallback: misc
order: [web-ui, parser, misc]
subsystems:
  parser:
    display: {zh-CN: 解析器, en: Parser}
    paths: ['^src/parser/']
  web-ui:
    display: {zh-CN: 网页界面, en: Web UI}
    audience: {zh-CN: 前端工程师, en: front-end engineers}
    paths: ['^web/']
"""
    classifier = classifier_for("acme/tool", write(tmp_path, text))
    vocab = classifier.vocabulary
    assert classifier.known_subsystems == {"parser", "web-ui", "misc"}
    assert vocab.names == ("web-ui", "parser", "misc")
    assert vocab.label("parser", "zh-CN") == "解析器" and vocab.label("misc", "en") == "misc"
    assert vocab.get("parser").audience("en") == "Parser developers"
    assert vocab.get("web-ui").audience("zh-CN") == "前端工程师"
    assert vocab.shown(["parser", "misc"], "en") == ["Parser", "misc"]
    assert classifier.classify(make_pr(["README"])) == ["misc"]


# --- the generic fallback ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("path", "folder"),
    [("src/Foo_Bar/x.py", "src"), ("Foo Bar/x.py", "foo-bar"), (".github/workflows/ci.yml", "github"),
     ("README.md", "other"), ("/setup.py", "other"), ("___/x", "other"), ("Docs/guide.md", "docs"),
     ("ünïcode/x", "n-code")],
)
def test_folder_of(path: str, folder: str) -> None:
    assert FolderClassifier.folder_of(path) == folder
    assert is_name(folder)


@pytest.mark.parametrize("path", ["-/x", "../../etc/x", "--a--/b", "Ä/x", "\x00/x", " /x", "1.2/x", "a b-/x"])
def test_folder_names_are_always_valid_subsystem_names(path: str) -> None:
    assert is_name(FolderClassifier.folder_of(path))


def test_repo_without_rules_gets_folder_classifier() -> None:
    classifier = classifier_for("someone/unknown-repo")
    assert isinstance(classifier, FolderClassifier)
    assert classifier.known_subsystems == set()
    assert classifier.vocabulary.is_open and classifier.vocabulary.shows == "names"
    pr = make_pr([("docs/a.md", 5), ("src/a.py", 50), ("README.md", 5), ("lib/b.py", 50)])
    assert classifier.classify(pr) == ["lib", "src", "docs", "other"]
    assert classifier.classify(make_pr([])) == ["other"]


# --- determinism and quality on the sample week ------------------------------------------------------

def sample() -> list[tuple[PullRequest, set[str]]]:
    with SAMPLE.open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    return [(PullRequest.model_validate(row), set(row["gold"]["subsystems"])) for row in rows]


def test_classification_ignores_file_order(vllm: RulesClassifier) -> None:
    rng = random.Random(7)
    for pr, _ in sample():
        first = vllm.classify(pr)
        files = list(pr.files)
        rng.shuffle(files)
        assert vllm.classify(pr.model_copy(update={"files": files})) == first
        assert vllm.classify(pr) == first


def test_every_result_is_known_nonempty_and_unique(vllm: RulesClassifier) -> None:
    for pr, _ in sample():
        got = vllm.classify(pr)
        assert got and len(got) == len(set(got)) and set(got) <= vllm.known_subsystems


def test_micro_f1_on_sample_week(vllm: RulesClassifier) -> None:
    tp = fp = fn = 0
    for pr, gold in sample():
        got = set(vllm.classify(pr))
        tp, fp, fn = tp + len(got & gold), fp + len(got - gold), fn + len(gold - got)
    precision, recall = tp / (tp + fp), tp / (tp + fn)
    f1 = 2 * precision * recall / (precision + recall)
    assert f1 >= 0.85, f"micro-F1 {f1:.3f} (precision {precision:.3f}, recall {recall:.3f})"


def test_hostile_titles_and_paths_do_not_crash(vllm: RulesClassifier) -> None:
    pr = make_pr([("\x00weird/\u202epath", 0), ("a" * 5000, 3)], title="[ROCm]" + "(" * 10_000 + "\x07")
    assert vllm.classify(pr)[0] in vllm.known_subsystems


BACKTRACKING_RULES = """\
subsystems:
  docs:
    titles: ['{pattern}']
"""
#: A title of 40 repeated words: Python's engine tries every way to split them among ``(\w+\s?)+``.
FORTY_WORDS = "[" + "word " * 40 + "oops"


def _classify_in_child(path: Path, title: str) -> list[str]:
    """Classify in a child process, so a pattern that backtracks fails the test instead of hanging it."""
    import subprocess
    import sys

    code = ("import sys, json; from prdigest.kernel.models import PullRequest; from prdigest.classify.subsystems import "
            "classifier_for; from tests.test_subsystems import make_pr; "
            "c = classifier_for('someone/else', __import__('pathlib').Path(sys.argv[1])); "
            "print(json.dumps(c.classify(make_pr([('src/a.py', 3)], sys.argv[2]))))")
    done = subprocess.run([sys.executable, "-c", code, str(path), title], capture_output=True, text=True,
                          timeout=30, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_backtracking_title_pattern_runs_in_linear_time(tmp_path: Path) -> None:
    path = write(tmp_path, BACKTRACKING_RULES.format(pattern=r"^\[(\w+\s?)+\]:"))
    started = time.perf_counter()
    assert _classify_in_child(path, FORTY_WORDS) == ["other"]  # Python's engine: more than 120 s
    assert _classify_in_child(path, "[word word]: fix") == ["docs"]
    assert time.perf_counter() - started < 25


@pytest.mark.parametrize("pattern", [r"(?<![a-z])(\w+\s?)+:", r"\b(a+)+\b", r"(?:x|y+)*(?=z)"])
def test_a_pattern_that_needs_pythons_engine_and_nests_quantifiers_is_refused_at_load(tmp_path: Path,
                                                                                      pattern: str) -> None:
    path = write(tmp_path, BACKTRACKING_RULES.format(pattern=pattern))
    with pytest.raises(RulesError) as info:
        load_rules(path)
    message = str(info.value)
    assert str(path) in message and ":3:" in message and "subsystems.docs.titles.0" in message
    assert repr(pattern) in message and "nests quantifiers" in message


#: The pattern an audit found (issue 30): no nested quantifier, yet each repetition of the group can take one
#: letter or two, so a title without "[kernel]" is cut every possible way (2^40 and more for 49 characters).
AMBIGUOUS = r"(?i)^(?!revert)(\w\w|\w)*\[kernel\]"


@pytest.mark.parametrize("pattern", [AMBIGUOUS, r"(?<!x)(\w\w?)+:", r"\b(?:a|a)*b", r"(?=.)(?:x?|y?)*z",
                                     r"(?<!-)(a)(?:\1|a)*!"])
def test_a_repeated_part_that_can_read_the_same_text_two_ways_is_refused_at_load(tmp_path: Path,
                                                                                   pattern: str) -> None:
    path = write(tmp_path, BACKTRACKING_RULES.format(pattern=pattern))
    with pytest.raises(RulesError) as info:
        load_rules(path)
    message = str(info.value)
    assert str(path) in message and ":3:" in message and "subsystems.docs.titles.0" in message
    assert repr(pattern) in message and "can match the same text in two ways" in message


def test_the_ambiguous_pattern_would_hang_on_a_49_character_title() -> None:
    """What the refusal saves: Python's engine on the audit's pattern, in a child killed after 5 s."""
    import subprocess
    import sys

    title = "a" * 48 + "!"
    assert len(title) == 49
    code = f"import re; re.search({AMBIGUOUS!r}, {title!r})"
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], timeout=5)


@pytest.mark.parametrize("pattern", [r"(?<![a-z])(\w\s?)*:", r"(?<!x)(?:foo|bar)+", r"(?<!x)(?:ab|ac)*$",
                                     r"\b(?:\w|\s)*\]", r"(?<!x)(?:-[0-9a-z]{4}){3}",
                                     r"(?i)(?<!re)(?:land|fix)(?:ed|es)?\b"])
def test_repeats_that_read_text_one_way_stay_allowed_on_pythons_engine(tmp_path: Path, pattern: str) -> None:
    load_rules(write(tmp_path, BACKTRACKING_RULES.format(pattern=pattern)))


def test_the_shipped_rules_match_the_same_on_both_engines() -> None:
    # Every shipped pattern, as the classifier compiles it (RE2 where it means the same), agrees with Python's
    # engine on the sample week's paths, titles and bodies and on non-ASCII text (RE2's \w, \d, \s are ASCII).
    import re

    from prdigest.kernel.patterns import compile_rule

    rules = load_rules(RULES_DIR / "vllm-project__vllm.yaml")
    texts = [t for pr, _ in sample() for t in (pr.title, pr.body[:4000], *(f.path for f in pr.files))]
    texts += ["修复 moe 内核", "fused_moé/kernel.cu", "tpu：支持", "vllm/attention/ｂackends/x.py", "ＣＶＥ-2024-1",
              "images\u2003of speculative decoding", "CVE-٢٠٢٤-12345", "[Bugfix]\u00a0quantization"]
    patterns = [(p, False) for r in rules.subsystems.values() for p in (*r.paths, *r.exclude_paths)]
    patterns += [(p, True) for r in rules.subsystems.values() for p in (*r.titles, *r.body)]
    patterns += [(p, False) for p in (*rules.incidental_paths, *rules.drafting.kernel_files)]
    assert any(type(compile_rule(p, i)).__module__.startswith("re2") for p, i in patterns)
    for pattern, ignore_case in patterns:
        ours, python = compile_rule(pattern, ignore_case), re.compile(pattern, re.I if ignore_case else 0)
        for text in texts:
            a, b = ours.search(text), python.search(text)
            assert (a and (a.start(), a.group(0))) == (b and (b.start(), b.group(0))), (pattern, text)


#: No nesting and no ambiguous repeat, so :func:`check` lets it through; eight adjacent ``\w*`` over the same
#: letters make Python's engine try every way to share a title among them (n^8: 40 characters took 14-41 s,
#: 60 take minutes).
POLYNOMIAL = r"\b" + r"\w*" * 8 + "!"


def test_a_polynomial_title_pattern_passes_the_load_check_and_still_runs_in_bounded_time(tmp_path: Path) -> None:
    path = write(tmp_path, BACKTRACKING_RULES.format(pattern=POLYNOMIAL))
    started = time.perf_counter()
    assert _classify_in_child(path, "a" * 60) == ["other"]  # Python's engine: minutes, past the child's 30 s
    assert _classify_in_child(path, "fix it!") == ["docs"]
    assert time.perf_counter() - started < 25


def test_a_rule_that_runs_out_of_time_is_no_match_is_named_and_given_up_on(caplog) -> None:
    import logging

    from prdigest.kernel.patterns import GIVE_UP, Bounded, check

    pattern = r"(?<!x)\w*\w*\d"  # passes the load check; ~8 s on a long description on Python's engine
    assert check(pattern) == pattern
    rule = Bounded(pattern, ignore_case=True)
    body = "a" * 65_536
    started = time.perf_counter()
    with caplog.at_level(logging.WARNING, logger="prdigest.kernel.patterns"):
        assert rule.search(body) is None and list(rule.finditer(body)) == []
        assert rule.search(body) is None and rule.given_up
    assert time.perf_counter() - started < GIVE_UP * 3.0
    assert repr(pattern) in caplog.text and "65536 characters" in caplog.text and "matches nothing more" in caplog.text
    assert rule.search("a1") is None  # given up: nothing more, at once
    assert Bounded(pattern).search("ab1").group(0) == "ab1"  # a short text is found as Python's engine finds it
