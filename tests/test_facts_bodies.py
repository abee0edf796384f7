"""Facts of what changed in place, from a real repository (git init/commit): tests whose body or decorators
changed, C++/CUDA and Python function bodies, CI jobs and triggers, CMake variables; a comment or whitespace
change yields none. The offline draft
names those facts in English and zh-CN (in code spans, never mixing languages), and a small change that only
adds to the API is not sent to a deep read."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.draft.language import code_words, mixes_languages
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.verdict import assess
from prdigest.kernel.links import pr_link
from prdigest.kernel.models import Change, FileChange, PullRequest, Verdict
from prdigest.kernel.prtext.signals import extract
from tests.git_support import _patches, commit, git, write

TEST_FILE = '''
    import pytest


    class TestComm:
        def test_comm(self):
            x = make(4)
            assert x.shape == (4,)

        def test_other(self):
            assert True


    def test_free():
        assert 1 + 1 == 2
'''

KERNEL = '''
    #include <cuda.h>

    __global__ void scale_kernel(float* out, const float* in, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = in[i] * 2.0f;
    }

    void launch_scale(float* out, const float* in, int n) {
      scale_kernel<<<(n + 255) / 256, 256>>>(out, in, n);
    }
'''

MODULE = '''
    def _round_scale(x, eps):
        return max(x, eps)


    def public_api(x, eps=1e-6):
        return _round_scale(x, eps)
'''

WORKFLOW = '''
    name: tests
    on:
      pull_request:
    jobs:
      test:
        runs-on: ubuntu-latest
        steps:
          - run: pip install torch
          - run: pytest
      lint:
        runs-on: ubuntu-latest
        steps:
          - run: ruff check
'''

CMAKE = '''
    cmake_minimum_required(VERSION 3.19)
    project(pkg)
    set(CMAKE_CXX_STANDARD 17)
    option(PKG_BUILD_CPU "Build the CPU kernels" ON)
'''

#: (number, title, files): one commit per PR on top of the base.
WEEK: list[tuple[int, str, dict[str, str | None]]] = [
    (201, "Skip test_comm on old GPUs", {"tests/test_comm.py": TEST_FILE.replace(
        "        def test_comm(self):", "        @pytest.mark.skipif(True, reason='old GPU')\n        def test_comm(self):")}),
    (202, "Tidy the comm tests", {"tests/test_comm.py": TEST_FILE.replace(
        "            x = make(4)", "            # a comment only\n            x  =  make(4)   # and another")}),
    (203, "Clamp the scale kernel's tail", {"csrc/scale.cu": KERNEL.replace("if (i < n) out[i]", "if (i < n && i >= 0) out[i]")}),
    (204, "Reformat the scale kernel", {"csrc/scale.cu": KERNEL.replace(
        "  int i = blockIdx.x", "  // the thread's index\n  int i =   blockIdx.x").replace(
        "if (i < n) out[i] = in[i] * 2.0f;", "if (i < n)\n    out[i] = in[i] * 2.0f;  /* doubled */")}),
    (205, "Round the scale with a floor", {"pkg/ops.py": MODULE.replace("return max(x, eps)", "return max(round(x), eps)")}),
    (206, "Comment the rounding", {"pkg/ops.py": MODULE.replace(
        "    return max(x, eps)", "    # never below eps\n    return max(x, eps)  # clamp")}),
    (207, "Install torchvision in CI, run weekly, drop lint", {".github/workflows/ci.yml": WORKFLOW.replace(
        "pip install torch", "pip install torch torchvision").replace(
        "      pull_request:", "      pull_request:\n      schedule:\n        - cron: '0 0 * * 0'").split("      lint:")[0]}),
    (208, "Comment the workflow", {".github/workflows/ci.yml": WORKFLOW.replace(
        "    jobs:", "    # the jobs\n    jobs:").replace("runs-on: ubuntu-latest", "runs-on:   ubuntu-latest  # a runner")}),
    (209, "Build with C++20", {"CMakeLists.txt": CMAKE.replace("STANDARD 17", "STANDARD 20").replace(
        "ON)", "OFF)")}),
    (210, "Comment the build", {"CMakeLists.txt": CMAKE.replace("project(pkg)", "project(pkg)  # the project\n# C++")}),
]


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[int, list[Change]], dict[int, PullRequest]]:
    root = tmp_path_factory.mktemp("bodies")
    repo = root / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = {"tests/test_comm.py": TEST_FILE, "csrc/scale.cu": KERNEL, "pkg/ops.py": MODULE,
            ".github/workflows/ci.yml": WORKFLOW, "CMakeLists.txt": CMAKE}
    write(repo, {**base, "pkg/__init__.py": ""})
    commit(repo, "Initial layout")
    prs = []
    start = datetime(2026, 11, 16, 9, tzinfo=timezone.utc)
    for i, (number, title, files) in enumerate(WEEK):
        write(repo, files)
        sha = commit(repo, f"{title} (#{number})")
        changed = _patches(repo, sha)
        prs.append(PullRequest(number=number, url=pr_link("acme/pkg", number), title=title, merged_at=start + timedelta(hours=i),
                               files=changed, additions=sum(f.additions for f in changed),
                               deletions=sum(f.deletions for f in changed), merge_commit=sha))
        write(repo, {path: base[path] for path in files})  # back to the base: each PR is one change alone
        commit(repo, f"Restore after #{number}")
    facts = week_facts(prs, surface=Surface(packages=("pkg",)), clone=open_clone(repo.as_uri(), state_dir=root / "state"))
    assert facts.problems == []
    return facts.changes, {pr.number: pr for pr in prs}


def _triples(changes: list[Change]) -> set[tuple[str, str, str]]:
    return {(c.kind, c.symbol, c.detail) for c in changes}


def test_a_test_changed_in_place_is_a_fact_and_a_comment_or_reindent_is_none(week) -> None:
    changes, _ = week
    assert _triples(changes[201]) == {("tests", "TestComm.test_comm", "changed")}  # its decorator: a skip
    assert changes[202] == []


def test_a_cuda_body_changed_is_a_fact_naming_the_kernel_and_a_reformat_is_none(week) -> None:
    changes, _ = week
    assert _triples(changes[203]) == {("body", "scale_kernel", "body changed")}
    assert changes[203][0].language == "cuda"
    assert changes[204] == []


def test_a_private_python_body_changed_is_a_fact_and_a_comment_is_none(week) -> None:
    changes, _ = week
    (fact,) = changes[205]
    assert (fact.kind, fact.symbol, fact.public, fact.breaks) == ("body", "_round_scale", False, False)
    assert changes[206] == []


def test_ci_jobs_and_triggers_and_cmake_variables_are_facts_and_comments_are_none(week) -> None:
    changes, _ = week
    assert _triples(changes[207]) == {("ci", "ci.yml", "triggers: schedule"), ("ci", "test", "changed: steps"),
                                      ("ci", "lint", "removed")}
    assert changes[208] == []
    by_name = {c.symbol: c for c in changes[209]}
    assert (by_name["CMAKE_CXX_STANDARD"].before, by_name["CMAKE_CXX_STANDARD"].after) == ("17", "20")
    assert (by_name["PKG_BUILD_CPU"].before, by_name["PKG_BUILD_CPU"].after) == ("ON", "OFF")
    assert set(by_name) == {"CMAKE_CXX_STANDARD", "PKG_BUILD_CPU"}
    assert changes[210] == []


@pytest.mark.parametrize("number, name", [(201, "`TestComm.test_comm`"), (203, "`scale_kernel`"),
                                          (205, "`_round_scale`"), (209, "`CMAKE_CXX_STANDARD`"), (207, "`ci.yml`")])
def test_the_offline_draft_names_the_fact_in_english_and_chinese(week, number: int, name: str) -> None:
    changes, prs = week
    pr = prs[number].model_copy(update={"changes": changes[number]})
    without = OfflineDrafter().draft(prs[number], [], "en")
    assert name not in without.rationale + " ".join(without.focus)  # the name comes from the fact alone
    for language in ("en", "zh-CN"):
        d = OfflineDrafter().draft(pr, [], language)
        assert name in d.rationale and name in d.focus[0], (language, d)
        if language == "zh-CN":
            words = code_words([f.path for f in pr.files], extract(pr, []).identifiers)
            for sentence in (d.rationale, *d.focus):
                assert not mixes_languages(sentence, words), sentence


def _pr(number: int, changes: list[Change], lines: int, body: str) -> PullRequest:
    files = [FileChange(path="torchao/dtypes/nf4tensor.py", additions=lines, deletions=0)]
    return PullRequest(number=number, url=pr_link("acme/pkg", number), title="Fix NF4Tensor narrow() crash",
                       body=body, merged_at=datetime(2026, 11, 16, tzinfo=timezone.utc), files=files,
                       additions=lines, deletions=0, changes=changes)


#: A description that earns the score of a deep read: the failure explained at length, code named.
EXPLAINED = ("Fixes a crash: `Tensor.narrow` on an `NF4Tensor` fails with recent nightlies because `view_as` "
             "and `detach` now dispatch differently, so the failure mode is an error at load time. " * 4)


def test_a_small_change_that_only_adds_to_the_api_is_not_a_deep_read() -> None:
    added = [Change(kind="added", symbol="function_narrow", path="torchao/dtypes/nf4tensor.py", after="(func, *args)")]
    small = assess(extract(_pr(1, added, 27, EXPLAINED), []))
    assert small.verdict is Verdict.SKIM and small.rule is not None and small.rule.key == "small"
    # the same addition in a large change is weighed, not capped; a break in a small one still weighs fully
    assert assess(extract(_pr(2, added, 400, EXPLAINED), [])).rule is None
    removed = [Change(kind="removed", symbol="narrow", path="torchao/dtypes/nf4tensor.py", before="(x)")]
    assert assess(extract(_pr(3, removed, 27, EXPLAINED), [])).rule is None


def test_a_parameter_given_a_default_is_additive_not_breaking() -> None:
    loosened = Change(kind="signature", symbol="quantize", path="pkg/ops.py", detail="scale=required→None")
    tightened = Change(kind="signature", symbol="quantize", path="pkg/ops.py", detail="scale=None→required")
    assert not loosened.breaks and tightened.breaks
    weight = {c.detail: next(r.weight for r in assess(extract(_pr(4, [c], 400, EXPLAINED), [])).reasons
                             if r.key.startswith("fact-")) for c in (loosened, tightened)}
    assert weight["scale=required→None"] < weight["scale=None→required"]
