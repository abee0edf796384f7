"""The public Python API of one module, read statically with ``ast`` (nothing is imported or run), and what
changed in it between two versions of the file: names added, removed and renamed, signatures, base classes,
abstract methods, bodies; Triton kernels (``@triton.jit``) as kernel facts.

A module's shape is its module-level classes, functions and names and each class's methods (nested classes
too). Everything in a fact is read from the two texts: a symbol is a name defined there, a signature is the
parameters written there.
"""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from prdigest.kernel import safe_parse
from prdigest.kernel.models import UPSTREAM_PASSES, Change, ChangeKind

DefKind = Literal["class", "function", "method", "name"]
#: Module-level names that are plumbing, never API.
_PLUMBING = frozenset({"__all__", "__version__", "logger", "log", "_logger", "LOGGER", "__doc__", "__author__"})
_SIGNATURE_CHARS = 240
_CALLED_DUNDERS = frozenset({"__init__", "__new__", "__call__"})


@dataclass(frozen=True)
class Param:
    name: str
    kind: Literal["posonly", "pos", "var", "kw", "varkw"]
    default: str | None = None

    def text(self) -> str:
        star = {"var": "*", "varkw": "**"}.get(self.kind, "")
        return f"{star}{self.name}" + (f"={self.default}" if self.default is not None else "")


@dataclass(frozen=True)
class Def:
    """One definition of a module: a class, function, method or module-level name."""

    name: str
    kind: DefKind
    line: int
    params: tuple[Param, ...] = ()
    bases: tuple[str, ...] = ()
    abstract: bool = False
    #: A method whose body only raises ``NotImplementedError``: an obligation, unless the feature is unused.
    unimplemented: bool = False
    triton: bool = False
    #: A hash of the body's text (functions and methods): a body fact when only it changed.
    body: int = 0
    #: The value's source, for module-level names (a rename keeps it).
    value: str = ""
    #: A class's direct members (methods and nested classes), for renames of classes.
    members: frozenset[str] = frozenset()
    #: A function's return annotation as written (``float``, ``CompilationTimes | None``), empty without one.
    returns: str = ""

    @property
    def public(self) -> bool:
        """No part starts with ``_``; of the dunders only those a caller uses (a constructor, a call): a
        ``__repr__`` or ``__post_init__`` coming or going changes no call."""
        return all(not part.startswith("_") or part in _CALLED_DUNDERS for part in self.name.split("."))

    @property
    def parent(self) -> str:
        return self.name.rpartition(".")[0]

    @property
    def leaf(self) -> str:
        return self.name.rpartition(".")[2]

    def signature(self) -> str:
        """``(self, x, y=1, *, z=None)`` for functions, ``(Base, Mixin)`` for classes, ``= value`` for names."""
        if self.kind == "class":
            text = f"({', '.join(self.bases)})" if self.bases else ""
        elif self.kind == "name":
            text = f"= {self.value}" if self.value else ""
        else:
            # whole, never cut: the match reads parameters back from it, and a cut one reads as "no change"
            return _params_text(self.params)
        return text if len(text) <= _SIGNATURE_CHARS else text[:_SIGNATURE_CHARS - 1] + "…"

    def shape(self) -> tuple[object, ...]:
        """What stays the same when only the name changes."""
        if self.kind == "class":
            return ("class", self.bases, self.members)
        if self.kind == "name":
            return ("name", self.value)
        return (self.kind, self.params, self.body)


def _params_text(params: tuple[Param, ...]) -> str:
    out: list[str] = []
    star_done = False
    for i, p in enumerate(params):
        if p.kind == "var":
            star_done = True
        if p.kind == "kw" and not star_done:
            out.append("*")
            star_done = True
        out.append(p.text())
        if p.kind == "posonly" and (i + 1 == len(params) or params[i + 1].kind != "posonly"):
            out.append("/")
    return f"({', '.join(out)})"


@dataclass
class Module:
    """A parsed module: its definitions by dotted name and the names it imports at module level."""

    defs: dict[str, Def] = field(default_factory=dict)
    #: Imported name → the module it comes from (``from a.b import X`` → ``a.b``), for re-exports.
    imported: dict[str, str] = field(default_factory=dict)
    tree: ast.Module | None = None
    #: A class's data attributes (``Class.x`` → line, whether ``__init__`` sets it): names assigned in its body
    #: (dataclass and NamedTuple fields, enum members, class constants) and ``self.x = …`` in its methods.
    attributes: dict[str, tuple[int, bool]] = field(default_factory=dict)
    #: A dataclass's generated ``__init__`` (its fields as parameters), by the class's name.
    inits: dict[str, Def] = field(default_factory=dict)


@functools.lru_cache(maxsize=512)
def parse(text: str) -> Module | None:
    """The module's definitions, or None when it is not valid Python (then it has no API facts)."""
    tree, _ = safe_parse.parse(text)  # too large, too deep or not Python: the file has no API facts
    if not isinstance(tree, ast.Module):
        return None
    lines = text.splitlines()
    module = Module(tree=tree)
    triton = "triton" in text
    _walk(tree.body, "", module, lines, in_class=False, triton=triton)
    return module


def _targets(node: ast.stmt) -> list[ast.expr]:
    """What an assignment statement binds (a tuple's elements one by one); nothing for another statement."""
    if isinstance(node, ast.Assign):
        found = node.targets
    elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        found = [node.target]
    else:
        return []
    return [e for t in found for e in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])]


_BODIES = ("body", "orelse", "finalbody")


