"""The layering docs/architecture.md describes, read from the source with ``ast``: the core (``prdigest``) imports no
terminal library, Prefect, flows or renderers; renderers import no Prefect or flows; and no module of ours
takes part in an import cycle (lazy imports inside functions count: they hide a cycle, they do not break it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prdigest", "renderers", "flows")
CORE = sorted((ROOT / "prdigest").rglob("*.py"))
RENDERERS = sorted((ROOT / "renderers").rglob("*.py"))
FLOWS = sorted((ROOT / "flows").rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in [*CORE, *RENDERERS, *FLOWS]}


def _imported(path: Path) -> set[str]:
    """Every dotted name ``path`` imports, anywhere in the file, relative imports made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
            # ``from pkg import mod`` imports the module ``pkg.mod``; ``from mod import name`` imports ``mod``.
            names |= {f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names}
    return names


def _tops(path: Path) -> set[str]:
    return {name.split(".")[0] for name in _imported(path)}


def _ours(name: str) -> str | None:
    """The module of ours that ``name`` names (its longest known prefix), if any."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def import_graph() -> dict[str, set[str]]:
    """Module → the modules of ours it imports."""
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        targets = {_ours(name) for name in _imported(path)}
        graph[module] = {t for t in targets if t and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(ROOT)))
def test_core_module_never_imports_rich_prefect_flows_or_renderers(path: Path) -> None:
    assert not _tops(path) & {"rich", "prefect", "flows", "renderers"}


@pytest.mark.parametrize("path", RENDERERS, ids=lambda p: str(p.relative_to(ROOT)))
def test_renderers_never_import_prefect_or_flows(path: Path) -> None:
    assert not _tops(path) & {"prefect", "flows"}


def test_no_import_cycle_among_our_modules() -> None:
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set(), "c": {"b"}}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
])
def test_cycle_finder_reports_each_circle(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert sorted(cycles(graph)) == expected


def test_import_graph_sees_lazy_and_relative_imports() -> None:
    graph = import_graph()
    assert "flows.cli.status_table" in graph["flows.cli.status"]  # imported inside a function
    assert "prdigest.deliver.ledger" in graph["prdigest.deliver.status"]


def test_product_never_reads_the_shared_folder() -> None:
    for path in [*CORE, *RENDERERS, *FLOWS]:
        assert "../shared" not in path.read_text(encoding="utf-8"), path


#: What only prdigest/kernel/text.py may spell out: the Slack entity escape, the control-character class, the code span.
_TEXT_SAFETY = {
    'replace("&", "&amp;")': "slack_entities",
    "\\x00-\\x08": "clean",
    "`([^`\\n]": "CODE_SPAN / code_spans",
}


@pytest.mark.parametrize("path", [*CORE, *RENDERERS, *FLOWS], ids=lambda p: str(p.relative_to(ROOT)))
def test_text_safety_is_written_once_in_prdigest_text(path: Path) -> None:
    if path == ROOT / "prdigest" / "kernel" / "text.py":
        return
    source = path.read_text(encoding="utf-8")
    found = [f"{spelled!r} (use prdigest.kernel.text.{use})" for spelled, use in _TEXT_SAFETY.items() if spelled in source]
    assert not found, found
