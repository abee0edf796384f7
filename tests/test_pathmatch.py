"""Every subsystem's path rules over a path in one pass: the same answer as each rule asked alone, for RE2's
patterns and for those on Python's engine (lookarounds), excludes included."""

from __future__ import annotations

from pathlib import Path

import pytest

from prdigest.classify.pathmatch import PathMatcher
from prdigest.classify.rulesfile import load_rules, rules_for_repo
from prdigest.kernel.models import PullRequest
from prdigest.kernel.patterns import compile_rule

RULES = [
    ((r"^vllm/attention/", r"^csrc/attention/"), (r"^vllm/attention/.*_test\.py$",)),   # RE2, with an exclude
    ((r"^vllm/(?!attention/)\w+/moe",), ()),                                          # a lookahead: Python's engine
    ((r"\.md$", r"^docs/"), (r"(?<=docs/)api/",)),                                    # a lookbehind exclude
    ((r"^vllm/",), ()),
]


def _alone(path: str) -> frozenset[int]:
    return frozenset(i for i, (paths, excludes) in enumerate(RULES)
                     if any(compile_rule(p).search(path) for p in paths)
                     and not any(compile_rule(p).search(path) for p in excludes))


@pytest.mark.parametrize(("path", "expected"), [
    ("vllm/attention/backend.py", {0, 3}),
    ("vllm/attention/backend_test.py", {3}),           # excluded from attention, still under vllm/
    ("vllm/model_executor/moe/layer.py", {1, 3}),      # the lookahead rule
    ("vllm/attention/moe.py", {0, 3}),                 # the lookahead refuses attention/
    ("docs/usage.md", {2}),
    ("docs/api/index.md", set()),                      # the lookbehind exclude
    ("csrc/attention/paged.cu", {0}),
    ("setup.py", set()),
    ("vllm/é/moe", {1, 3}),                            # \w as Python reads it, on RE2 and on Python's engine
])
def test_one_pass_takes_what_each_rule_alone_takes(path: str, expected: set[int]) -> None:
    matcher = PathMatcher(RULES)
    assert matcher.matching(path) == expected == _alone(path)
    assert matcher.matching(path) == expected  # again, from the cache


def test_the_shipped_vllm_rules_classify_the_sample_week_as_before(sample_records) -> None:
    rules = load_rules(rules_for_repo("vllm-project/vllm") or Path())
    matcher = PathMatcher([(r.paths, r.exclude_paths) for r in rules.subsystems.values()])
    compiled = [([compile_rule(p) for p in r.paths], [compile_rule(p) for p in r.exclude_paths])
                for r in rules.subsystems.values()]
    paths = {f.path for rec in sample_records for f in PullRequest.model_validate(rec).files}
    paths |= {"vllm/" + p.rsplit("/", 1)[-1] for p in paths} | {"csrc/" + p.rsplit("/", 1)[-1] for p in paths}
    assert len(paths) > 300
    for path in paths:
        alone = frozenset(i for i, (inc, exc) in enumerate(compiled)
                          if any(p.search(path) for p in inc) and not any(p.search(path) for p in exc))
        assert matcher.matching(path) == alone, path
