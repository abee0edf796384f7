"""A new method upstream now calls on instances of its class (a platform hook: ``current_platform.h(…)``) and that
sets attributes of the objects it is handed (``cache_config.block_size = …``): a downstream subclass that does not
define it runs upstream's default there, which sets again what the subclass's own overrides of the class's other
methods set or read (vLLM #35122: ``Platform.update_block_size_for_backend`` picks the block size after
``check_and_update_config``, where each plugin platform had chosen its own).

The ``added`` fact then says ``needed_by`` (the upstream functions calling it: prdigest.collect.facts.hooks),
``sets`` (the attributes its body assigns on objects named after their class, receivers of two words or more as
prdigest.kernel.typednames reads them: ``cache_config.block_size``, never ``self.x``, the instance's own) and
``moved_from``: the overrides of the class's other methods in upstream's own subclasses that set one of them
before the commit (``CudaPlatform.check_and_update_config``), the evidence that the work moved into the hook. All
three, or none. The match flags a downstream subclass whose overrides of those methods set or read one of them
(prdigest.connect.impact.matchers).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from prdigest.collect.facts import hooks, pyapi
from prdigest.collect.facts.hierarchy import Hierarchy, UpstreamTree, module_reader
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of
from prdigest.kernel.typednames import is_typed


def _method(tree: ast.Module, symbol: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The method ``C.m`` (``A.B.m`` for a nested class) of a module's tree."""
    *classes, name = symbol.split(".")
    body: list[ast.stmt] = tree.body
    for cls in classes:
        found = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == cls), None)
        if found is None:
            return None
        body = found.body
    return next((n for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name), None)


def sets(method: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...]:
    """The attributes a method assigns on an object named after its class (``cache_config.block_size = …``, also
    through a longer chain: ``vllm_config.cache_config.block_size``), sorted; a nested function's are its own."""
    found: set[str] = set()
    for node in pyapi.own_nodes(method):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
        for target in targets:
            for t in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                if isinstance(t, ast.Attribute) and not t.attr.startswith("__"):
                    owner = t.value.attr if isinstance(t.value, ast.Attribute) else \
                        t.value.id if isinstance(t.value, ast.Name) else ""
                    if is_typed(owner):
                        found.add(f"{owner}.{t.attr}")
    return tuple(sorted(found))


def _moved_from(fact: Change, written: tuple[str, ...], diff: CommitDiff, methods: set[str]) -> tuple[str, ...]:
    """The upstream subclasses' overrides of the hook's class's other methods (``methods``) that set, before the
    commit, what the hook now sets (``vllm.platforms.cuda.CudaPlatform.check_and_update_config``): read in the
    commit's changed files, the base by its last name."""
    cls = fact.symbol.rpartition(".")[0].rpartition(".")[2]
    found: list[str] = []
    for f in diff.files:
        if not f.before or not f.before_path.endswith(".py") or cls not in f.before:
            continue
        old = pyapi.parse(f.before)
        if old is None or old.tree is None:
            continue
        for node in ast.walk(old.tree):
            if not isinstance(node, ast.ClassDef) or not any(
                    (b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "") == cls
                    for b in node.bases):
                continue
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.name in methods \
                        and set(sets(method)) & set(written):
                    found.append(f"{module_of(f.before_path)}.{node.name}.{method.name}")
    return tuple(dict.fromkeys(found))


def with_sets(facts: list[Change], parsed: dict[str, pyapi.Module], diff: CommitDiff, tree: UpstreamTree | None,
              packages: Sequence[str] = ()) -> list[Change]:
    """The facts, each ``added`` public method that upstream calls on an instance of its class, and that sets what
    upstream's own subclasses set before in their overrides of the class's other methods, saying ``sets``,
    ``needed_by`` and ``moved_from`` (``parsed``: the commit's modules after it, by path)."""
    found: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for fact in facts:
        module = parsed.get(fact.path)
        if fact.kind != "added" or "." not in fact.symbol or not fact.public or module is None or module.tree is None:
            continue
        method = _method(module.tree, fact.symbol)
        written = sets(method) if method is not None else ()
        owner = fact.symbol.rpartition(".")[0]
        others = {d.leaf for d in module.defs.values() if d.parent == owner and d.leaf != method.name} \
            if method is not None else set()
        moved = _moved_from(fact, written, diff, others) if written else ()
        if moved:
            found[id(fact)] = (written, moved)
    if not found:
        return facts
    after = hooks.after_texts(diff)
    classes = Hierarchy(module_reader(after, tree, diff.sha))
    out: list[Change] = []
    for fact in facts:
        called = hooks.callers(fact, after, classes, packages) if id(fact) in found else ()
        if called:
            written, moved = found[id(fact)]
            fact = fact.model_copy(update={"sets": written, "needed_by": called, "moved_from": moved})
        out.append(fact)
    return out
