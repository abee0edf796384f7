"""Reading a repository's own conventions: labeler v4 and v5, mergify label rules, CODEOWNERS sections."""

from __future__ import annotations

import re

import pytest

from prdigest.classify.proposal.codeowners import commented_rule, read_codeowners, section_title
from prdigest.classify.proposal.labeler import read_labeler
from prdigest.classify.proposal.mergify import read_mergify
from prdigest.kernel.errors import ConfigError

LABELER_V4 = """
documentation:
  - '**/*.md'
  - docs/**
'module: ops':
  - any: ['ops/*.py', '!ops/_private.py']
frontend: web/**
all-python:
  - all: ['**/*.py']
"""

LABELER_V5 = """
documentation:
- changed-files:
  - any-glob-to-any-file: ['**/*.md', 'docs/**']
source:
- all:
  - changed-files:
    - any-glob-to-any-file: 'src/**/*'
    - all-globs-to-all-files: '!src/docs/*'
feature:
- head-branch: ['^feature', 'feature']
hostile:
- changed-files:
  - any-glob-to-any-file: ['*a*a*a*a*b', 'ok/*.py']
"""


def _matches(regexes: list[str], path: str) -> bool:
    return any(re.search(r, path) for r in regexes)


def test_labeler_v4_shape_reads_globs_any_and_negations() -> None:
    areas, shape = read_labeler(LABELER_V4)
    by = {a.written: a for a in areas}
    assert shape == "v4" and list(by) == ["documentation", "module: ops", "frontend", "all-python"]
    assert _matches(by["documentation"].paths, "docs/guide/x.rst")
    assert _matches(by["documentation"].paths, "README.md")
    ops = by["module: ops"]
    assert _matches(ops.paths, "ops/add.py") and not _matches(ops.paths, "ops/sub/add.py")
    assert _matches(ops.exclude_paths, "ops/_private.py")
    assert _matches(by["frontend"].paths, "web/src/app.ts")
    assert any("every changed file" in n for n in by["all-python"].notes)


def test_labeler_v5_shape_reads_changed_files_branches_and_skips_hostile_globs() -> None:
    areas, shape = read_labeler(LABELER_V5)
    by = {a.written: a for a in areas}
    assert shape == "v5"
    assert _matches(by["source"].paths, "src/a/b.py")
    assert _matches(by["source"].exclude_paths, "src/docs/index.md")
    assert any("every changed file" in n for n in by["source"].notes)
    # A branch cannot be seen in a PR record: the label itself is the evidence, and the note says so.
    assert by["feature"].labels == ["feature"] and by["feature"].paths == []
    assert any("head-branch" in n for n in by["feature"].notes)
    hostile = by["hostile"]
    assert _matches(hostile.paths, "ok/x.py") and len(hostile.paths) == 1
    assert any("'*a*a*a*a*b' skipped" in n for n in hostile.notes)


@pytest.mark.parametrize("text,problem", [
    ("[a, b]", "expected a mapping"),
    ("x:\n- changed-files:\n  - some-glob: '*'\n", "expected one of"),
    ("x:\n- changed-files: [{any-glob-to-any-file: '*'}]\n  nonsense: 1\n", "label 'x': unknown key 'nonsense'"),
    ("x: [unclosed\n", "labeler.yml:2: invalid YAML"),
    ("x:\n- {any: [{head-branch: 1}]}\n", "expected a glob"),
    ("x:\n- 42\n", "expected a glob, any: or all:"),
])
def test_malformed_labeler_files_name_the_label_and_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(problem)):
        read_labeler(text)


MERGIFY = r"""
pull_request_rules:
- name: label-documentation
  conditions:
    - or:
      - files~=^[^/]+\.md$
      - files~=^docs/
  actions:
    label:
      add: [documentation]
- name: label-rocm
  conditions:
    - or:
      - files~=^csrc/rocm/
      - files=vllm/platforms/rocm.py
      - title~=(?i)AMD
      - label=amd
  actions:
    label:
      add: [rocm]
- name: label-new-model
  conditions:
    - and:
      - files~=^vllm/model_executor/models/
      - -files~=^vllm/model_executor/models/registry\.py$
  actions:
    label:
      add: [new-model]
- name: hostile
  conditions:
    - files~=(?<=x)(a+)+$
    - 'title~=\b(\w+\s?)+:'
  actions:
    label:
      add: [hostile]
- name: ping author on conflicts
  conditions: [conflict]
  actions:
    comment: {message: "please rebase"}
    label: {remove: [ready]}
"""


