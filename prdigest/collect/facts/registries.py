"""Two obligations no name's signature shows: a new module-level registry, and a module-level container whose
kind changed.

``registry``: a module-level name the change adds whose value is a dict, list, set or tuple literal of classes
(decided from the code: every entry, or every item of a dict's list values, is a CamelCase name the module
imports or defines as a class, at least one of them resolved). Its ``siblings`` are the module's other
registries of the same kind (the same container and keys of the same enum or of strings, a listed class or an
annotation's class in common) that one of its functions uses together with the new one: a downstream that
enters one of them (``_KERNELS[PlatformEnum.OOT] = [...]``, ``_CLASSES.add(Mine)``) most likely has to enter the
new one too. ``needed_by`` names the module's functions that
look it up with ``[key]`` (no default), directly or through a parameter it is passed as: a key missing there is a
``KeyError``. ``after`` is its keys as written (a dict's), ``listed`` its classes.

``retyped``: a module-level name both versions define whose container kind changed (``set`` → ``tuple``), read
from its literal (``{…}``, ``(…)``, ``set()``) or else its annotation's head (``set[…]``): a downstream that calls a
method the new kind lacks (``.add()`` on a tuple) breaks, decided by the builtin types themselves.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from prdigest.collect.facts import pyapi
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_and_package

#: The container kinds a literal, a constructor call or an annotation's head names.
CONTAINERS = ("dict", "list", "set", "tuple", "frozenset")
#: An annotation's head → the container kind it says (``Set[…]`` and ``set[…]`` are one).
ANNOTATED = {"Dict": "dict", "List": "list", "Set": "set", "Tuple": "tuple", "FrozenSet": "frozenset",
              "dict": "dict", "list": "list", "set": "set", "tuple": "tuple", "frozenset": "frozenset"}
_LITERALS: dict[type[ast.AST], str] = {ast.Dict: "dict", ast.DictComp: "dict", ast.List: "list",
                                       ast.ListComp: "list", ast.Set: "set", ast.SetComp: "set", ast.Tuple: "tuple"}
#: A class's name as written: CamelCase, with a lower-case letter (``PlatformEnum.CUDA`` is a member, not a class).
_CLASS_NAME = re.compile(r"_?[A-Z][A-Za-z0-9_]*[a-z][A-Za-z0-9_]*")
_EMPTY = ast.Module(body=[], type_ignores=[])
#: Names of an annotation that say the container, not the kind of thing it holds.
_GENERIC = frozenset({*ANNOTATED, "type", "Type", "Any", "Callable", "Sequence", "Mapping", "Iterable"})


def missing(kind: str, method: str) -> bool:
    """Whether the builtin container ``kind`` lacks ``method`` (``tuple`` has no ``add``): asked of Python itself."""
    holder = getattr(builtins, kind, None)
    return isinstance(holder, type) and not hasattr(holder, method)


def assignments(tree: ast.Module) -> dict[str, tuple[int, ast.expr | None, ast.expr | None]]:
    """Module-level names (under ``if``/``try`` too) → (line, value, annotation) of their first assignment."""
    found: dict[str, tuple[int, ast.expr | None, ast.expr | None]] = {}
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            annotation = node.annotation if isinstance(node, ast.AnnAssign) else None
            for target in targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, (node.lineno, node.value, annotation))
        elif isinstance(node, (ast.If, ast.Try)):
            parts = [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
            parts += [s for h in getattr(node, "handlers", []) for s in h.body]
            stack.extend(reversed(parts))
    return found


def container(value: ast.expr | None, annotation: ast.expr | None) -> str:
    """The container kind a name holds: its literal's or constructor call's, else its annotation's head; ""."""
    if value is not None:
        kind = _LITERALS.get(type(value))
        if kind:
            return kind
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in CONTAINERS:
            return value.func.id
    head = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if isinstance(head, ast.Attribute):
        return ANNOTATED.get(head.attr, "")
    return ANNOTATED.get(head.id, "") if isinstance(head, ast.Name) else ""