def _statements(body: Iterable[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement under ``body``, through the bodies of compound ones (expressions are not walked: an
    assignment is a statement)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for part in _BODIES:
            stack.extend(getattr(node, part, ()))
        for handler in getattr(node, "handlers", ()):
            stack.extend(handler.body)
        for case in getattr(node, "cases", ()):
            stack.extend(case.body)


def _attributes(node: ast.ClassDef, name: str, into: dict[str, tuple[int, bool]]) -> None:
    """A class's data attributes: names its body assigns, and ``self.x`` its methods assign (first line kept)."""
    for item in node.body:
        for target in _targets(item):
            if isinstance(target, ast.Name):
                into.setdefault(f"{name}.{target.id}", (item.lineno, False))
    for item in node.body:
        if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        init = item.name == "__init__"
        for sub in _statements(item.body):
            for target in _targets(sub):
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id == "self":
                    key = f"{name}.{target.attr}"
                    line, in_init = into.get(key, (target.lineno, False))
                    into[key] = (line, in_init or init)


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def _unparse(node: ast.AST | None, limit: int = 80) -> str | None:
    if node is None:
        return None
    try:
        text = ast.unparse(node)
    except (ValueError, RecursionError):  # pragma: no cover - ast.unparse handles every node ast.parse makes
        return "…"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _params(args: ast.arguments) -> tuple[Param, ...]:
    out: list[Param] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for i, (arg, default) in enumerate(zip(positional, defaults)):
        out.append(Param(arg.arg, "posonly" if i < len(args.posonlyargs) else "pos", _unparse(default)))
    if args.vararg:
        out.append(Param(args.vararg.arg, "var"))
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(Param(arg.arg, "kw", _unparse(default)))
    if args.kwarg:
        out.append(Param(args.kwarg.arg, "varkw"))
    return tuple(out)


_TRAILING_COMMENT = re.compile(r"\s+#[^'\"]*$")


def _body_hash(node: ast.AST, lines: list[str]) -> int:
    """The body's lines with whitespace collapsed and comments left out: a comment or a re-indent is no change."""
    body = getattr(node, "body", None)
    if not body:
        return 0
    start, end = body[0].lineno - 1, getattr(node, "end_lineno", None) or body[-1].lineno
    return hash("\n".join(filter(None, map(code_line, lines[start:end]))))


def code_line(line: str) -> str:
    """A line of Python as code alone: whitespace collapsed, a comment cut (empty for a comment-only line)."""
    text = line.strip()
    if not text or text[0] == "#":
        return ""
    if "#" in text:
        text = _TRAILING_COMMENT.sub("", text)
    return " ".join(text.split()) if "  " in text or "\t" in text else text


def _reexports_removed(before: Module, after: Module, path: str) -> Iterator[Change]:
    """A package's ``__init__`` that stops importing a name from inside the package (``from .b import X``,
    ``from vllm.a.b import X``): ``from vllm.a import X`` no longer works, though ``X`` itself stayed."""
    if not path.endswith(("__init__.py", "__init__.pyi")):
        return
    root = path.split("/", 1)[0]
    for name, source in sorted(before.imported.items()):
        inside = source.startswith(".") or source == root or source.startswith(root + ".")
        if inside and name not in after.imported and name not in after.defs and not name.startswith("_"):
            yield Change(kind="removed", symbol=name, path=path, before=f"{source}.{name}",
                         detail="re-export removed")


def _init_facts(before: Module, after: Module, path: str) -> Iterator[Change]:
    """A dataclass whose fields change how it is constructed: a ``signature`` fact on the class itself (the
    ``__init__`` is generated, never written), so every ``Cls(...)`` call is matched against it."""
    for name, a in after.inits.items():
        b = before.inits.get(name)
        detail = signature_detail(b.params, a.params) if b is not None else ""
        if detail and b is not None:
            yield _change("signature", a, path, before=b.signature(), after=a.signature(),
                          detail=detail)


def _dataclass_init(node: ast.ClassDef) -> tuple[Param, ...] | None:
    """The ``__init__`` a ``@dataclass`` (vLLM's ``@config`` classes are dataclasses too) makes from its fields,
    in order, when it writes none itself: a field added without a default, removed or renamed changes every
    ``Cls(...)`` call as a changed signature would. None for any other class."""
    decorators = [d.func if isinstance(d, ast.Call) else d for d in node.decorator_list]
    names = [_decorator_name(d).rpartition(".")[2] for d in decorators]
    if "dataclass" not in names or any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body):
        return None
    call = next((d for d in node.decorator_list if isinstance(d, ast.Call)
                 and _decorator_name(d.func).rpartition(".")[2] == "dataclass"), None)
    kw_only = call is not None and any(k.arg == "kw_only" and isinstance(k.value, ast.Constant) and k.value.value
                                       for k in call.keywords)
    params = [Param("self", "pos")]
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        annotation = _unparse(stmt.annotation, 200) or ""
        if annotation.startswith(("ClassVar", "typing.ClassVar", "InitVar")) or annotation == "KW_ONLY":
            continue
        default = _unparse(stmt.value) if stmt.value is not None else None
        if isinstance(stmt.value, ast.Call) and _decorator_name(stmt.value.func).rpartition(".")[2] == "field":
            keywords = {k.arg: k.value for k in stmt.value.keywords}
            init = keywords.get("init")
            if isinstance(init, ast.Constant) and init.value is False:
                continue
            given = keywords.get("default", keywords.get("default_factory"))
            default = _unparse(given) if given is not None else None
        params.append(Param(stmt.target.id, "kw" if kw_only else "pos", default))
    return tuple(params)


#: An ``abstract`` fact's detail for a method that (now) only raises ``NotImplementedError``.
UNIMPLEMENTED = "raises NotImplementedError"


def _raises_not_implemented(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A method whose body (past its docstring) is only ``raise NotImplementedError…``: an obligation on every
    subclass that reaches it (weaker than ``@abstractmethod``: often a feature only some platforms offer)."""
    body = node.body[1:] if node.body and isinstance(node.body[0], ast.Expr) \
        and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str) else node.body
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _walk(body: Iterable[ast.stmt], prefix: str, module: Module, lines: list[str], *, in_class: bool,
          triton: bool) -> None:
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            decorators = [_decorator_name(d) for d in node.decorator_list]
            if any(d.endswith((".setter", ".deleter")) for d in decorators):
                continue
            name = prefix + node.name
            if name in module.defs:  # @overload stubs, conditional definitions: the first is the shape
                continue
            module.defs[name] = Def(
                name, "method" if in_class else "function", node.lineno, _params(node.args),
                abstract=any(d.rpartition(".")[2] == "abstractmethod" for d in decorators),
                unimplemented=in_class and _raises_not_implemented(node),
                triton=triton and any(d.startswith("triton.") or d in ("jit", "tl.jit") for d in decorators),
                body=_body_hash(node, lines), returns=_unparse(node.returns, 120) or "")
        elif isinstance(node, ast.ClassDef):
            name = prefix + node.name
            if name in module.defs:
                continue
            bases = tuple(_unparse(b, 60) or "" for b in node.bases)
            bases += tuple(f"{k.arg}={_unparse(k.value, 60)}" for k in node.keywords if k.arg)
            members = frozenset(n.name for n in node.body
                                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)))
            members |= frozenset(f"{n.target.id}:" for n in node.body  # fields, so a dataclass has a shape
                                 if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name))
            module.defs[name] = Def(name, "class", node.lineno, bases=bases, members=members)
            _attributes(node, name, module.attributes)
            _walk(node.body, name + ".", module, lines, in_class=True, triton=triton)
            fields = _dataclass_init(node)
            if fields is not None:
                module.inits[name] = Def(name, "method", node.lineno, fields)
        elif in_class:
            continue
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if isinstance(value, ast.Call) and _decorator_name(value.func).rpartition(".")[2] in (
                    "TypeVar", "ParamSpec", "getLogger", "init_logger", "TypeVarTuple"):
                continue
            if isinstance(value, (ast.Name, ast.Attribute)) and _decorator_name(value):
                # ``aten = torch.ops.aten``, ``implements = Tensor.implements``, ``Old = New``: an alias of
                # something defined elsewhere (its own facts come from there), not a definition
                module.imported.update({t.id: _decorator_name(value) for t in targets if isinstance(t, ast.Name)})
                continue
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in _PLUMBING \
                        and prefix + target.id not in module.defs:
                    module.defs[prefix + target.id] = Def(prefix + target.id, "name", node.lineno,
                                                          value=_unparse(value, 120) or "")
        elif isinstance(node, (ast.If, ast.Try)) or type(node).__name__ == "TryStar":
            for part in ("body", "orelse", "finalbody"):
                _walk(getattr(node, part, []), prefix, module, lines, in_class=False, triton=triton)
            for handler in getattr(node, "handlers", []):
                _walk(handler.body, prefix, module, lines, in_class=False, triton=triton)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                bound = alias.asname or alias.name
                module.imported.setdefault(bound, ("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.imported.setdefault(alias.asname or alias.name.partition(".")[0], alias.name)


# comparing two versions ---------------------------------------------------------------------------------

def signature_detail(old: tuple[Param, ...], new: tuple[Param, ...]) -> str:
    """What changed between two parameter lists: ``+layer_names``, ``-dtype``, ``block_size=16→32``,
    ``+eps=1e-6`` (added with a default), ``x→y`` (a renamed parameter), ``reordered``, ``n: positional→keyword-only``;
    empty when nothing did (annotations are not compared: a change of spelling of a type is not a change of
    signature)."""
    on, nn = [p.name for p in old], [p.name for p in new]
    removed = [n for n in on if n not in nn]
    added = [n for n in nn if n not in on]
    before, after = {p.name: p for p in old}, {p.name: p for p in new}
    star = {"var": "*", "varkw": "**"}
    takes_var = next((p.name for p in new if p.kind == "var"), None)
    takes_kw = next((p.name for p in new if p.kind == "varkw"), None)
    parts: list[str] = []
    named = [n for n in added if after[n].kind not in star]
    if removed and len(removed) == len(named) and all(on.index(r) == nn.index(a) for r, a in zip(removed, named)):
        parts += [f"{r}→{a}" for r, a in zip(removed, named)]
        parts += [f"+{star[after[n].kind]}{n}" for n in added if after[n].kind in star]
    else:
        # An added parameter with a default says so (``+eps=1e-6``): callers that do not pass it still work; so
        # does an added ``*args`` or ``**kwargs`` (``+**kwargs``).
        parts += [f"+{star.get(after[n].kind, '')}{n}" + (f"={after[n].default}" if after[n].default is not None
                                                          else "") for n in added]
        # A parameter the new ``**kwargs`` (by keyword; with ``*args``, positionally too) still accepts is
        # written ``-dtype→**kwargs``: callers that pass it still run.
        for n in removed:
            by_position = before[n].kind in ("posonly", "pos")
            if takes_kw and before[n].kind != "posonly" and (not by_position or takes_var):
                parts.append(f"-{n}→**{takes_kw}")
            else:
                parts.append(f"-{n}")
    common = [n for n in nn if n in before]
    positional = ("posonly", "pos")
    both = {n for n in common if before[n].kind in positional and after[n].kind in positional}
    if [n for n in on if n in both] != [n for n in nn if n in both]:
        parts.append("reordered")
    elif not removed and all(after[n].default is not None or after[n].kind in star for n in added):
        # a parameter inserted (with a default) before a positional one moves it: a call passing it by position now
        # binds another parameter (``y: position 2→3``)
        old_at = [p.name for p in old if p.kind in positional]
        new_at = [p.name for p in new if p.kind in positional]
        parts += [f"{n}: position {old_at.index(n) + 1}→{new_at.index(n) + 1}" for n in old_at
                  if n in both and old_at.index(n) != new_at.index(n)]
    for n in common:
        b, a = before[n], after[n]
        if b.kind != a.kind:
            names = {"posonly": "positional-only", "pos": "positional", "kw": "keyword-only", "var": "*args",
                     "varkw": "**kwargs"}
            parts.append(f"{n}: {names[b.kind]}→{names[a.kind]}")
        if b.default != a.default:
            parts.append(f"{n}={b.default if b.default is not None else 'required'}→"
                         f"{a.default if a.default is not None else 'required'}")
    return ", ".join(parts)


def _change(kind: ChangeKind, d: Def, path: str, *, before: str = "", after: str = "", detail: str = "",
            language: Literal["python", "triton"] = "python", public: bool | None = None) -> Change:
    return Change(kind=kind, symbol=d.name, path=path, line=d.line, before=before, after=after, detail=detail,
                  public=d.public if public is None else public, language=language)


def _is_trivial(d: Def) -> bool:
    """A shape too common to pair a removal with an addition on it alone (``(self)``, ``()``, ``= None``)."""
    if d.kind in ("function", "method"):
        return len([p for p in d.params if p.name not in ("self", "cls")]) == 0
    if d.kind == "name":
        return len(d.value) < 8
    return not d.members


def _pairs(removed: list[Def], added: list[Def]) -> list[tuple[Def, Def]]:
    """Renames: a removal and an addition of the same shape under the same parent, when only one of each has it."""
    by_shape: dict[tuple[object, ...], list[Def]] = {}
    for d in added:
        by_shape.setdefault((d.parent, d.shape()), []).append(d)
    removed_shapes: dict[tuple[object, ...], int] = {}
    for d in removed:
        key = (d.parent, d.shape())
        removed_shapes[key] = removed_shapes.get(key, 0) + 1
    pairs = []
    for d in removed:
        key = (d.parent, d.shape())
        match = by_shape.get(key, [])
        if len(match) == 1 and removed_shapes[key] == 1 and not _is_trivial(d):
            pairs.append((d, match[0]))
    return pairs


def _hook(name: str) -> bool:
    """A dunder no caller calls (``__repr__``, ``__post_init__``): its coming or going is no fact."""
    return name.startswith("__") and name.endswith("__") and name not in _CALLED_DUNDERS


def _under(name: str, roots: set[str]) -> bool:
    return any(name.startswith(root + ".") for root in roots)


def compare(before: Module | None, after: Module | None, path: str, *, before_path: str | None = None,
            body_facts: bool = True) -> list[Change]:
    """The facts of one file: what its definitions did between ``before`` and ``after`` (None: absent).

    Removals, additions and renames only at the outermost level that changed (a removed class, not each of
    its methods); facts about private names only when they can break a caller (removed, renamed,
    signature) or their body changed (where a fix lands)."""
    old = before.defs if before else {}
    new = after.defs if after else {}
    old_path = before_path or path
    removed = [d for n, d in old.items() if n not in new]
    added = [d for n, d in new.items() if n not in old]
    facts: list[Change] = []
    renamed = _pairs(removed, added)
    renamed_from = {a.name: b for b, a in renamed}
    gone = {b.name for b, _ in renamed}
    for b, a in renamed:
        facts.append(_change("renamed", a, path, before=b.name, after=a.name, detail=f"{b.name}→{a.name}",
                             public=b.public or a.public))
    removed_roots = {d.name for d in removed if d.kind == "class"}
    added_roots = {d.name for d in added if d.kind == "class"}
    for d in removed:
        if d.name in gone or _under(d.name, removed_roots) or _hook(d.leaf):
            continue
        if d.triton:
            facts.append(_change("kernel", d, old_path, before=d.signature(), detail="removed", language="triton"))
        else:
            facts.append(_change("removed", d, old_path, before=d.signature()))
    for d in added:
        if d.name in renamed_from or _under(d.name, added_roots):
            continue
        if d.triton:
            facts.append(_change("kernel", d, path, after=d.signature(), detail="added", language="triton"))
        elif d.abstract and d.kind == "method":
            facts.append(_change("abstract", d, path, after=d.signature(), detail="abstract method added"))
        elif d.unimplemented and d.kind == "method":
            facts.append(_change("abstract", d, path, after=d.signature(), detail=UNIMPLEMENTED + " (added)"))
        elif d.public:
            facts.append(_change("added", d, path, after=d.signature()))
    for name, a in new.items():
        prior = old.get(name) or renamed_from.get(name)
        if prior is None:
            continue
        facts.extend(_compare_def(prior, a, path, body_facts=body_facts))
    if before is not None and after is not None:
        facts.extend(_attribute_facts(before, after, path, old_path))
        facts.extend(_init_facts(before, after, path))
        facts.extend(_reexports_removed(before, after, path))
    return facts


#: Said after an attribute fact's ``removed`` when no class of the commit's changed files (after it) has a member
#: of that name: a downstream reading ``obj.x`` on an upstream object most likely reads this one.
ATTRIBUTE_GONE = " (no class of the changed files keeps it)"


def _public_name(name: str) -> bool:
    return all(not part.startswith("_") for part in name.split("."))


def _attribute_facts(before: Module, after: Module, path: str, old_path: str) -> list[Change]:
    """A data attribute of a class both versions define: ``removed`` when the class no longer has it (as an
    attribute, a method or a property, nor through a base class of the same module); ``added`` when its
    ``__init__`` now sets one (a subclass whose own ``__init__`` does not call the base's lacks it: a private one
    too). Public classes only; public attributes only for ``removed``."""
    facts: list[Change] = []
    classes = {n for n, d in after.defs.items() if d.kind == "class"}

    def keeps(cls: str, leaf: str, seen: frozenset[str] = frozenset()) -> bool:
        if f"{cls}.{leaf}" in after.attributes or f"{cls}.{leaf}" in after.defs:
            return True
        return any(base in classes and base not in seen and keeps(base, leaf, seen | {cls})
                   for base in (_leaf(b) for b in after.defs[cls].bases))

    for key, (line, _) in before.attributes.items():
        cls, _, leaf = key.rpartition(".")
        if cls not in classes or key in before.defs or not _public_name(key) or keeps(cls, leaf):
            continue
        facts.append(Change(kind="attribute", symbol=key, path=old_path, line=line, before=key, detail="removed"))
    for key, (line, in_init) in after.attributes.items():
        cls, _, leaf = key.rpartition(".")
        # a private one too: a subclass that never runs the base's __init__ lacks it all the same
        if not in_init or key in before.attributes or key in before.defs or cls not in before.defs \
                or not _public_name(cls) or leaf.startswith("__"):
            continue
        facts.append(Change(kind="attribute", symbol=key, path=path, line=line, after=key, detail="added",
                            public=_public_name(leaf)))
    return facts


def attribute_reach(facts: list[Change], modules: dict[str, Module], texts: dict[str, str]) -> list[Change]:
    """The facts, with what the commit's changed files (``modules`` by path after it, ``texts`` their source)
    say of each attribute fact: a removed one whose name no class there keeps as a member says so
    (:data:`ATTRIBUTE_GONE`); an added one is kept only when some code there reads it (``.x`` not assigned), as
    what upstream relies on."""
    wanted = {f.symbol.rpartition(".")[2] for f in facts if f.kind == "attribute"}
    if not wanted:
        return facts
    kept: set[str] = set()
    for module in modules.values():
        kept.update(k.rpartition(".")[2] for k in module.attributes)
        kept.update(d.leaf for d in module.defs.values() if d.parent)
    read: set[str] = set()
    added = {f.symbol.rpartition(".")[2] for f in facts if f.kind == "attribute" and f.detail == "added"}
    if added:
        names = "|".join(re.escape(n) for n in sorted(added))
        pattern = re.compile(rf"\.({names})\b(\s*(?:=(?!=)|:[^=\n]*=(?!=)))?")  # group 2: an assignment
        for text in texts.values():
            read.update(m[1] for m in pattern.finditer(text) if not m[2])
    index = _reads(texts, added & read, {f.path for f in facts if f.kind == "attribute" and f.detail == "added"})
    out: list[Change] = []
    for f in facts:
        if f.kind == "attribute":
            leaf = f.symbol.rpartition(".")[2]
            if f.detail == "added":
                if leaf not in read:
                    continue
                entries = _read_from(f, index)
                if entries == ():
                    continue
                if entries:
                    f = f.model_copy(update={"callers": entries})
            if f.detail == "removed" and leaf not in kept:
                f = f.model_copy(update={"detail": f.detail + ATTRIBUTE_GONE})
        out.append(f)
    return out


@dataclass
class _Reads:
    """The reads of some attribute names in a commit's changed files, each file parsed and walked once."""

    #: name → (path, class, method, on ``self``) of each read; class and method empty outside a class's methods
    reads: dict[str, list[tuple[str, str, str, bool]]] = field(default_factory=dict)
    #: (path, class) → method → the names it reads on ``self`` (its calls of the class's methods among them)
    selfs: dict[tuple[str, str], dict[str, set[str]]] = field(default_factory=dict)
    trees: dict[str, ast.Module] = field(default_factory=dict)


def _reads(texts: dict[str, str], leaves: set[str], homes: set[str]) -> _Reads:
    """Where the changed files read ``leaves`` (files naming none of them are not parsed), and what each method of
    the classes of ``homes`` (the facts' own files) reads on ``self``."""
    out = _Reads()
    if not leaves:
        return out
    named = re.compile(rf"\.(?:{'|'.join(re.escape(n) for n in sorted(leaves))})\b")
    for path, text in texts.items():
        if path not in homes and not named.search(text):
            continue
        parsed, _ = safe_parse.parse(text, filename=path)
        if not isinstance(parsed, ast.Module):
            continue
        out.trees[path] = parsed
        owners: dict[int, tuple[str, str]] = {}  # id of a method's node → (class, method)
        for node in ast.walk(parsed):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        owners[id(item)] = (node.name, item.name)
        for owner, method in _methods_with(parsed, owners):
            cls, name = owner if owner is not None else ("", "")
            for node in ast.walk(method):
                if not isinstance(node, ast.Attribute):
                    continue
                on_self = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
                if node.attr in leaves and isinstance(node.ctx, ast.Load):
                    out.reads.setdefault(node.attr, []).append((path, cls, name, on_self))
                if cls and on_self and path in homes:
                    out.selfs.setdefault((path, cls), {}).setdefault(name, set()).add(node.attr)
    return out


def _read_from(fact: Change, index: _Reads) -> tuple[str, ...] | None:
    """Where upstream reads the attribute an ``added`` fact names, for a downstream subclass of its class whose own
    ``__init__`` never runs the base's: ``None`` when something reads it on another object (``engine.x``: any
    instance, a subclass's too), else the methods of the class (or of a base defined beside it) whose calls reach
    a ``self.x`` read, a private method replaced by the class's own methods calling it (``()`` when none does:
    only other classes' own ``self.x``, a sibling subclass or a mixin that sets it itself). The base's
    ``__init__`` is no entry: the subclass never runs it."""
    cls, _, leaf = fact.symbol.rpartition(".")
    tree = index.trees.get(fact.path)
    lineage = _lineage(tree, cls) if tree is not None else set()
    direct: set[str] = set()
    for path, owner, method, on_self in index.reads.get(leaf, []):
        if not on_self or not owner:
            return None
        if path == fact.path and owner in lineage and method != "__init__":
            direct.add(method)
    calls: dict[str, set[str]] = {}  # method of the class → the class's methods it calls on self
    for member in lineage:
        for method, names in index.selfs.get((fact.path, member), {}).items():
            calls.setdefault(method, set()).update(names)
    entries: set[str] = set()
    seen: set[str] = set()
    todo = list(direct)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        by = {m for m, called in calls.items() if name in called and m != "__init__"}
        if name.startswith("_") and not name.endswith("__") and by:
            todo.extend(by)
        else:
            entries.add(name)
    return tuple(f"{cls}.{m}" for m in sorted(entries))


def _lineage(tree: ast.Module, cls: str) -> set[str]:
    """A class of the module and the bases of it the module defines too (by name)."""
    classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    out: set[str] = set()
    todo = [cls]
    while todo:
        name = todo.pop()
        if name in out or name not in classes:
            continue
        out.add(name)
        todo.extend(_leaf(ast.unparse(b)) for b in classes[name].bases)
    return out


def _methods_with(tree: ast.Module, owners: dict[int, tuple[str, str]]) \
        -> Iterator[tuple[tuple[str, str] | None, ast.AST]]:
    """Each method of a class (with its class and name) and, as ``None``, the module's other code (module level,
    functions, nested classes' bodies outside methods), each node once."""
    methods = [n for n in ast.walk(tree) if id(n) in owners]
    inside = {id(x) for m in methods for x in ast.walk(m)}
    for m in methods:
        yield owners[id(m)], m
    rest = [n for n in ast.walk(tree) if id(n) not in inside and isinstance(n, ast.Attribute)]
    for node in rest:
        yield None, node


def _changed_lines(text: str, other: str | None) -> list[int]:
    """The 1-based lines of ``text`` whose code is on no line of ``other`` (every line when there is none)."""
    kept = {line.strip() for line in other.splitlines()} if other else set()
    return [i for i, line in enumerate(text.splitlines(), 1) if line.strip() and line.strip() not in kept]


def _on_lines(body: Iterable[ast.stmt], lines: list[int]) -> Iterator[ast.AST]:
    """The parts of ``body`` that hold one of ``lines`` (sorted): the innermost statements, and the headers of
    compound ones (an ``if``'s test, a ``with``'s items, a class's bases), so a walk costs what the change
    touched, not the file."""
    for node in body:
        start, end = node.lineno, node.end_lineno or node.lineno
        at = bisect.bisect_left(lines, start)
        if at == len(lines) or lines[at] > end:
            continue
        inner = [part for part in _BODIES if getattr(node, part, None)]
        if not inner and not getattr(node, "handlers", None) and not getattr(node, "cases", None):
            yield node
            continue
        for field_name, value in ast.iter_fields(node):
            if field_name in _BODIES:
                yield from _on_lines(value, lines)
            elif field_name == "handlers":
                for handler in value:
                    yield from _on_lines(handler.body, lines)
                    if handler.type is not None:
                        yield handler.type
            elif field_name == "cases":
                for case in value:
                    yield from _on_lines(case.body, lines)
            elif isinstance(value, ast.AST):
                yield value
            elif isinstance(value, list):
                yield from (v for v in value if isinstance(v, ast.AST))


def _constructor_keywords(modules: dict[str, Module], texts: dict[str, str | None], others: dict[str, str | None],
                          module_of: dict[str, str], *, added: bool) -> dict[tuple[str, str], set[str]]:
    """(module, class) → the keywords the modules' calls ``Class(...)`` pass on the lines of their text that
    ``others`` (the file's other version) does not have (``added``: the keyword's own line is such a line),
    the class resolved through the calling module's imports (relative ones too) or its own definitions, within
    the calling module's package."""
    found: dict[tuple[str, str], set[str]] = {}
    for path, module in modules.items():
        here, text = module_of.get(path, ""), texts.get(path)
        if module.tree is None or not here or not text:
            continue
        lines = _changed_lines(text, others.get(path))
        if not lines:
            continue
        wanted = set(lines)
        package = here.split(".")[0]
        for part in _on_lines(module.tree.body, lines):
            for node in ast.walk(part):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.keywords):
                    continue
                name = node.func.id
                keywords = {k.arg for k in node.keywords if k.arg and (not added or k.lineno in wanted)}
                if not keywords or not name[:1].isupper():
                    continue
                source = module.imported.get(name)
                if source is None:
                    defined = module.defs.get(name)
                    if defined is None or defined.kind != "class":
                        continue
                    source = here
                elif source.startswith("."):
                    level = len(source) - len(source.lstrip("."))
                    base = here.split(".") if path.endswith("__init__.py") else here.split(".")[:-1]
                    base = base[:len(base) - (level - 1)] if level > 1 else base
                    source = ".".join([*base, source[level:]] if source[level:] else base)
                if source.split(".")[0] == package:
                    found.setdefault((source, name), set()).update(keywords)
    return found


def new_keywords(facts: list[Change], before: dict[str, Module], after: dict[str, Module],
                 texts: dict[str, tuple[str | None, str | None]], module_of: dict[str, str]) -> list[Change]:
    """The facts and a ``passes`` fact for each class whose constructor some call in the commit's changed files
    passes, on a line the change added (``after`` by path; ``texts``: each path's text before and after), a
    keyword that no call on the lines it removed passed (``before``, by old path): symbol ``Class.__init__``,
    path its module's file, detail the keywords. A subclass whose own ``__init__`` does not take them breaks
    once upstream builds it through the base's name (a registered replacement, a plugin's class). Keywords a
    signature fact of the same constructor adds are left to it. Only the changed statements are walked."""
    olds = {path: old for path, (old, _) in texts.items()}
    news = {path: new for path, (_, new) in texts.items()}
    then = _constructor_keywords(before, olds, news, module_of, added=False)
    now = _constructor_keywords(after, news, olds, module_of, added=True)
    path_of = {module: path for path, module in module_of.items() if path in after}
    added: dict[str, set[str]] = {}
    for f in facts:
        if f.kind == "signature" and f.symbol.endswith(".__init__"):
            added.setdefault(f.symbol, set()).update(added_with_default(f.detail))
    out = list(facts)
    for (module, name), keywords in sorted(now.items()):
        symbol = f"{name}.__init__"
        new = sorted(keywords - then.get((module, name), set()) - added.get(symbol, set()))
        if not new or name.startswith("_"):
            continue
        path = path_of.get(module) or module.replace(".", "/") + ".py"
        out.append(Change(kind="passes", symbol=symbol, path=path, after=", ".join(new), detail=", ".join(new)))
    return out


#: Names an annotation may spell differently without meaning another type.
_TYPING_NOISE = frozenset({"Optional", "Union", "None", "typing", "t", "typing_extensions"})
_BUILTIN_GENERICS = {"List": "list", "Dict": "dict", "Tuple": "tuple", "Set": "set", "FrozenSet": "frozenset",
                     "Type": "type", "Sequence": "Sequence"}


def type_names(annotation: str) -> frozenset[str]:
    """The names an annotation is made of, spelling aside: ``Optional[List[int]]`` and ``list[int] | None``
    both → {list, int}."""
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation)
    return frozenset(_BUILTIN_GENERICS.get(n, n) for n in names if n not in _TYPING_NOISE)


