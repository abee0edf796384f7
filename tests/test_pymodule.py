"""The one path → module mapping: every layout the facts, the index and the match meet."""

from __future__ import annotations

import pytest

from prdigest.kernel.pymodule import is_python, module_and_package, module_of


@pytest.mark.parametrize(("path", "module", "package"), [
    ("vllm/a/b.py", "vllm.a.b", False),
    ("vllm/a/__init__.py", "vllm.a", True),
    ("src/transformers/models/llama/modeling_llama.py", "transformers.models.llama.modeling_llama", False),
    ("src/pkg/__init__.pyi", "pkg", True),
    ("pkg/stub.pyi", "pkg.stub", False),
    ("src.py", "src", False),  # a top-level module named src is not a layout
    ("src/__init__.py", "src", True),
    ("setup.py", "setup", False),
])
def test_module_of_maps_every_layout(path: str, module: str, package: bool) -> None:
    assert module_of(path) == module
    assert module_and_package(path) == (module, package)


@pytest.mark.parametrize(("path", "python"), [("a/b.py", True), ("a/b.pyi", True), ("a/b.cu", False),
                                              ("a/py", False), ("docs/x.md", False)])
def test_is_python_only_for_importable_files(path: str, python: bool) -> None:
    assert is_python(path) is python