def retyped_facts(before: pyapi.Module | None, after: pyapi.Module | None, path: str) -> list[Change]:
    """``retyped`` facts: module-level names whose container kind changed between the two versions."""
    if before is None or after is None or before.tree is None or after.tree is None:
        return []
    old, new = assignments(before.tree), assignments(after.tree)
    facts: list[Change] = []
    for name, (line, value, annotation) in new.items():
        if name not in old:
            continue
        was, now = container(*old[name][1:]), container(value, annotation)
        if was and now and was != now:
            facts.append(Change(kind="retyped", symbol=name, path=path, line=line, before=was, after=now,
                                detail=f"{was} → {now} (its literal, or its annotation)",
                                public=not name.startswith("_")))
    return facts


def _dotted(node: ast.expr) -> str:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def _entries(value: ast.expr) -> tuple[list[ast.expr], list[ast.expr]] | None:
    """A registry literal's (keys, class entries); None when it is no registry literal."""
    if isinstance(value, ast.Dict):
        if any(k is None for k in value.keys):
            return None  # ``{**other}``: its entries cannot be read
        items: list[ast.expr] = []
        for v in value.values:
            items += v.elts if isinstance(v, (ast.List, ast.Tuple, ast.Set)) else [v]
        return [k for k in value.keys if k is not None], items
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [], list(value.elts)
    return None


class _Registries:
    """The registries of one module (after the change) and what each lists."""

    def __init__(self, module: pyapi.Module, path: str) -> None:
        self.module = module
        self.name, self.package = module_and_package(path)
        self.found: dict[str, tuple[int, str, tuple[str, ...], tuple[str, ...], frozenset[str]]] = {}
        for name, (line, value, annotation) in assignments(module.tree or _EMPTY).items():
            read = self._read(value, annotation)
            if read is not None:
                self.found[name] = (line, *read)

    def _class(self, written: str) -> str | None:
        """A class's dotted name from how the module writes it, or None when it names no class it can see."""
        head, _, rest = written.partition(".")
        d = self.module.defs.get(head)
        if not rest and d is not None and d.kind == "class":
            return f"{self.name}.{head}"
        source = self.module.imported.get(head)
        if source is None:
            return None
        if source.startswith("."):
            parts = self.name.split(".") if self.package else self.name.split(".")[:-1]
            level = len(source) - len(source.lstrip("."))
            parts = parts[:len(parts) - (level - 1)] if level > 1 else parts
            source = ".".join([*parts, source[level:]] if source[level:] else parts)
        if source == head or source.startswith(head + "."):
            return written  # ``import a.b``, written ``a.b.C``
        if rest and source.rpartition(".")[2] == head:
            return f"{source}.{rest}"  # ``import a.b as b``, written ``b.C``
        return f"{source}.{written}"  # ``from a import C`` or ``from a import b``, written ``C`` or ``b.C``

    def _read(self, value: ast.expr | None, annotation: ast.expr | None
              ) -> tuple[str, tuple[str, ...], tuple[str, ...], frozenset[str]] | None:
        """(container, keys as written, classes listed, the annotation's class names) of a registry, else None."""
        got = _entries(value) if value is not None else None
        if got is None:
            return None
        keys, items = got
        written = [_dotted(i) for i in items]
        if not written or not all(w and _CLASS_NAME.fullmatch(w.rpartition(".")[2]) for w in written):
            return None
        classes = tuple(dict.fromkeys(c for w in written if (c := self._class(w))))
        if not classes:
            return None
        key_text = tuple(_dotted(k) or (repr(k.value) if isinstance(k, ast.Constant) else "") for k in keys)
        named = pyapi.type_names(ast.unparse(annotation)) - _GENERIC if annotation is not None else frozenset()
        return container(value, None), key_text, classes, named

    def siblings(self, name: str) -> tuple[str, ...]:
        """The module's other registries of the same container, keys of the same kind and a class in common, that
        a function of the module uses together with ``name`` (the new one is read on a path beside theirs)."""
        _, kind, keys, classes, named = self.found[name]
        together = _used_with(self.module.tree or _EMPTY, name)
        out = []
        for other, (_, kind2, keys2, classes2, named2) in self.found.items():
            if other == name or other not in together or kind2 != kind \
                    or {_key_kind(k) for k in keys} != {_key_kind(k) for k in keys2}:
                continue
            if set(classes) & set(classes2) or named & named2 - {_key_kind(k) for k in keys}:
                out.append(other)
        return tuple(sorted(out))


