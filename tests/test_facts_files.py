"""Facts of one file, before and after: a table of tricky Python, C++/CUDA and pin files, hostile ones too."""

from __future__ import annotations

import textwrap

import pytest

from prdigest.collect.facts import Surface, commit_facts, is_breaking
from prdigest.collect.facts.hierarchy import METHOD_GONE_CHANGED
from prdigest.collect.facts.pyapi import parse, signature_detail
from prdigest.collect.git import CommitDiff, FileDiff
from prdigest.kernel.factlines import MAX_SHAPE, code


def _facts(path: str, before: str | None, after: str | None, *, status: str = "M", old_path: str | None = None,
           surface: Surface = Surface()) -> set[tuple[str, str, str]]:
    text = {k: textwrap.dedent(v).lstrip("\n") if v is not None else None for k, v in (("b", before), ("a", after))}
    diff = CommitDiff("0" * 40, None, (FileDiff(status, path, old_path, text["b"], text["a"]),))  # type: ignore[arg-type]
    return {(c.kind, c.symbol, c.detail) for c in commit_facts(diff, surface)}


@pytest.mark.parametrize("before, after, detail", [
    ("def f(a, b=1): ...", "def f(a, b=2): ...", "b=1→2"),
    ("def f(a, b): ...", "def f(b, a): ...", "reordered"),
    ("def f(a, dtype=None): ...", "def f(a): ...", "-dtype"),
    ("def f(a, x): ...", "def f(a, y): ...", "x→y"),
    ("def f(a, n=1): ...", "def f(a, *, n=1): ...", "n: positional→keyword-only"),
    ("def f(a: int) -> int: ...", "def f(a: 'int | None') -> str: ...", ""),  # annotations are not signatures
    ("def f(a, b=None): ...", "def f(a, b): ...", "b=None→required"),
    ("def f(x): ...", "def f(x, eps=1e-06): ...", "+eps=1e-06"),  # added with a default: callers still work
])
def test_signature_details(before: str, after: str, detail: str) -> None:
    b, a = parse(before), parse(after)
    assert b is not None and a is not None
    assert signature_detail(b.defs["f"].params, a.defs["f"].params) == detail


@pytest.mark.parametrize("before, after, expected", [
    # a removed class is one fact, not one per method
    ("class A:\n    def m(self, x): ...\n    def n(self): ...\n", "", {("removed", "A", "")}),
    # an added private helper is no fact; a removed one is (a caller may break)
    ("", "def _helper(x): ...\n", set()),
    ("def _helper(x): ...\ndef keep(): ...\n", "def keep(): ...\n", {("removed", "_helper", "")}),
    # a rename needs the same shape; (self) alone is too common to pair on
    ("class A:\n    def old(self): return 1\n", "class A:\n    def new(self): return 2\n",
     # no class of the changed files keeps a method ``old``: a call ``obj.old()`` is matched by name (hierarchy.py)
     {("removed", "A.old", METHOD_GONE_CHANGED), ("added", "A.new", "")}),
    # conditional definitions and try/except imports count once
    ("try:\n    import fast\nexcept ImportError:\n    fast = None\n", "try:\n    import fast\nexcept ImportError:\n"
     "    fast = None\nif fast:\n    def go(x): ...\nelse:\n    def go(x, y): ...\n", {("added", "go", "")}),
    # a name removed but imported again from elsewhere is a re-export, not a removal
    ("def util(x): return x\n", "from pkg.new_home import util\n", {("moved", "util", "re-exported")}),
    # TypeVars and loggers are plumbing
    ("", "import logging\nT = TypeVar('T')\nlogger = logging.getLogger(__name__)\nLIMIT = 1024 * 1024\n",
     {("added", "LIMIT", "")}),
    # a property's setter is the same attribute
    ("class A:\n    @property\n    def x(self): ...\n", "class A:\n    @property\n    def x(self): ...\n"
     "    @x.setter\n    def x(self, v): ...\n", set()),
])
def test_python_table(before: str, after: str, expected: set[tuple[str, str, str]]) -> None:
    assert _facts("pkg/mod.py", before or None, after or None, status="M" if before and after else
                  ("A" if after else "D")) - {("file-deleted", "pkg/mod.py", "")} == expected


