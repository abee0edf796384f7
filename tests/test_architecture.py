"""The layering STYLE.md asks for: the core never imports Prefect, flows or renderers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted((ROOT / "prdigest").rglob("*.py"))
RENDERERS = sorted((ROOT / "renderers").rglob("*.py"))


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_never_imports_prefect_flows_or_renderers(path: Path) -> None:
    assert not _imports(path) & {"prefect", "flows", "renderers"}


@pytest.mark.parametrize("path", RENDERERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_renderers_never_import_prefect_or_flows(path: Path) -> None:
    assert not _imports(path) & {"prefect", "flows"}


def test_product_never_reads_the_shared_folder() -> None:
    for path in [*CORE, *RENDERERS, *(ROOT / "flows").rglob("*.py")]:
        assert "../shared" not in path.read_text(encoding="utf-8"), path
