"""What a deep read is made of, as calibration features (benchmarks/calibration_depth.py): the package's new
code (files, lines, classes, functions, kernels) read from a real repository's commits and their code facts, not
the churn a move or a test suite makes; defaults changed and pins; and how much a description explains beyond its
template."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.calibration_depth import body_features, code_features, depth_features, package_source
from prdigest.collect.facts import Surface, week_facts
from prdigest.collect.git import open_clone
from prdigest.draft import calibrations
from prdigest.draft.calibration import features, fit
from prdigest.kernel.models import Change, PullRequest, Verdict
from prdigest.state.store import open_store
from tests.git_support import commit_week

CORE = """
class Engine:
    def __init__(self, eager: bool = False):
        self.eager = eager

    def step(self, batch):
        return batch
"""
HELPERS = "\n".join(f"def helper_{i}(x):\n    return x + {i}\n\n" for i in range(150))
PAGED = "\n".join([
    "from plug.core import Engine",
    "",
    "",
    "class PagedScheduler:",
    '    """Schedules requests in pages."""',
    "",
    "    def __init__(self, pages: int):",
    "        self.pages = pages",
    "        self.free = list(range(pages))",
    "",
    *(line for i in range(30) for line in (f"    def phase_{i}(self, batch):",
                                           f"        return [b for b in batch if b % {i + 2}]", "")),
    "",
    "class PageTable:",
    "    pass",
    "",
    "",
    "def plan(engine: Engine, pages: int) -> PagedScheduler:",
    "    return PagedScheduler(pages)",
    ""])
BIG_TEST = "\n".join(f"def test_case_{i}():\n    assert {i} == {i}\n\n" for i in range(120))
KERNEL = "\n".join(["extern \"C\" __global__ void page_copy(float* dst, const float* src, int n) {",
                    *(f"    dst[{i}] = src[{i}];" for i in range(40)), "}", ""])
BASE: dict[str, str | None] = {"plug/__init__.py": "", "plug/core.py": CORE, "plug/helpers.py": HELPERS,
                               "tests/test_core.py": "def test_core():\n    assert True\n"}
PRS: dict[int, tuple[str, dict[str, str | None]]] = {
    1: ("Add a paged scheduler", {"plug/paged.py": PAGED, "tests/test_paged.py": "def test_paged():\n    pass\n"}),
    2: ("Move the helpers into a package", {"plug/helpers.py": None, "plug/util/__init__.py": "",
                                            "plug/util/helpers.py": HELPERS.replace("return x", "return  x")}),
    3: ("Cover the core with tests", {"tests/test_many.py": BIG_TEST}),
    4: ("Eager engine by default", {"plug/core.py": CORE.replace("eager: bool = False", "eager: bool = True")}),
    5: ("A page-copy kernel", {"csrc/paged/page_copy.cu": KERNEL}),
}


@pytest.fixture(scope="module")
def week(tmp_path_factory: pytest.TempPathFactory) -> dict[int, PullRequest]:
    repo = tmp_path_factory.mktemp("depth") / "up"
    prs = commit_week(repo, BASE, PRS)
    facts = week_facts(prs, surface=Surface(packages=("plug",)),
                       clone=open_clone(repo.as_uri(), state_dir=tmp_path_factory.mktemp("state")))
    return {pr.number: pr.model_copy(update={"changes": facts.changes.get(pr.number, []),
                                             "additions": sum(f.additions for f in pr.files),
                                             "deletions": sum(f.deletions for f in pr.files)}) for pr in prs}


def test_a_new_mechanism_is_its_new_source_files_classes_and_functions(week: dict[int, PullRequest]) -> None:
    found = code_features(week[1])
    assert {"newfiles:1", "newsrc:51-200", "newclass:2-3", "newfunc:1-3"} <= found
    assert "mechanical" not in found


def test_a_move_and_a_test_suite_are_churn_but_no_new_code(week: dict[int, PullRequest]) -> None:
    moved = code_features(week[2])
    assert week[2].additions + week[2].deletions >= 200  # big churn
    assert {"newsrc:0", "newclass:0", "newfunc:0", "mechanical"} <= moved
    tests_only = code_features(week[3])
    assert week[3].additions >= 200
    assert {"newsrc:0", "newfiles:0", "srcadd:0", "newclass:0", "newfunc:0"} <= tests_only


def test_a_default_flipped_and_a_new_kernel(week: dict[int, PullRequest]) -> None:
    assert "default-changed" in code_features(week[4])
    assert "default-changed" not in code_features(week[1])
    assert "newkernel" in code_features(week[5]) and "newkernel" not in code_features(week[1])


def test_the_package_source_is_code_outside_tests_docs_ci_and_tools() -> None:
    assert package_source("vllm_ascend/ops/rope.py") and package_source("csrc/moe/op_kernel/a.cpp")
    assert not any(package_source(p) for p in ("tests/ut/test_a.py", "docs/a.md", ".github/workflows/a.yaml",
                                               "examples/run.py", "tools/check.sh", "benchmarks/b.py",
                                               "vllm_ascend/data.json"))


TEMPLATE = """### What this PR does / why we need it?
{what}
### Does this PR introduce _any_ user-facing change?
No.
### How was this patch tested?
CI.
- vLLM version: v0.13.0
- vLLM main: https://github.com/vllm-project/vllm/commit/abc
---------
Signed-off-by: dev <dev@example.com>
Co-authored-by: other <other@example.com>"""


def _body(body: str) -> PullRequest:
    return PullRequest.model_validate({"number": 9, "url": "https://github.com/o/r/pull/9", "title": "t",
                                       "body": body, "merged_at": "2026-03-02T00:00:00Z"})


def test_the_template_alone_explains_nothing() -> None:
    assert body_features(_body(TEMPLATE.format(what="Fix a bug."))) == {"prose:<150"}


def test_an_explanation_the_author_wrote_counts_beyond_the_template() -> None:
    prose = ("The scheduler kept a page after its request finished, because the free list was only refilled "
             "when a new batch arrived, so long idle periods leaked every page that was in flight. ")
    body = TEMPLATE.format(what=f"## Root cause\n{prose * 4}\n**Design**: pages return on finish.\n"
                                "See the RFC #12 for the plan.")
    found = body_features(_body(body))
    assert {"explains:2+", "rfc", "prose:600-1500"} <= found


def test_the_shipped_features_leave_them_out(week: dict[int, PullRequest]) -> None:
    assert {"newfiles:1", "prose:<150"} <= depth_features(week[1])
    assert not depth_features(week[1]) & features(week[1], [], Verdict.SKIM)


def _mechanism(number: int, classes: bool) -> PullRequest:
    """A PR of 400 new lines in the package: four new classes (a mechanism of its own), or four new functions."""
    path = f"vllm_ascend/feature_{number}.py"
    pr = PullRequest.model_validate({
        "number": number, "url": f"https://github.com/o/r/pull/{number}", "title": f"Change {number}",
        "merged_at": "2026-03-02T00:00:00Z", "additions": 400, "deletions": 20,
        "files": [{"path": path, "additions": 400, "deletions": 20}]})
    names = [f"Pager{number}{k}" if classes else f"page_{number}_{k}" for k in range(4)]
    return pr.model_copy(update={"changes": [Change(kind="added", symbol=name, path=path, after="" if classes
                                                    else "(x)", reach="internal") for name in names]})


def _features(pr: PullRequest) -> set[str]:
    """The calibration's features with this module's, as ``benchmarks.learned_verdict --depth`` fits them."""
    return features(pr, [], Verdict.SKIM) | depth_features(pr)


def _labelled(deep: Callable[[int, bool], bool]) -> tuple[list[tuple[set[str], Verdict]], list[int]]:
    """60 PRs the drafter calls skim, half with new classes, each labelled twice: deep-read where ``deep`` says."""
    examples, groups = [], []
    for number in range(1, 61):
        classes = number % 2 == 0
        feats = _features(_mechanism(number, classes))
        label = Verdict.DEEP_READ if deep(number, classes) else Verdict.SKIM
        examples += [(feats, label), (feats, label)]
        groups += [number, number]
    return examples, groups


def _applied(tmp_path: Path, examples: list[tuple[set[str], Verdict]], groups: list[int]) -> list[Verdict]:
    """The verdicts of two new PRs (new classes; new functions) under the fit, saved and read from a real store."""
    store = open_store(tmp_path / "state.sqlite")
    try:
        calibrations.save(store, "o/r", fit(examples, source="labels", groups=groups))
        saved = calibrations.latest(store, "o/r")
    finally:
        store.close()
    assert saved is not None
    return [saved.verdict(_features(_mechanism(number, classes))) for number, classes in ((100, True), (101, False))]


def test_labels_that_read_new_classes_deeply_move_such_a_pr_to_a_deep_read(tmp_path: Path) -> None:
    examples, groups = _labelled(lambda number, classes: classes)
    assert _applied(tmp_path, examples, groups) == [Verdict.DEEP_READ, Verdict.SKIM]


def test_labels_without_that_pattern_move_nothing(tmp_path: Path) -> None:
    examples, groups = _labelled(lambda number, classes: number % 5 == 0)  # one PR in five, new classes or not
    assert _applied(tmp_path, examples, groups) == [Verdict.SKIM, Verdict.SKIM]


def test_balanced_churn_without_new_code_is_mechanical_whatever_moved() -> None:
    def pr(files: list[dict[str, object]]) -> PullRequest:
        return PullRequest.model_validate({
            "number": 7, "url": "https://github.com/o/r/pull/7", "title": "t", "merged_at": "2026-03-02T00:00:00Z",
            "files": files, "additions": sum(int(str(f["additions"])) for f in files),
            "deletions": sum(int(str(f["deletions"])) for f in files)})

    reformat = [{"path": f"vllm_ascend/m{i}.py", "additions": 100, "deletions": 96} for i in range(5)]
    assert "mechanical" in code_features(pr(reformat))  # a reformat or a revert: no names moved, nothing new
    grown = [*reformat, {"path": "vllm_ascend/pager.py", "additions": 300, "deletions": 0, "status": "added"}]
    assert "mechanical" not in code_features(pr(grown[:1] + grown[-1:]))
    assert "mechanical" not in code_features(pr(grown))