@pytest.mark.parametrize("text", [
    "def broken(:\n",  # not Python
    "\x00\x01binary",
    "def f(" + "a, " * 5000 + "b): ...\n",  # very long signature: kept, cut in the fact
    "x = " + "(" * 200 + ")" * 200 + "\n",  # deep nesting
])
def test_hostile_python_yields_no_invented_fact(text: str) -> None:
    facts = _facts("pkg/mod.py", "def ok(): ...\n", text)
    names = {symbol for _, symbol, _ in facts}
    assert names <= {"ok", "f", "x"}
    for kind, _, _ in facts:
        assert kind in ("removed", "added", "signature")


def test_a_long_signature_is_kept_whole_in_the_fact_and_cut_only_where_shown() -> None:
    # the match reads parameters back from the fact: a cut signature read as "no change" (issue 36)
    diff = CommitDiff("0" * 40, None, (FileDiff("A", "pkg/m.py", None, None,
                                                "def f(" + "".join(f"a{i}, " for i in range(5000)) + "b): ...\n"),))
    (fact,) = commit_facts(diff, Surface())
    assert fact.kind == "added" and fact.after.endswith("a4999, b)") and "…" not in fact.after
    assert len(code(fact.after)) <= MAX_SHAPE + 2


def test_tests_docs_and_examples_are_not_api() -> None:
    assert _facts("tests/test_x.py", "def test_a(): ...\ndef helper(): ...\n", "def helper(): ...\n") == {
        ("tests", "test_a", "removed")}
    assert _facts("examples/run.py", None, "def main(): ...\n", status="A") == set()
    assert _facts("docs/conf.py", "x = 1\n", None, status="D") == {("file-deleted", "docs/conf.py", "")}


def test_packages_limit_the_api_to_the_declared_ones() -> None:
    surface = Surface(packages=("vllm",))
    assert _facts("vllm/a.py", None, "def f(x): ...\n", status="A", surface=surface) == {("added", "f", "")}
    assert _facts("tools/a.py", None, "def f(x): ...\n", status="A", surface=surface) == set()


@pytest.mark.parametrize("before, after, expected", [
    ("void f(int a);\n", "void f(int a, int b);\n", {("signature", "f", "+b")}),
    ("namespace vllm {\nvoid g(float x) {}\n}\n", "namespace vllm {\nvoid g(double x) {}\n}\n",
     {("signature", "vllm::g", "x: float x→double x")}),
    ("namespace {\nvoid hidden(int a) {}\n}\n", "", {("removed", "hidden", "removed")}),
    ("", "template <typename T>\n__global__ void k(T* x, int n) {}\n", {("kernel", "k", "added")}),
    ("", "static void local_helper(int a) {}\n", set()),  # a new static helper is private: no fact
    ("TORCH_LIBRARY(_C, ops) {\n  ops.def(\"rms_norm(Tensor! out, Tensor input) -> ()\");\n}\n",
     "TORCH_LIBRARY(_C, ops) {\n  ops.def(\n    \"rms_norm(Tensor! out, Tensor input, float eps) -> ()\");\n}\n",
     {("signature", "op:rms_norm", "+eps")}),
    ("#ifdef USE_ROCM\nvoid r(int a);\n#endif\n", "#ifdef USE_ROCM\nvoid r(int a, int b);\n#endif\n",
     {("signature", "r", "+b")}),
    ("void f(int a) { if (", "void f(int a) { if (", set()),  # broken C++ on both sides: nothing changed
])
def test_cpp_table(before: str, after: str, expected: set[tuple[str, str, str]]) -> None:
    assert _facts("csrc/ops.cu", before or None, after or None, status="M" if before and after else
                  ("A" if after else "D")) - {("file-deleted", "csrc/ops.cu", "")} == expected


