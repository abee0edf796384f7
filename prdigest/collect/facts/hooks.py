"""Which upstream code needs a method that only raises ``NotImplementedError``: a platform hook every subclass
must now implement, because upstream calls it on an instance of its class with no fallback.

An ``abstract`` fact whose method (now) only raises ``NotImplementedError`` is a check on its own: often a
feature only some platforms offer. It says ``needed_by`` (the calling functions) when a changed file calls the
method, with nothing guarding the call (no ``hasattr(…, "m")`` in the function, no handler of
``NotImplementedError``, ``AttributeError`` or ``Exception`` around it), on

- ``self``/``cls`` in a method of the fact's own class (the base calls its own hook), or
- a name imported from a module that declares it an instance of the class: a module-level annotation
  (``current_platform: Platform``, under ``if TYPE_CHECKING:`` too), read in the changed files after the change
  or, with ``--git``, the upstream's whole tree, the class resolved through that module's imports.

Then a subclass that does not define the method fails where upstream calls it (the match's ``breaks``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hierarchy import Hierarchy, UpstreamTree, module_reader
from prdigest.collect.facts.registries import assignments
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_and_package, module_of

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
#: Handlers that turn a missing hook into a fallback.
_FALLBACKS = frozenset({"NotImplementedError", "AttributeError", "Exception", "BaseException"})


def _imports(tree: ast.Module, module: str, package: bool) -> dict[str, str]:
    """Every name the file imports with ``from m import x`` (at any depth: a function's own import too) → ``m``."""
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            parts = module.split(".") if package else module.split(".")[:-1]
            if node.level > 1:
                parts = parts[:len(parts) - (node.level - 1)]
            source = ".".join([*parts, node.module] if node.module else parts) if node.level else node.module or ""
            for alias in node.names:
                out.setdefault(alias.asname or alias.name, source)
    return out


def _calls(tree: ast.Module, method: str) -> Iterator[tuple[ast.Call, str, FunctionNode | None, tuple[ast.Try, ...]]]:
    """Each call ``r.method(…)`` with its class (``""`` outside one), its function and the ``try`` statements whose
    body holds it."""
    Item = tuple[ast.AST, str, FunctionNode | None, tuple[ast.Try, ...]]
    stack: list[Item] = [(n, "", None, ()) for n in tree.body]
    while stack:
        node, cls, fn, tries = stack.pop()
        if isinstance(node, ast.ClassDef) and fn is None:
            cls = node.name
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn is None:
            fn = node
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == method:
            yield node, cls, fn, tries
        if isinstance(node, ast.Try):  # its handlers guard its body only
            stack.extend((child, cls, fn, (*tries, node)) for child in node.body)
            rest = [*node.orelse, *node.finalbody, *node.handlers]
            stack.extend((child, cls, fn, tries) for child in rest)
        else:
            stack.extend((child, cls, fn, tries) for child in ast.iter_child_nodes(node))


def _guarded(method: str, fn: FunctionNode | None, tries: tuple[ast.Try, ...]) -> bool:
    """Whether a fallback covers the call: ``hasattr(…, "method")`` in its function, or a ``try`` around it
    whose handler catches what a missing hook raises."""
    for node in ast.walk(fn) if fn is not None else ():
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("hasattr", "getattr") \
                and any(isinstance(a, ast.Constant) and a.value == method for a in node.args):
            return True
    for node in tries:
        for handler in node.handlers:
            types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            if handler.type is None or any(isinstance(t, (ast.Name, ast.Attribute)) and
                                           (t.id if isinstance(t, ast.Name) else t.attr) in _FALLBACKS
                                           for t in types if t is not None):
                return True
    return False


def _instance_of(classes: Hierarchy, module: str, name: str) -> tuple[str, str] | None:
    """The class ``module`` declares ``name`` an instance of (``current_platform: Platform``), resolved."""
    got = classes.module(module)
    if got is None or got[0].tree is None:
        return None
    parsed, package = got
    declared = assignments(got[0].tree).get(name)
    if declared is None or declared[2] is None:
        return None
    annotation = declared[2]
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        written = annotation.value.strip()  # ``current_platform: "Platform"``
    else:
        written = ast.unparse(annotation)
    return classes.find(module, parsed, package, written)


def with_needed_by(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None,
                   packages: Sequence[str] = ()) -> list[Change]:
    """The facts, each ``abstract`` fact of a method that only raises ``NotImplementedError`` saying which
    upstream functions call it on an instance of its class with no fallback (``needed_by``)."""
    wanted = [f for f in facts if f.kind == "abstract" and pyapi.UNIMPLEMENTED in f.detail and "." in f.symbol]
    if not wanted:
        return facts
    after = after_texts(diff)
    classes = Hierarchy(module_reader(after, tree, diff.sha))
    needed: dict[int, tuple[str, ...]] = {}
    for fact in wanted:
        found = callers(fact, after, classes, packages)
        if found:
            needed[id(fact)] = found
    return [f.model_copy(update={"needed_by": needed[id(f)]}) if id(f) in needed else f for f in facts]


def after_texts(diff: CommitDiff) -> dict[str, str]:
    """The commit's Python files after it, by path."""
    return {f.path: f.after for f in diff.files if f.after is not None and f.path.endswith(".py")}


def callers(fact: Change, after: dict[str, str], classes: Hierarchy, packages: Sequence[str] = ()) -> tuple[str, ...]:
    """The upstream functions (``m.f``, ``m.C.f``; a module for a call outside one) of the files ``after`` that call
    the fact's method on an instance of its class (``self``/``cls`` in the class, or a name a module declares an
    instance of it), with no fallback around the call."""
    owner, _, method = fact.symbol.rpartition(".")
    target = (module_of(fact.path), owner)
    found: list[str] = []
    for path, text in after.items():
        if f".{method}(" not in text or (packages and not any(path.startswith(p + "/") for p in packages)):
            continue
        parsed = pyapi.parse(text)
        if parsed is None or parsed.tree is None:
            continue
        module, package = module_and_package(path)
        imported = _imports(parsed.tree, module, package)
        for call, cls, fn, tries in _calls(parsed.tree, method):
            receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
            if not isinstance(receiver, ast.Name) or _guarded(method, fn, tries):
                continue
            if receiver.id in ("self", "cls"):
                reached = (module, cls) == target
            else:
                source = imported.get(receiver.id)
                reached = source is not None and _instance_of(classes, source, receiver.id) == target
            if reached:  # the calling function (``m.f``, ``m.C.f``), or its module for a call outside one
                found.append(".".join(p for p in (module, cls if fn else "", fn.name if fn else "") if p))
    return tuple(dict.fromkeys(found))
