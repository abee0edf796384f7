"""One hostile file never stops a run (prdigest/kernel/safe_parse.py, prdigest/connect/impact/checkout.py): an
expression nested 100,000 deep in a patch, a ``setup.py`` or a string annotation, and a downstream tree with links
out of it, a FIFO, ``/dev/zero``, a 9 MB generated module or a name that is not UTF-8 — each is skipped and named,
the rest is still read, and the run completes."""

from __future__ import annotations

import ast
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prdigest.collect.facts import pins, pyapi
from prdigest.collect.facts.patches import patch_facts
from prdigest.collect.facts.surface import Surface
from prdigest.connect.impact.downstream import DownstreamSpec, load_index
from prdigest.connect.impact.step import Downstreams
from prdigest.kernel import safe_parse
from prdigest.kernel.models import PullRequest
from tests.impact_support import build_world, facts_between, readers_yaml

N = 100_000
#: Each raises RecursionError or MemoryError from ast.parse (CPython 3.11), or parses into a tree too deep to visit.
DEEP = {
    "unary": "x = " + "-" * N + "1",
    "sum": "x = " + "+".join(["1"] * N),
    "attribute": "x = a" + ".b" * N,
    "subscript": "x = a" + "[0]" * N,
    "not": "x = " + "not " * N + "y",
    "lambda": "x = " + "lambda: " * N + "1",
    "visitable-sum": "x = " + "+".join(["1"] * 1000),  # parses, yet breaks ast.NodeVisitor and ast.unparse
}


@pytest.fixture
def deadline() -> Iterator[None]:
    """A FIFO read blocks for ever: the test fails after 120 s instead of hanging."""
    def stop(signum: int, frame: object) -> None:
        raise TimeoutError("blocked (a FIFO or a device was opened)")
    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(120)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("kind", sorted(DEEP))
def test_a_deep_expression_is_refused_with_a_reason_never_raised(kind: str) -> None:
    tree, reason = safe_parse.parse(DEEP[kind])
    assert tree is None and "nested too deeply" in reason


@pytest.mark.parametrize("source, reason", [
    ("x = 1\n" * 400_000, "too large"), ("def f(:\n", "SyntaxError"), ("x = 1\0", "null bytes"),
    (b"x = '\xff'\n", "SyntaxError"),
])
def test_large_invalid_or_null_source_is_refused_with_a_reason(source: str | bytes, reason: str) -> None:
    tree, problem = safe_parse.parse(source)
    assert tree is None and reason in problem


def test_real_code_parses_as_before() -> None:
    source = Path(ast.__file__).read_text(encoding="utf-8")
    tree, problem = safe_parse.parse(source)
    assert problem == "" and ast.dump(tree) == ast.dump(ast.parse(source))  # type: ignore[arg-type]


def test_a_deep_string_annotation_names_no_type() -> None:
    for text in ("-" * N + "x", "a" + ".b" * N, "+".join(["a"] * 1000)):
        assert pyapi._type_name(ast.Constant(text)) is None
    assert pyapi._type_name(ast.Constant("Runner | None")) == "Runner"


def test_a_deep_setup_py_gives_no_pins_and_is_named(caplog: pytest.LogCaptureFixture) -> None:
    deep = "from setuptools import setup\nsetup(install_requires=['torch>=2.1'], x=" + "-" * N + "1)\n"
    with caplog.at_level(logging.WARNING):
        changes = pins.compare("setup.py", "from setuptools import setup\nsetup(install_requires=['torch'])\n",
                               deep)
    assert all(c.kind == "dependency" for c in changes)
    assert any("setup.py" in r.getMessage() and "nested too deeply" in r.getMessage() for r in caplog.records)


def test_a_deeply_nested_pyproject_gives_no_pins_and_is_named(caplog: pytest.LogCaptureFixture) -> None:
    deep = "[project]\ndependencies = ['torch']\nx = " + "[" * N + "]" * N + "\n"
    with caplog.at_level(logging.WARNING):
        changes = pins.compare("pyproject.toml", "[project]\ndependencies = ['torch']\n", deep)
    assert all(c.kind == "dependency" for c in changes)
    assert any("pyproject.toml" in r.getMessage() for r in caplog.records)


def test_a_deep_expression_in_a_patch_leaves_the_other_facts() -> None:
    patch = ("@@ -1,2 +1,2 @@\n-def foo(a):\n+def foo(a=" + "-" * N + "1):\n"
             "-def bar(a):\n+def bar(a, b):\n")
    pr = PullRequest.model_validate({
        "number": 1, "url": "https://github.com/acme/pkg/pull/1", "merged_at": "2026-11-17T10:00:00Z",
        "files": [{"path": "pkg/api.py", "additions": 2, "deletions": 2, "patch": patch}]})
    facts = patch_facts(pr, Surface(packages=("pkg",)))
    assert any(f.kind == "signature" and f.symbol == "bar" for f in facts)


