"""Who builds a class whose constructor upstream now passes new parameters to: the class itself, named, or
whatever a variable, a factory or a registry hands over.

``Attention(args, prefix=p)`` where ``Attention`` is the module's own class (or its import of it) builds that
class: a downstream subclass ``HPUAttention(Attention)`` that only the downstream builds never sees the new
keyword. ``Scheduler = config.get_scheduler_cls(); Scheduler(…, hash_block_size=h)`` builds whatever is
configured, a downstream's scheduler too; so does ``RMSNormGated(…, activation=a)`` when a ``__new__`` in the
class's hierarchy picks the class to build (a registry of out-of-tree replacements a plugin registers into).

A constructor fact (``C.__init__``: a signature fact whose new parameters an upstream call passes, or a ``passes``
fact) whose every passing call in the changed files names the class, with no ``__new__`` or metaclass in its
hierarchy (read across modules; an upstream base that cannot be read counts as one), says
``constructed="by-name"``; prdigest.connect.impact.matchers then tells a subclass ``__init__`` to check unless
the downstream patches the class over.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hierarchy import MAX_DEPTH, Hierarchy, UpstreamTree, _upstream_unread, module_reader
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


def _passing(fact: Change, modules: dict[str, pyapi.Module]) -> tuple[set[str], dict[str, int]]:
    """The keywords whose passing a constructor fact is about, and their positions among the constructor's
    positional parameters after ``self`` (a signature fact's, where its module was read)."""
    if fact.kind == "passes":
        return {k.strip() for k in fact.detail.split(",") if k.strip()}, {}
    module = modules.get(fact.path)
    d = module.defs.get(fact.symbol) if module else None
    positional = [p.name for p in d.params if p.kind in ("posonly", "pos")] if d else []
    if positional[:1] == ["self"]:
        positional = positional[1:]
    return set(fact.passed), {n: positional.index(n) for n in fact.passed if n in positional}


def _constructor(fact: Change) -> bool:
    return fact.symbol.endswith(".__init__") and fact.symbol.count(".") == 1 and (
        fact.kind == "passes" or (fact.kind == "signature" and bool(fact.passed)))


def _calls(tree: ast.Module) -> Iterator[tuple[ast.Call, FunctionNode | None]]:
    """Every call of a module with the outermost function holding it (None at module or class level)."""
    stack: list[tuple[ast.AST, FunctionNode | None]] = [(node, None) for node in tree.body]
    while stack:
        node, func = stack.pop()
        if func is None and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            func = node
        if isinstance(node, ast.Call):
            yield node, func
        stack.extend((child, func) for child in ast.iter_child_nodes(node))


def _rebound(func: FunctionNode) -> frozenset[str]:
    """The names a function (and anything inside it) binds by anything but an import: its parameters, the
    targets of its assignments, loops, ``with … as`` and handlers."""
    names: set[str] = set()
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node is not func:
            names.add(node.name)
    return frozenset(names)


def _names_class(call: ast.Call, func: FunctionNode | None, module: pyapi.Module,
                 rebound: dict[int, frozenset[str]]) -> bool:
    """Whether a call builds the class it names: ``C(…)`` with ``C`` the module's own class or an import (at
    module level or in the function), never rebound in the function; ``m.C(…)`` with ``m`` an imported module."""
    target = call.func
    root = target.value if isinstance(target, ast.Attribute) else target
    if not isinstance(root, ast.Name):
        return False  # ``self.cls(…)``, ``registry[k](…)``, ``f()(…)``: whatever they hold
    if func is not None:
        if id(func) not in rebound:
            rebound[id(func)] = _rebound(func)
        if root.id in rebound[id(func)]:
            return False
        if any(isinstance(n, (ast.Import, ast.ImportFrom)) and any((a.asname or a.name.split(".")[0]) == root.id
                                                                    for a in n.names) for n in ast.walk(func)):
            return True
    if isinstance(target, ast.Attribute):
        return root.id in module.imported
    d = module.defs.get(root.id)
    return (d is not None and d.kind == "class") or (d is None and root.id in module.imported)


def _dispatched(classes: Hierarchy, module: str, cls: str, packages: Sequence[str]) -> bool:
    """Whether building ``module.cls`` may build another class: a ``__new__`` or a metaclass (but ``ABCMeta``) in
    it or an ancestor, or an upstream class of its hierarchy that could not be read."""
    todo, seen = [(module, cls, 0)], {(module, cls)}
    while todo:
        mod, name, depth = todo.pop()
        got = classes.module(mod)
        if got is None or name not in got[0].defs:
            return True
        parsed = got[0]
        if f"{name}.__new__" in parsed.defs or any(b.startswith("metaclass=") and not b.endswith("ABCMeta")
                                                   for b in parsed.defs[name].bases):
            return True
        for base in classes.bases(mod, name):
            if isinstance(base, str):
                if _upstream_unread([base], mod, parsed, packages):
                    return True
            elif base not in seen and depth < MAX_DEPTH:
                seen.add(base)
                todo.append((base[0], base[1], depth + 1))
    return False


def by_name(facts: list[Change], modules: dict[str, pyapi.Module], texts: dict[str, str], diff: CommitDiff,
            tree: UpstreamTree | None, packages: Sequence[str] = ()) -> list[Change]:
    """The facts, each constructor fact whose every passing call in the changed files (``modules`` by path,
    ``texts`` their source) builds the class by its own name, of a class no ``__new__`` or metaclass builds,
    marked ``constructed="by-name"``."""
    targets = [n for n, f in enumerate(facts) if _constructor(f)]
    if not targets:
        return facts
    wanted: dict[str, list[tuple[int, set[str], dict[str, int]]]] = {}
    for n in targets:
        keywords, positions = _passing(facts[n], modules)
        wanted.setdefault(facts[n].symbol.split(".")[0], []).append((n, keywords, positions))
    pattern = re.compile(r"\b(?:" + "|".join(re.escape(c) for c in sorted(wanted)) + r")\s*\(")
    named: dict[int, bool] = {}  # fact → every passing call seen so far names the class
    for path, module in modules.items():
        text = texts.get(path)
        if module.tree is None or not text or not pattern.search(text):
            continue
        rebound: dict[int, frozenset[str]] = {}
        for call, func in _calls(module.tree):
            target = call.func
            callee = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(
                target, ast.Name) else ""
            if callee not in wanted:
                continue
            given = {k.arg for k in call.keywords if k.arg}
            count = next((i for i, a in enumerate(call.args) if isinstance(a, ast.Starred)), len(call.args))
            for n, keywords, positions in wanted[callee]:
                if given & keywords or any(at < count for k, at in positions.items()):
                    named[n] = named.get(n, True) and _names_class(call, func, module, rebound)
    if not any(named.values()):
        return facts
    after = {f.path: f.after for f in diff.files if f.after is not None and f.path.endswith(".py")}
    classes = Hierarchy(module_reader(after, tree, diff.sha))
    out = list(facts)
    for n, ok in named.items():
        fact = facts[n]
        if ok and not _dispatched(classes, module_of(fact.path), fact.symbol.split(".")[0], packages):
            out[n] = fact.model_copy(update={"constructed": "by-name"})
    return out