def _compare_def(b: Def, a: Def, path: str, *, body_facts: bool) -> Iterator[Change]:
    if b.kind != a.kind:
        yield _change("signature", a, path, before=f"{b.kind} {b.signature()}", after=f"{a.kind} {a.signature()}",
                      detail=f"{b.kind}→{a.kind}")
        return
    if a.kind in ("function", "method"):
        detail = signature_detail(b.params, a.params)
        if detail:
            if a.triton or b.triton:
                yield _change("kernel", a, path, before=b.signature(), after=a.signature(), detail=detail,
                              language="triton")
            else:
                yield _change("signature", a, path, before=b.signature(), after=a.signature(), detail=detail)
        elif body_facts and b.body != a.body:
            # private ones too: a helper's or a Triton kernel's body is often where a fix lands
            yield _change("body", a, path, detail="body changed", language="triton" if a.triton else "python")
        if a.abstract and not b.abstract:
            yield _change("abstract", a, path, after=a.signature(), detail="made abstract")
        elif a.unimplemented and not (b.unimplemented or b.abstract or a.abstract):
            yield _change("abstract", a, path, after=a.signature(), detail=UNIMPLEMENTED)
        if b.returns and a.returns and type_names(b.returns) != type_names(a.returns):
            yield _change("returns", a, path, before=b.returns, after=a.returns, detail=f"{b.returns}→{a.returns}")
    elif a.kind == "class" and b.bases != a.bases:
        yield _change("bases", a, path, before=", ".join(b.bases), after=", ".join(a.bases),
                      detail=", ".join([f"+{x}" for x in a.bases if x not in b.bases]
                                       + [f"-{x}" for x in b.bases if x not in a.bases]) or "reordered")