def test_git_facts_skip_and_name_a_deep_module_and_keep_the_others(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    before = {"pkg/__init__.py": "", "pkg/a.py": "def f(x):\n    return x\n", "pkg/deep.py": "X = 1\n",
              "pkg/ann.py": "def g(r):\n    return r\n", "setup.py": "setup(install_requires=['torch'])\n"}
    after = {"pkg/a.py": "def f(x, y):\n    return x\n", "pkg/deep.py": DEEP["sum"] + "\n",
             "pkg/ann.py": f"class R:\n    def run(self, r: '{'-' * N}x'):\n        return r.go()\n",
             "setup.py": "setup(install_requires=['torch'], x=" + "-" * N + "1)\n"}
    with caplog.at_level(logging.WARNING):
        facts = facts_between(tmp_path, before, after, ("pkg",))
    assert any(f.kind == "signature" and f.symbol == "f" and f.path == "pkg/a.py" for f in facts)
    messages = [r.getMessage() for r in caplog.records]
    assert any("pkg/deep.py" in m and "nested too deeply" in m for m in messages), messages
    assert any("setup.py" in m and "nested too deeply" in m for m in messages), messages


def _hostile_tree(ds: Path, outside: Path) -> None:
    """Hostile files beside the downstream's real modules (``ds`` is its package folder)."""
    outside.write_text("from vllm.secret import LEAK\n", encoding="utf-8")
    (ds / "etc").symlink_to("/etc")
    (ds / "passwd.py").symlink_to("/etc/passwd")
    (ds / "outside.py").symlink_to(outside)
    (ds / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(ds / "fifo.py")
    (ds / "big.py").write_text("# generated\n" + "X = [" + "1, " * 3_000_000 + "]\n", encoding="utf-8")
    (ds / "deep.py").write_text(DEEP["unary"] + "\n", encoding="utf-8")
    (ds / "deeper.py").write_text(DEEP["visitable-sum"] + "\n", encoding="utf-8")
    (ds / "inside.py").symlink_to(ds / "patch.py")  # a link within the tree is read
    os.makedirs(ds / "loop")
    (ds / "loop" / "again").symlink_to(ds)  # never followed
    (Path(os.fsdecode(bytes(ds) + b"/bad\xffname.py"))).write_text("import vllm.bad\n", encoding="utf-8")


def test_the_index_skips_and_names_each_hostile_file_and_reads_the_rest(tmp_path: Path, deadline: None) -> None:
    world = build_world(tmp_path / "world")
    _hostile_tree(world.downstream / "ds", tmp_path / "outside.py")
    index = load_index(DownstreamSpec("ascend", path=str(world.downstream), packages=("ds",)), ("vllm",))
    errors = "\n".join(index.errors)
    for name, reason in [("ds/passwd.py", "out of the tree"), ("ds/outside.py", "out of the tree"),
                         ("ds/zero.py", "out of the tree"), ("ds/fifo.py", "not a regular file"),
                         ("ds/big.py", "larger than"), ("ds/deep.py", "nested too deeply"),
                         ("ds/deeper.py", "nested too deeply"), ("ds/bad\ufffdname.py", "not UTF-8")]:
        assert any(e.startswith(name + ": ") and reason in e for e in index.errors), (name, errors)
    symbols = {u.symbol for u in index.uses}
    assert "vllm.secret.LEAK" not in symbols and not any(u.path.startswith("ds/etc") for u in index.uses)
    assert any(u.path == "ds/inside.py" for u in index.uses)  # the link inside the tree, read
    assert any(u.path == "ds/patch.py" for u in index.uses)  # the downstream's own modules, read


def test_one_downstreams_tree_never_fails_the_others(tmp_path: Path, deadline: None) -> None:
    world = build_world(tmp_path / "world")
    hostile = tmp_path / "hostile"
    (hostile / "ds").mkdir(parents=True)
    (hostile / "ds" / "__init__.py").write_text("", encoding="utf-8")
    # One readable module uses the upstream (a downstream none of whose files does is refused as misconfigured,
    # tests/test_downstream_refused.py); the hostile files around it are skipped and named.
    (hostile / "ds" / "ok.py").write_text("import vllm\n", encoding="utf-8")
    (Path(os.fsdecode(bytes(hostile) + b"/ds/\xff.py"))).write_text("import vllm\n", encoding="utf-8")
    os.mkfifo(hostile / "ds" / "wait.py")
    downstreams = Downstreams([DownstreamSpec("hostile", path=str(hostile), packages=("ds",)),
                               DownstreamSpec("ascend", path=str(world.downstream), packages=("ds",))], ("vllm",))
    indexes = downstreams.indexes()
    assert set(indexes) == {"hostile", "ascend"} and indexes["ascend"].uses
    assert len(indexes["hostile"].errors) == 2


def test_a_run_with_a_hostile_downstream_completes(tmp_path: Path, deadline: None) -> None:
    from flows.cli import app

    world = build_world(tmp_path / "world")
    _hostile_tree(world.downstream / "ds", tmp_path / "outside.py")
    readers = readers_yaml(world, tmp_path / "readers.yaml", git_url=False)
    result = CliRunner().invoke(app, ["run", "--source", f"jsonl:{world.jsonl}", "--readers", str(readers),
                                      "--git", str(world.upstream), "--out", str(tmp_path / "out"), "--language",
                                      "en", "--state", str(tmp_path / "state.sqlite")])
    assert result.exit_code == 0, result.output
    digest = (tmp_path / "out" / "digest.json").read_text(encoding="utf-8")
    assert '"downstream": "ascend"' in digest  # the impact on the real modules is still there


def test_rules_init_from_a_checkout_skips_a_fifo_and_a_device(tmp_path: Path, deadline: None) -> None:
    from prdigest.classify.proposal.repo import from_checkout

    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\n", encoding="utf-8")
    os.mkfifo(root / "pkg" / "wait.py")
    snapshot = from_checkout(root, "acme/pkg")
    assert [f.path for f in snapshot.files] == ["pkg/a.py"]