@pytest.mark.parametrize("path, before, after, expected", [
    ("requirements/cuda.txt", "torch==2.5.0\n-r common.txt\n", "torch == 2.6.0\n-r common.txt\n",
     {("dependency", "torch", "changed")}),
    ("requirements.txt", "Flash_Attn>=2.5  # comment\n", "flash-attn>=2.5\n", set()),  # same package, same pin
    # Lines that are not requirements ("new line 0": a word, then prose) name no package; a real one beside them does
    ("requirements/common.txt", "old line 0\ntorch==2.5\n", "new line 0\nnew line 1\ntorch==2.6\n",
     {("dependency", "torch", "changed")}),
    ("pyproject.toml", "[project]\ndependencies = ['numpy>=1.26']\n",
     "[project]\ndependencies = ['numpy>=2']\n[project.optional-dependencies]\nx = ['rich']\n",
     {("dependency", "numpy", "changed"), ("dependency", "rich", "added")}),
    ("pyproject.toml", "[project\nbroken", "[project]\ndependencies = ['numpy']\n", {("dependency", "numpy", "added")}),
    ("setup.py", "setup(install_requires=['a>=1', 'b'])\n", "setup(install_requires=['a>=2'])\n",
     {("dependency", "a", "changed"), ("dependency", "b", "removed")}),
])
def test_pins_table(path: str, before: str, after: str, expected: set[tuple[str, str, str]]) -> None:
    facts = _facts(path, before, after)
    assert {f for f in facts if f[0] == "dependency"} == expected


def test_a_file_too_large_or_binary_is_listed_without_invented_facts() -> None:
    diff = CommitDiff("0" * 40, None, (FileDiff("D", "pkg/big.py", None, None, None, skipped="too large"),
                                       FileDiff("M", "assets/logo.png", None, None, None, skipped="binary")))
    assert {(c.kind, c.symbol) for c in commit_facts(diff, Surface())} == {("file-deleted", "pkg/big.py")}


def test_a_re_export_does_not_break_callers_and_a_removal_does() -> None:
    moved = CommitDiff("0" * 40, None, (FileDiff("M", "pkg/a.py", None, "def util(x): ...\n",
                                                 "from pkg.b import util\n"),))
    removed = CommitDiff("0" * 40, None, (FileDiff("M", "pkg/a.py", None, "def util(x): ...\n", "X = 1\n"),))
    assert not is_breaking(commit_facts(moved, Surface()))
    assert is_breaking(commit_facts(removed, Surface()))


def test_a_renamed_config_class_moves_its_fields_with_it() -> None:
    surface = Surface(config_files=(r"^pkg/",))
    before = "from dataclasses import dataclass\n\n@dataclass\nclass OldConfig:\n    size: int = 4\n    name: str = 'x'\n"
    after = before.replace("OldConfig", "NewConfig")
    assert _facts("pkg/cfg.py", before, after, surface=surface) == {("renamed", "NewConfig", "OldConfig→NewConfig")}
    grown = after.replace("    name: str = 'x'\n", "    name: str = 'x'\n    extra: bool = False\n")
    assert ("config", "NewConfig.extra", "added") in _facts("pkg/cfg.py", after, grown, surface=surface)


@pytest.mark.parametrize("before, after, expected", [
    # aliases of something defined elsewhere are not definitions
    ("import torch\n", "import torch\naten = torch.ops.aten\nOld = torch.Tensor\n", set()),
    # of the dunders only a constructor or a call is API
    ("class A:\n    def __repr__(self): ...\n    def __post_init__(self): ...\n", "class A:\n    pass\n", set()),
    ("class A:\n    def __init__(self, x): ...\n", "class A:\n    def __init__(self, x, y): ...\n",
     {("signature", "A.__init__", "+y")}),
])
def test_aliases_and_dunders(before: str, after: str, expected: set[tuple[str, str, str]]) -> None:
    assert _facts("pkg/mod.py", before, after) == expected