def moves(facts: list[Change], modules_after: dict[str, Module | None], module_of: dict[str, str]) -> list[Change]:
    """One commit's facts with each top-level removal matched to an addition of the same name and shape in
    another module turned into one ``moved`` fact (``before``/``after`` the modules); a removed name the old
    module now imports (a re-export) becomes ``moved`` with detail ``re-exported``."""
    top = [f for f in facts if "." not in f.symbol]
    removed = {(f.symbol, f.before): f for f in top if f.kind == "removed"}
    added: dict[tuple[str, str], list[Change]] = {}
    for f in top:
        if f.kind == "added":
            added.setdefault((f.symbol, f.after), []).append(f)
    out: list[Change] = []
    used: set[int] = set()
    for f in facts:
        if f.kind == "removed" and id(f) in {id(r) for r in removed.values()}:
            match = [a for a in added.get((f.symbol, f.before), []) if a.path != f.path]
            reexport = modules_after.get(f.path)
            source = reexport.imported.get(f.symbol) if reexport else None
            if len(match) == 1:
                a = match[0]
                used.add(id(a))
                out.append(Change(kind="moved", symbol=f.symbol, path=a.path, line=a.line,
                                  before=module_of.get(f.path, f.path), after=module_of.get(a.path, a.path),
                                  detail="re-exported" if source else "", public=f.public))
                continue
            if source is not None:
                out.append(Change(kind="moved", symbol=f.symbol, path=f.path, line=f.line,
                                  before=module_of.get(f.path, f.path), after=source, detail="re-exported",
                                  public=f.public))
                continue
        out.append(f)
    return [f for f in out if id(f) not in used]


