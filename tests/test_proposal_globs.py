"""Globs (minimatch with dot: true, CODEOWNERS) compiled to bounded regexes, checked against an independent
reference matcher, and hostile patterns refused before they can run."""

from __future__ import annotations

import re
import time

import pytest

from prdigest.classify.proposal.globs import GlobError, compile_codeowners, compile_glob
from prdigest.classify.proposal.safety import regex_problem
from prdigest.kernel.patterns import _re2
from tests.labeler_reference import minimatch

# (glob, path, matches) — the tricky cases of actions/labeler's minimatch.
GLOBS = [
    ("**/*.md", "README.md", True),
    ("**/*.md", "docs/a/b/guide.md", True),
    ("**/*.md", "docs/guide.mdx", False),
    ("*.md", "docs/guide.md", False),  # no matchBase: a root file only
    ("*.md", "README.md", True),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/pkg/a.py", False),  # one level
    ("src/**/*.py", "src/a.py", True),  # ** spans zero folders too
    ("src/**/*.py", "src/x/y/z/a.py", True),
    ("src/**", "src/x/y", True),
    ("src/**", "srcx/y", False),
    ("*", ".env", True),  # dot: true
    (".github/**", ".github/workflows/ci.yml", True),
    ("**/.eslintrc*", "web/app/.eslintrc.json", True),
    ("docs/{api,guide}/*.md", "docs/guide/x.md", True),
    ("docs/{api,guide}/*.md", "docs/blog/x.md", False),
    ("requirements{,-dev}.txt", "requirements.txt", True),
    ("requirements{,-dev}.txt", "requirements-dev.txt", True),
    ("file?.py", "file1.py", True),
    ("file?.py", "file10.py", False),
    ("lib/[abc]*.rs", "lib/bar.rs", True),
    ("lib/[!abc]*.rs", "lib/bar.rs", False),
    ("lib/[!abc]*.rs", "lib/zed.rs", True),
    ("a/**/**/b", "a/x/b", True),
    ("weird(name)+.py", "weird(name)+.py", True),  # regex metacharacters are literal
    ("a.b", "aXb", False),
]


@pytest.mark.parametrize("glob,path,expected", GLOBS)
def test_glob_matches_like_minimatch_with_dot(glob: str, path: str, expected: bool) -> None:
    compiled = compile_glob(glob)
    assert compiled.matches(path) is expected
    assert minimatch(path, glob) is expected  # the independent reference agrees with the table


@pytest.mark.parametrize("glob", ["!docs/**", "!!!docs/**"])
def test_negation_is_kept_apart_from_the_pattern(glob: str) -> None:
    compiled = compile_glob(glob)
    assert compiled.negated
    assert compiled.matches("docs/a.md")


def test_every_compiled_glob_runs_on_the_linear_time_engine() -> None:
    for glob, _, _ in [*GLOBS, ("a/**/b/**/c/*x*.py", "", True)]:
        regex = compile_glob(glob).regex
        assert _re2(regex, False) is not None, (glob, regex)
        assert regex_problem(regex) is None


@pytest.mark.parametrize("hostile,reason", [
    ("*a*a*a*a*a*a*a*a*a*b", "'*'"),
    ("a/**/b/**/c/**/d/**/e", "'**'"),
    ("{a,b}{c,d}{e,f}{g,h}{i,j}", "alternatives"),
    ("x" * 400, "longer"),
    ("+(a|b)/**", "extglob"),
    ("", "empty"),
])
def test_hostile_globs_are_refused_with_a_reason(hostile: str, reason: str) -> None:
    with pytest.raises(GlobError, match=re.escape(reason)):
        compile_glob(hostile)


def test_a_glob_at_the_limits_still_matches_a_hostile_path_quickly() -> None:
    compiled = re.compile(compile_glob("**/*a*b/**/x*y*.py").regex)
    path = "/".join(["a" * 200] * 30) + "/" + "x" * 250
    started = time.perf_counter()
    assert compiled.fullmatch(path) is None
    assert time.perf_counter() - started < 1.0


# (pattern, path, owned) — gitignore rules as CODEOWNERS uses them.
CODEOWNERS = [
    ("/vllm/attention/", "vllm/attention/backends/x.py", True),
    ("/vllm/attention/", "x/vllm/attention/y.py", False),
    ("vllm/worker", "vllm/worker/gpu.py", True),  # a middle slash anchors; a folder owns its contents
    ("vllm/worker", "src/vllm/worker/gpu.py", False),
    ("*.md", "docs/deep/a.md", True),  # no slash: any depth
    ("docs/", "docs/a/b.md", True),
    ("/csrc/**", "csrc/a/b.cu", True),
    ("setup.py", "setup.py", True),
    ("setup.py", "tools/setup.py", True),
]


@pytest.mark.parametrize("pattern,path,owned", CODEOWNERS)
def test_codeowners_patterns_follow_gitignore_rules(pattern: str, path: str, owned: bool) -> None:
    assert (re.search(compile_codeowners(pattern).regex, path) is not None) is owned


@pytest.mark.parametrize("pattern,problem", [
    (r"^vllm/attention/", None),
    (r"^examples/.*(spec_decode|eagle).*\.py", None),
    (r"(?i)\bP/?D\b", None),
    (r"(a+)+$", None),  # nested, but RE2 runs it in linear time
    (r"(?=x)(a+)+$", "nests quantifiers"),  # the lookahead keeps it on Python's engine
    (r"\b(\w+\s?)+\]", "nests quantifiers"),
    (r"(?i)^(?!revert)(\w\w|\w)*\[kernel\]", "can match the same text in two ways"),
    (r"[unclosed", "invalid regular expression"),
    ("a" * 400, "longer"),
])
def test_untrusted_regexes_are_checked_before_use(pattern: str, problem: str | None) -> None:
    found = regex_problem(pattern)
    assert (found is None) if problem is None else (found is not None and problem in found)