def test_mergify_label_rules_become_areas_with_paths_titles_labels_and_exclusions() -> None:
    by = {a.written: a for a in read_mergify(MERGIFY)}
    assert list(by) == ["documentation", "rocm", "new-model", "hostile"]  # the removal rule adds nothing
    assert _matches(by["documentation"].paths, "README.md") and not _matches(by["documentation"].paths, "a/b.md")
    rocm = by["rocm"]
    assert _matches(rocm.paths, "vllm/platforms/rocm.py") and not _matches(rocm.paths, "vllm/platforms/rocm.pyc")
    assert rocm.titles == ["(?i)AMD"] and rocm.labels == ["amd"]
    assert _matches(by["new-model"].exclude_paths, "vllm/model_executor/models/registry.py")
    hostile = by["hostile"]
    assert not hostile.paths and not hostile.titles and hostile.labels == ["hostile"]
    assert len([n for n in hostile.notes if "skipped" in n]) == 2


def test_mergify_without_rules_is_empty_and_a_bad_shape_is_named() -> None:
    assert read_mergify("queue_rules: []\n") == []
    with pytest.raises(ConfigError, match="pull_request_rules must be a list"):
        read_mergify("pull_request_rules: {a: 1}\n")
    with pytest.raises(ConfigError, match="actions.label.add must be a list"):
        read_mergify("pull_request_rules:\n- name: x\n  conditions: []\n  actions: {label: {add: 3}}\n")


CODEOWNERS = """
# This file lists the owners of every part of the repository, please keep it sorted.
* @org/maintainers

# Attention backends
/vllm/attention/ @alice
/vllm/v1/attention @bob

# ---- Speculative decoding ----
/vllm/spec_decode/ @carol
*eagle* @carol

[Docs]
/docs/ @dora
README.md @dora
"""


def test_codeowners_sections_name_areas_and_prose_comments_do_not() -> None:
    areas = read_codeowners(CODEOWNERS)
    by = {a.written: a for a in areas}
    assert list(by) == ["Attention backends", "Speculative decoding", "Docs"]
    assert _matches(by["Attention backends"].paths, "vllm/v1/attention/backends/flash.py")
    assert _matches(by["Speculative decoding"].paths, "vllm/model_executor/models/llama_eagle.py")
    assert _matches(by["Docs"].paths, "README.md")


@pytest.mark.parametrize("comment,title", [
    ("# Attention backends", "Attention backends"),
    ("## === KV cache ===", "KV cache"),
    ("# This file lists the owners of every part of the repository.", None),
    ("# see https://example.com", None),
    ("# @owner", None),
    ("#", None),
])
def test_section_titles_are_short_names(comment: str, title: str | None) -> None:
    assert section_title(comment) == title


# vllm-ascend's CODEOWNERS switches rules off by commenting them out; each used to head a section of its own
# (an "eplb" subsystem holding lora and kv_offload), splitting "python source code" into four.
SWITCHED_OFF = """
# python source code
/vllm_ascend/attention @weijinqian0
# /vllm_ascend/core
/vllm_ascend/distributed @LCAIZJ
# /vllm_ascend/eplb
/vllm_ascend/distributed/kv_transfer/kv_pool/kv_offload @nalinaly
/vllm_ascend/lora @paulyu12
# vllm_ascend/patch/platform
# setup.py @wangxiyuan
# docs/
# *.md

# # tests
# /tests

# c++ source code
/csrc @zzzzwwjj
"""


def test_commented_out_rules_neither_name_a_section_nor_end_one() -> None:
    by = {a.written: a.written_patterns for a in read_codeowners(SWITCHED_OFF)}
    assert by == {"python source code": ["/vllm_ascend/attention", "/vllm_ascend/distributed",
                                         "/vllm_ascend/distributed/kv_transfer/kv_pool/kv_offload",
                                         "/vllm_ascend/lora"],
                  "c++ source code": ["/csrc"]}


@pytest.mark.parametrize("comment,rule", [
    ("# /vllm_ascend/eplb", True), ("# vllm_ascend/eplb", True), ("# docs/", True), ("# *.md", True),
    ("# setup.py", True), ("# /tests @alice", True), ("# Dockerfile* @a", True),
    ("# CI/CD", False), ("# ROCm/HIP", False), ("# Infra, CI", False), ("# # example", False),
    ("## === KV cache ===", False), ("# ---- Speculative decoding ----", False), ("#", False),
])
def test_a_commented_out_rule_is_told_from_a_title(comment: str, rule: bool) -> None:
    assert commented_rule(comment) is rule