# who passes a new parameter ------------------------------------------------------------------------------

#: Said after a signature fact's detail when an upstream call site passes a parameter it added with a default;
#: `` from C.a and C.b`` when every such call is ``self.m(...)`` in methods of the fact's own class C;
#: `` to an untyped receiver`` when every such call is on a receiver of unknown type, counted because no class
#: outside the method's own hierarchy in the changed files defines a method of that name.
PASSES = UPSTREAM_PASSES + "{})"
UNTYPED = " to an untyped receiver"


def added_with_default(detail: str) -> list[str]:
    """The parameters a signature detail says were added with a default (``+eps=1e-6`` → ``eps``)."""
    return [p.strip()[1:].split("=", 1)[0] for p in detail.split(",")
            if p.strip().startswith("+") and "=" in p and p.strip()[1:].split("=", 1)[0].isidentifier()]


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def _calls(body: Iterable[ast.AST], owner: str,
           klass: str) -> Iterator[tuple[ast.Call, str, str, FunctionNode | None]]:
    """Every call under ``body`` with the ``Class.method`` it sits in (``""`` outside a class's method), the
    dotted class it sits in (``""`` outside a class) and the outermost function holding it (a method, a
    module-level function; None at module or class level)."""
    stack: list[tuple[ast.AST, str, str, FunctionNode | None]] = [(node, owner, klass, None) for node in body]
    while stack:
        node, own, cls, func = stack.pop()
        if isinstance(node, ast.ClassDef):
            name = f"{cls}.{node.name}" if cls else node.name
            stack.extend((child, "", name, None) for child in node.body)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and func is None:
            stack.extend((child, f"{cls}.{node.name}" if cls else "", cls, node) for child in node.body)
            continue
        if isinstance(node, ast.Call):
            yield node, own, cls, func
        stack.extend((child, own, cls, func) for child in ast.iter_child_nodes(node))