def _used_with(tree: ast.Module, name: str) -> set[str]:
    """The names that a function of the module which uses ``name`` uses too."""
    out: set[str] = set()
    for _, fn in _functions(tree):
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        if name in used:
            out |= used
    return out


def _key_kind(key: str) -> str:
    """``PlatformEnum.CUDA`` → ``PlatformEnum``; a string key → ``str``."""
    return key.rpartition(".")[0] if "." in key else ("str" if key[:1] in "'\"" else key)


def _functions(tree: ast.Module) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Module-level functions and class methods, by name (``f``, ``C.m``)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    yield f"{node.name}.{item.name}", item


_GUARDS = frozenset({"KeyError", "LookupError", "Exception", "BaseException"})


def _looked_up(fn: ast.AST, name: str) -> bool:
    """Whether the function reads ``name[key]`` with a key that is not a constant (a runtime key: a platform, a
    type) and nothing guards it: no ``key in name`` test (a registration: ``if k not in R: R[k] = []``), no
    handler of ``KeyError``."""
    nodes = list(ast.walk(fn))
    for n in nodes:
        if isinstance(n, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn)) for op in n.ops) \
                and any(isinstance(c, ast.Name) and c.id == name for c in n.comparators):
            return False
        if isinstance(n, ast.ExceptHandler) and (n.type is None or any(
                _dotted(t).rpartition(".")[2] in _GUARDS
                for t in (n.type.elts if isinstance(n.type, ast.Tuple) else [n.type]))):
            return False
    return any(isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Load) and isinstance(n.value, ast.Name)
               and n.value.id == name and not isinstance(n.slice, ast.Constant) for n in nodes)


def _needed_by(tree: ast.Module, module: str, name: str) -> tuple[str, ...]:
    """The module's functions that look ``name`` up with ``[key]``: themselves, or a function of the module it is
    passed to (positionally or by keyword) that does so with that parameter."""
    functions = dict(_functions(tree))
    out: list[str] = []
    for qual, fn in functions.items():
        if _looked_up(fn, name):
            out.append(qual)
    for call in ast.walk(tree):
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
            continue
        callee = functions.get(call.func.id)
        if callee is None:
            continue
        params = [a.arg for a in (*callee.args.posonlyargs, *callee.args.args, *callee.args.kwonlyargs)]
        passed = [params[i] for i, a in enumerate(call.args) if i < len(params)
                  and isinstance(a, ast.Name) and a.id == name]
        passed += [k.arg for k in call.keywords if k.arg and isinstance(k.value, ast.Name) and k.value.id == name]
        if any(_looked_up(callee, p) for p in passed):
            out.append(call.func.id)
    return tuple(f"{module}.{q}" for q in dict.fromkeys(out))


def registry_facts(before: pyapi.Module | None, after: pyapi.Module | None, path: str) -> list[Change]:
    """``registry`` facts: the registries a module gains (a name new at module level whose value lists classes)."""
    if after is None or after.tree is None:
        return []
    old = assignments(before.tree) if before is not None and before.tree is not None else {}
    registries = _Registries(after, path)
    facts: list[Change] = []
    for name, (line, kind, keys, classes, _) in registries.found.items():
        if name in old:
            continue
        siblings = registries.siblings(name)
        needed = _needed_by(after.tree, registries.name, name)
        said = f"a {kind} of {len(classes)} classes" + (f" keyed by {', '.join(keys)}" if keys else "")
        facts.append(Change(
            kind="registry", symbol=name, path=path, line=line, after=", ".join(keys),
            detail=said + (f"; beside {', '.join(siblings)}" if siblings else "")
            + (f"; looked up with [key] in {', '.join(n.rpartition('.')[2] for n in needed)}" if needed else ""),
            public=not name.startswith("_"), needed_by=needed, siblings=siblings, listed=classes))
    return facts