def _by_rpc(node: ast.Call) -> tuple[str, set[str], int] | None:
    """A method called by its name in a string, with what it is passed (``collective_rpc("profile", args=(a, b),
    kwargs={"c": c})``, ``run_method(w, "profile", args=(a,))``: a remote call of ``profile(a, b, c=c)`` on objects
    of unknown type): (the method's name, the keywords passed, the positional count), or None. Only a call that
    says what it passes (an ``args=`` tuple or a ``kwargs=`` mapping) counts."""
    named = next((a.value for a in node.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)), None)
    if named is None or not named.isidentifier():
        return None
    given = {k.arg: k.value for k in node.keywords if k.arg in ("args", "kwargs")}
    if not given:
        return None
    args = given.get("args")
    if args is not None and not isinstance(args, (ast.Tuple, ast.List)):
        return None  # a variable: what it holds cannot be read
    count = 0
    for arg in args.elts if args is not None else ():
        if isinstance(arg, ast.Starred):
            break
        count += 1
    kwargs = given.get("kwargs")
    keywords: set[str] = set()
    if isinstance(kwargs, ast.Dict):
        keywords = {k.value for k in kwargs.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    elif isinstance(kwargs, ast.Call) and isinstance(kwargs.func, ast.Name) and kwargs.func.id == "dict":
        keywords = {k.arg for k in kwargs.keywords if k.arg}
    return named, keywords, count


def _leaf(text: str) -> str:
    """``nn.Module`` → ``Module``; ``Generic[T]`` → ``Generic``."""
    return text.split("[", 1)[0].rpartition(".")[2].strip()


def inherited(facts: list[Change], modules: dict[str, Module]) -> list[Change]:
    """A method removed from a class that now gets it from a base among the changed files (the method moved up
    into ``Base``, often in another module) is not gone: said as a ``body`` fact (``now inherited from Base``),
    so an override or a patch of it is told to check and a call of it is not a break."""
    classes = _Classes(modules.values())
    out = []
    for f in facts:
        cls, _, method = f.symbol.rpartition(".")
        if f.kind == "removed" and cls and not f.detail:
            source = next((a for a in sorted(classes.ancestry(_leaf(cls)) - {_leaf(cls)})
                           if method in classes.own.get(a, ())), None)
            if source is not None:
                f = Change(kind="body", symbol=f.symbol, path=f.path, line=f.line, before=f.before,
                           detail=f"now inherited from {source}", public=f.public)
        out.append(f)
    return out


class _Classes:
    """The classes of the changed files by their last name: their bases there, the methods they define, and
    the hierarchy of one (itself, its ancestors and its descendants among them)."""

    def __init__(self, modules: Iterable[Module]) -> None:
        self.bases: dict[str, set[str]] = {}
        self.methods: dict[str, set[str]] = {}  # method name → the classes that define it
        self.own: dict[str, set[str]] = {}  # class → its methods
        for module in modules:
            for d in module.defs.values():
                if d.kind == "class":
                    self.bases.setdefault(d.leaf, set()).update(
                        _leaf(b) for b in d.bases if "=" not in b and _leaf(b) not in ("", "object"))
                elif d.kind == "method":
                    cls = _leaf(d.parent)
                    self.methods.setdefault(d.leaf, set()).add(cls)
                    self.own.setdefault(cls, set()).add(d.leaf)
        self._up: dict[str, frozenset[str]] = {}
        self._tree: dict[str, frozenset[str]] = {}

    def ancestry(self, cls: str) -> frozenset[str]:
        """The class and every ancestor of it among the changed files' classes (bases followed by name)."""
        got = self._up.get(cls)
        if got is None:
            seen, todo = {cls}, [cls]
            while todo:
                for base in self.bases.get(todo.pop(), ()):
                    if base not in seen:
                        seen.add(base)
                        todo.append(base)
            got = self._up[cls] = frozenset(seen)
        return got

    def unresolved(self, cls: str) -> bool:
        """Whether some class of its ancestry has a base the changed files do not define."""
        return any(b not in self.bases for c in self.ancestry(cls) for b in self.bases.get(c, ()))

    def hierarchy(self, cls: str) -> frozenset[str]:
        got = self._tree.get(cls)
        if got is None:
            got = self._tree[cls] = self.ancestry(cls) | {k for k in self.bases if cls in self.ancestry(k)}
        return got


def _type_name(annotation: ast.expr | None) -> str | None:
    """The one class an annotation names (``Runner``, ``mod.Runner``, ``"Runner"``, ``Runner | None``,
    ``Optional[Runner]``), else None."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        parsed, _ = safe_parse.parse(annotation.value, mode="eval", max_source=1000)
        if not isinstance(parsed, ast.Expression):
            return None
        annotation = parsed.body
    if isinstance(annotation, ast.Name):
        return annotation.id
    if isinstance(annotation, ast.Attribute):
        return annotation.attr
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        parts = [p for p in (annotation.left, annotation.right)
                 if not (isinstance(p, ast.Constant) and p.value is None)]
        return _type_name(parts[0]) if len(parts) == 1 else None
    if isinstance(annotation, ast.Subscript) and _decorator_name(annotation.value).rpartition(".")[2] == "Optional":
        return _type_name(annotation.slice)
    return None


def _constructed(value: ast.expr | None, classes: _Classes) -> str | None:
    """``Runner(...)`` → ``Runner`` when a changed file defines a class of that name."""
    if isinstance(value, ast.Call):
        name = _decorator_name(value.func).rpartition(".")[2]
        if name in classes.bases:
            return name
    return None


def _typed(func: FunctionNode, classes: _Classes, *, attributes: bool) -> dict[str, str | None]:
    """The names (``runner``; with ``attributes``, ``self.runner`` as ``runner``) a function gives a type by an
    annotation or a constructor call (``self.runner = runner`` takes the type of the local ``runner``); None for
    a name given two different types or a value of unknown type."""
    found: dict[str, set[str | None]] = {}
    local = _typed(func, classes, attributes=False) if attributes else {}

    def note(target: ast.expr, kind: str | None) -> None:
        if attributes:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                found.setdefault(target.attr, set()).add(kind)
        elif isinstance(target, ast.Name):
            found.setdefault(target.id, set()).add(kind)

    if not attributes:
        args = func.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            if arg.annotation is not None:
                found.setdefault(arg.arg, set()).add(_type_name(arg.annotation))
    for node in ast.walk(func):
        if isinstance(node, ast.AnnAssign):
            note(node.target, _type_name(node.annotation))
        elif isinstance(node, ast.Assign):
            kind = local.get(node.value.id) if isinstance(node.value, ast.Name) else _constructed(node.value, classes)
            for target in node.targets:
                note(target, kind)
    return {name: kinds.pop() if len(kinds) == 1 else None for name, kinds in found.items()}


def _receiver(value: ast.expr, cls: str, func: FunctionNode | None, classes: _Classes,
              cache: dict[object, dict[str, str | None]],
              class_nodes: dict[str, ast.ClassDef]) -> tuple[str | None, bool]:
    """The class a call's receiver is known to be (``self``/``cls`` in a class: it; ``Runner.m``: Runner,
    unbound; a name or ``self.x`` typed by an annotation or a constructor call in the function or the class's
    ``__init__``), and whether the call is on the class itself (``self`` passed explicitly); None: unknown."""
    leaf = cls.rpartition(".")[2]
    if isinstance(value, ast.Name):
        if value.id in ("self", "cls") and leaf and func is not None:
            return leaf, False
        if func is not None:
            local = cache.get(id(func))
            if local is None:
                local = cache[id(func)] = _typed(func, classes, attributes=False)
            if value.id in local:
                return local[value.id], False
        if value.id in classes.bases:
            return value.id, True
        return None, False
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self" \
            and leaf and func is not None:
        types: dict[str, str | None] = {}
        node = class_nodes.get(cls)
        if node is not None:
            key = ("class", cls)
            cached = cache.get(key)
            types = cached if cached is not None else {}
            if cached is None:
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        types[item.target.id] = _type_name(item.annotation)
                    elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == "__init__":
                        for name, kind in _typed(item, classes, attributes=True).items():
                            types[name] = kind if types.get(name, kind) == kind else None
                cache[key] = types
        mine = cache.get(("attributes", id(func)))
        if mine is None:
            mine = cache[("attributes", id(func))] = _typed(func, classes, attributes=True)
        for name, kind in mine.items():
            types = {**types, name: kind if types.get(name, kind) == kind else None}
        return types.get(value.attr), False
    return None, False


def _class_nodes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    out: dict[str, ast.ClassDef] = {}
    stack: list[tuple[ast.AST, str]] = [(node, "") for node in tree.body]
    while stack:
        node, prefix = stack.pop()
        if isinstance(node, ast.ClassDef):
            name = prefix + node.name
            out.setdefault(name, node)
            stack.extend((child, name + ".") for child in node.body)
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend((child, prefix) for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
    return out


def passed_parameters(facts: list[Change], modules: dict[str, Module], texts: dict[str, str], *,
                      receivers: bool = True) -> list[Change]:
    """The facts, each signature fact that adds parameters with a default saying which of them an upstream call
    site passes (``detail`` + `` (upstream passes eps and x)``): a call in one of the changed files (``modules``
    by path, ``texts`` their source) passing the parameter by keyword or positionally at its place or beyond.

    A module-level function's call site is any call of that name; a constructor's (``__init__``), a call of the
    class's name. A method's (with ``receivers``, the default) is a call ``r.m(...)`` on a receiver known to be
    a class of the method's own hierarchy in the changed files (the class, its ancestors, its descendants):
    ``self``/``cls`` in a method of such a class, the class's name (``Runner.m(obj, …)``, ``obj`` taking the
    place of ``self``), a name or ``self.x`` given that type by an annotation or a constructor call in the same
    function or the class's ``__init__``. A receiver known to be another class does not count; one of unknown
    type (``self.drafter.m(...)``, an untyped parameter) counts only when no class of the changed files outside
    that hierarchy defines a method of that name (the fact then says `` to an untyped receiver``). Without
    ``receivers`` (the earlier rule, for comparison) any call ``m(...)`` or ``x.m(...)`` counts.

    A call through ``super()`` is the upstream's own chain, not a call of an override, and is not counted. When
    every such call is ``self.m(...)`` inside methods of the fact's own class, the detail names those methods
    (`` from Runner.a``), for the reader: where upstream passes it. Upstream passing it is what breaks an
    override or a replacement that does not take it; a parameter nobody passes yet only asks for a check."""
    # callee name → [(fact index, parameter, its position among the non-self positional parameters or -1,
    #                 "function" | "init" | "method", the method's class (last name), it takes self)]
    wanted: dict[str, list[tuple[int, str, int, str, str, bool]]] = {}
    for n, fact in enumerate(facts):
        if fact.kind != "signature":
            continue
        names = added_with_default(fact.detail)
        if not names:
            continue
        module = modules.get(fact.path)
        d = module.defs.get(fact.symbol) if module else None
        if d is None or d.kind not in ("function", "method"):
            continue
        positional = [p.name for p in d.params if p.kind in ("posonly", "pos")]
        takes_self = d.kind == "method" and bool(positional) and positional[0] == "self"
        if d.kind == "method" and positional and positional[0] in ("self", "cls"):
            positional = positional[1:]
        callee = d.parent.rpartition(".")[2] if d.leaf == "__init__" else d.leaf
        if not callee or (d.leaf == "__init__" and d.kind != "method"):
            continue
        role: str = "init" if d.leaf == "__init__" else d.kind
        for name in names:
            wanted.setdefault(callee, []).append((n, name, positional.index(name) if name in positional else -1,
                                                  role, _leaf(d.parent), takes_self))
    if not wanted:
        return facts
    classes = _Classes(modules.values()) if receivers else None
    callees = "|".join(re.escape(c) for c in sorted(wanted))
    # ``m(``, or a method named in a string (``collective_rpc("m", args=(…))``: :func:`_by_rpc`)
    pattern = re.compile(r"\b(?:" + callees + r")\s*\(|[\"'](?:" + callees + r")[\"']")
    passed: dict[int, set[str]] = {}
    #: fact index → the methods of its class whose self-calls pass it; None once another call does.
    callers: dict[int, set[str] | None] = {}
    #: fact index → whether every call passing it is on a receiver of unknown type.
    untyped: dict[int, bool] = {}
    for path, module in modules.items():
        text = texts.get(path)
        if module.tree is None or not text or not pattern.search(text):
            continue
        cache: dict[object, dict[str, str | None]] = {}
        class_nodes: dict[str, ast.ClassDef] | None = None
        for node, owner, klass, function in _calls(module.tree.body, "", ""):
            func = node.func
            through_self = False
            value: ast.expr | None = None
            rpc = _by_rpc(node)
            if rpc is not None:
                callee, keywords, count = rpc
            else:
                if isinstance(func, ast.Attribute):
                    callee = func.attr
                    value = func.value
                    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "super":
                        continue
                    through_self = isinstance(value, ast.Name) and value.id == "self"
                elif isinstance(func, ast.Name):
                    callee = func.id
                else:
                    continue
                keywords = {k.arg for k in node.keywords if k.arg}
                count = 0
                for arg in node.args:
                    if isinstance(arg, ast.Starred):
                        break
                    count += 1
            targets = wanted.get(callee)
            if not targets:
                continue
            known: tuple[str | None, bool] | None = None
            for n, name, position, role, own, takes_self in targets:
                shift, blind = 0, False
                if rpc is not None:
                    if role != "method" or (classes is not None and klass
                                            and _leaf(klass) in classes.hierarchy(own)):
                        continue  # a method named in a string runs on other objects, not on the caller's own class
                    blind = True
                elif classes is not None and role == "method":
                    if value is None:
                        continue  # a bare ``m(...)`` calls a function of that name, not the method
                    if known is None:
                        if class_nodes is None:
                            class_nodes = _class_nodes(module.tree)
                        known = _receiver(value, klass, function, classes, cache, class_nodes)
                    kind, unbound = known
                    family = classes.hierarchy(own)
                    if kind is not None and kind in classes.bases:
                        if kind not in family:
                            ancestry = classes.ancestry(kind)
                            if any(callee in classes.own.get(c, ()) for c in ancestry) \
                                    or not classes.unresolved(kind):
                                continue  # another class's method of that name
                            kind = None
                    else:
                        kind = None
                    if kind is None:
                        if not classes.methods.get(callee, set()) <= family:
                            continue  # the name is also another class's method: the receiver may be either
                        blind = True
                    shift = 1 if unbound and takes_self else 0
                if name in keywords or 0 <= position < count - shift:
                    passed.setdefault(n, set()).add(name)
                    untyped[n] = untyped.get(n, True) and blind
                    fact = facts[n]
                    own_class = fact.symbol.rpartition(".")[0]
                    if through_self and path == fact.path and owner.rpartition(".")[0] == own_class \
                            and fact.symbol.rpartition(".")[2] != "__init__":
                        listed = callers.setdefault(n, set())  # None: the callers are not listed
                        if listed is not None:
                            listed.add(owner)
                    else:
                        callers[n] = None
    if not passed:
        return facts
    out = list(facts)
    for n, passed_names in passed.items():
        fact = out[n]
        given = [p for p in added_with_default(fact.detail) if p in passed_names]
        said = " and ".join(given)
        via = callers.get(n)
        if via:
            said += " from " + " and ".join(sorted(via))
        elif untyped.get(n):
            said += UNTYPED
        out[n] = fact.model_copy(update={"detail": fact.detail + PASSES.format(said), "passed": tuple(given),
                                         "callers": tuple(sorted(via or ())),
                                         "receiver": "untyped" if not via and untyped.get(n) else ""})
    return out


def own_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Every node of a function's body but those of the functions, lambdas and classes it defines: their own
    scopes (a nested function's ``return`` or assignment is not the function's)."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))
