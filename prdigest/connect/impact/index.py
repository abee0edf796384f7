"""What a downstream repository takes from the upstream, read statically with ``ast`` (never imported).

One pass per file extracts a :class:`FileSummary` (its imports, classes with their bases and methods, attribute
assignments, ``setattr`` calls, dotted strings, calls and attribute reads, each with its line); a second pass
resolves every local name to the upstream's dotted name (``from vllm.x import Y as Z``: ``Z`` → ``vllm.x.Y``;
``import vllm.x as z``: ``z.f`` → ``vllm.x.f``), following the downstream's own re-exports
(``from vllm_ascend.compat import FusedMoE`` where ``compat`` imported it from vLLM) and its own subclass chains.
Attributes read on objects of unknown type (``ctx.meta.max_tokens``) are kept by name (``attribute`` uses,
one line per file and name), leaving out every name the downstream itself assigns, defines or ``setattr``s:
what the match can say of them is "an upstream class lost an attribute of that name". A class of the downstream's
that it puts in a slot upstream reads by its dotted path (``parallel_config.worker_cls = "ds.worker.MyWorker"``) and
that subclasses nothing of the upstream's is kept as ``<registered>.SLOT`` with its methods (:data:`REGISTERED`).
The result is a list of :class:`Use` rows: what, how and where.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal, cast, get_args

from prdigest.collect.facts.hierarchy import BUILTIN_METHODS
from prdigest.connect.impact.members import members
from prdigest.connect.impact.receivers import called_methods, unknown_receivers
from prdigest.connect.impact.siblings import Siblings
from prdigest.connect.impact.typing_only import typing_only_lines, with_mark
from prdigest.kernel import safe_parse
from prdigest.kernel.factlines import unique
from prdigest.kernel.pymodule import module_and_package

#: How a downstream uses an upstream name; ``reads`` (an attribute read through an imported name) and
#: ``attribute`` (``obj.x`` on an object of unknown type, by the attribute's name alone: symbol ``.x``) and
#: ``method`` (``self.capturer.clear()``: a method called on an object of unknown type, by name: symbol ``.clear``)
#: and ``member`` (``vllm_config.cache_config.x`` read or set: on an object named after a class, symbol
#: ``.cache_config.x``; members.py) are shown as a call (``Impact.how`` has no separate word for them).
UseHow = Literal["imports", "subclasses", "overrides", "patches", "calls", "reads", "attribute", "method", "member"]
#: The kinds of use as a set: checked once per cached row (``get_args`` per row cost a warm index a second).
_HOWS: frozenset[str] = frozenset(get_args(UseHow))

#: Bumped whenever what the index extracts changes: cached indexes and file summaries of older versions are rebuilt.
INDEX_VERSION = 17

#: In an ``__init__`` override's ``detail``, after its parameters, when it does not call the base's ``__init__``
#: (``;own-init;sets=a,b``: the ``self`` attributes the class's methods set): upstream attributes its base's
#: ``__init__`` now sets are missing from its instances.
OWN_INIT = ";own-init;sets="
#: In an override's ``detail``, after its parameters, when its body calls the base's method of the same name
#: (``super().forward(…)``): a parameter it still takes is most likely passed on, and a base method that is gone
#: fails there.
CALLS_SUPER = ";super"
#: In a call's ``detail``: it spreads ``*args`` or ``**kwargs`` (what it passes cannot be read).
SPREAD = ";spread"
#: In a call's ``detail``: its value is used (assigned, tested, returned, passed on: any call but a statement of its
#: own, ``f(x)`` or ``await f(x)`` on its line): a function that now returns nothing breaks it.
USED = ";used"
#: In the ``detail`` of an entry into a mapping (``R[k] = v``, a call of ``R.__setitem__``): the key as written, a
#: dotted name or a string (``;key=PlatformEnum.OOT``), empty when it is any other expression.
KEY = ";key="
#: The method an entry into a mapping's list is recorded as (``R[k].append(v)``: ``R.__entry__``, with :data:`KEY`);
#: no type has it, so only the registry match reads it.
ENTRY = "__entry__"
_ENTERING = frozenset({"append", "extend", "insert", "add", "update"})
#: In an override's (or an installed function's) ``detail``, right after its parameters: its return annotation,
#: kept to the characters a type is written with (``;returns=torch.Tensor | None``): whether it already returns
#: what upstream now promises.
RETURNS = ";returns="
#: In the ``detail`` of an override (or an installed function) with no return annotation, in place of
#: :data:`RETURNS`: its body returns no value (no ``return <value>``, no ``yield``, its last statement no ``raise``),
#: so it returns ``None`` where upstream may now read a value.
NO_VALUE = ";no-value"
#: In an ``__init__`` override's ``detail``: the downstream names its class in a string as a dotted path
#: (``"ds.sched.MyScheduler"``, a class it configures upstream to build), so upstream builds it, through whatever
#: variable its configuration fills.
CONFIGURED = ";configured"
#: In an override's ``detail``: the downstream calls a method of that name itself (``self.m(…)`` in the class,
#: ``obj.m(…)`` anywhere on an object that is no imported name): it stays reached when upstream stops calling it.
CALLED = ";called"
#: The module part of a registered use's symbol (``<registered>.worker_cls.profile``): a method of a downstream
#: class that subclasses nothing of the upstream's and is put in the slot ``worker_cls`` by its dotted path; the
#: match reads it as an override of the upstream class a fact's ``registered`` names that slot for.
REGISTERED = "<registered>"

Parts = tuple[str, ...]


@dataclass(frozen=True)
class Use:
    """One use of an upstream name in the downstream: ``symbol`` is the upstream's full dotted name
    (``vllm.model_executor.layers.fused_moe.FusedMoE``, ``…FusedMoE.forward`` for an override), ``path`` the
    downstream file (relative to its root) and ``line`` 1-based. ``detail``: an override's parameters
    (``self,x,dtype=``), a call's keywords and positional count (``kw=a,b;n=2``), an alias (``as FM``)."""

    path: str
    line: int
    symbol: str
    how: UseHow
    detail: str = ""
    #: The downstream's own name at that line: the alias, the subclass, the local module name.
    local: str = ""
    #: The innermost function holding the use (``Runner.execute_model``; an override: the method itself), empty
    #: at module level: the match flags one use per upstream fact and scope, not one per line.
    scope: str = ""

    def row(self) -> list[object]:
        return [self.path, self.line, self.symbol, self.how, self.detail, self.local, self.scope]

    @classmethod
    def from_row(cls, row: Sequence[object]) -> "Use":
        path, line, symbol, how, detail, local, scope = row
        if how not in _HOWS:  # a cached row another version of the index wrote
            raise ValueError(f"impact index row {path}:{line}: unknown use {how!r}")
        if type(path) is str and type(line) is int and type(symbol) is str and type(detail) is str \
                and type(local) is str and type(scope) is str:
            # Every row this index wrote: its fields set as the frozen dataclass's own __init__ sets them, without
            # its seven object.__setattr__ calls (a warm index reads tens of thousands of rows).
            use = object.__new__(cls)
            use.__dict__.update(path=path, line=line, symbol=symbol, how=how, detail=detail, local=local,
                                scope=scope)
            return use
        # cast: ``how`` was checked just above
        return cls(str(path), line if type(line) is int else int(str(line)), str(symbol), cast(UseHow, how),
                   str(detail), str(local), str(scope))


# --- one file ------------------------------------------------------------------------------------------------


@dataclass
class ClassDef:
    name: str
    line: int
    bases: list[Parts]
    #: (method name, line, parameters as ``a,b=,*args,c=,**kw``)
    methods: list[tuple[str, int, str]]
    #: Whether it defines an ``__init__`` that calls no ``….__init__`` (``super().__init__``, ``Base.__init__``).
    own_init: bool = False
    #: Its last line (the ``self.x`` it sets are the file's assignments between ``line`` and this).
    end: int = 0
    #: The methods whose body calls the base's method of the same name (``super().forward(…)``).
    supers: set[str] = field(default_factory=set)


@dataclass
class FileSummary:
    """What one file says, before any name is resolved (picklable, cheap to build in a worker)."""

    path: str
    module: str
    is_package: bool
    #: (module, name or None for ``import m``, bound local name, line, level)
    imports: list[tuple[str, str | None, str, int, int]] = field(default_factory=list)
    classes: list[ClassDef] = field(default_factory=list)
    #: (target chain, line): ``vllm.x.Y = …``, ``FusedMoE.forward = …``
    assigns: list[tuple[Parts, int]] = field(default_factory=list)
    #: (object chain, attribute, line): ``setattr(vllm.x, "Y", …)``, ``patch.object(FusedMoE, "forward")``
    setattrs: list[tuple[Parts, str, int]] = field(default_factory=list)
    #: (dotted string, line): ``"vllm.x.Y"`` in a ``mock.patch`` or a patch table
    strings: list[tuple[str, int]] = field(default_factory=list)
    #: (function chain, line, ``kw=a,b;n=2``)
    calls: list[tuple[Parts, int, str]] = field(default_factory=list)
    reads: list[tuple[Parts, int]] = field(default_factory=list)
    #: (attribute, line): ``f().x``, ``a[0].x``: attributes read on an expression (those on a chain of names are
    #: in ``reads`` and ``calls``), for attributes of upstream objects of unknown type
    attributes: list[tuple[str, int]] = field(default_factory=list)
    #: (method, line): ``f().m(…)``, ``a[0].m(…)``: methods called on an expression (on a chain: in ``calls``)
    called: list[tuple[str, int]] = field(default_factory=list)
    #: Attribute names this file defines: assigned (``obj.x = …``), class-level names, methods
    defines: set[str] = field(default_factory=set)
    #: (first line, last line, dotted name) of every function and method, for the scope of a use
    functions: list[tuple[int, int, str]] = field(default_factory=list)
    #: (name, chain, line): ``M = vllm.x.y`` binds ``M`` as an alias (a patch through it: ``M.f = g``)
    aliases: list[tuple[str, Parts, int]] = field(default_factory=list)
    #: (target chain, function name): ``Attention.forward = patched_forward`` (its ``self`` is an Attention)
    installs: list[tuple[Parts, str]] = field(default_factory=list)
    #: Module-level function → its parameters (``a,b=,**kw``): what a patch installing it takes.
    params: dict[str, str] = field(default_factory=dict)
    #: Line of an assignment ``X.f = g`` → ``g`` (the function a patch installs, by its local name).
    values: dict[int, str] = field(default_factory=dict)
    #: (method, line, call detail): ``super().m(…)``, a call of the base's ``m``
    super_calls: list[tuple[str, int, str]] = field(default_factory=list)
    error: str = ""
    #: Lines of the imports under a module-level ``if TYPE_CHECKING:`` (typing_only.py): never run.
    typing_only: set[int] = field(default_factory=set)
    #: (attribute, line): ``getattr(obj, "x", …)``, ``hasattr(obj, "x")``: the file allows for ``x`` being absent there.
    guards: list[tuple[str, int]] = field(default_factory=list)
    #: (slot, dotted string, line): the downstream's own dotted name put in a slot upstream reads
    #: (``parallel_config.worker_cls = "ds.worker.MyWorker"``, ``worker_cls="…"``, ``{"worker_cls": "…"}``)
    registers: list[tuple[str, str, int]] = field(default_factory=list)


def _chain(node: ast.AST) -> Parts | None:
    """``a.b.c`` as ``("a", "b", "c")``; None for anything but a name and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    return None


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = len(a.defaults)
    out = [p.arg + ("=" if i >= len(positional) - defaults else "") for i, p in enumerate(positional)]
    if a.vararg:
        out.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        out.append("*")
    out += [p.arg + ("=" if d is not None else "") for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        out.append("**" + a.kwarg.arg)
    return ",".join(out)


def _returned(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> str:
    """``;returns=T`` for a function annotated with its return type (``lines``: the file's source lines; T as
    written, quotes and anything a type is not spelled with dropped), else ""."""
    node = fn.returns
    if node is None or node.end_lineno is None or node.end_col_offset is None or node.end_lineno > len(lines):
        return ""
    # the offsets count UTF-8 bytes; read off the source rather than ``ast.unparse`` (a cold index runs this on
    # every method of thousands of files)
    rows = [row.encode("utf-8") for row in lines[node.lineno - 1:node.end_lineno]]
    rows[-1] = rows[-1][:node.end_col_offset]
    rows[0] = rows[0][node.col_offset:]
    text = b" ".join(rows).decode("utf-8", "replace")
    text = " ".join(_NOT_A_TYPE.sub("", text).split())[:200]
    return f"{RETURNS}{text}" if text else ""


_NOT_A_TYPE = re.compile(r"[^\w.\[\], |]")
def _is_docstring(node: ast.stmt) -> bool:
    """Whether a statement is a string on its own (a docstring: its words may say "return x")."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


#: A ``return`` with a value other than ``None``, or a ``yield``, anywhere in a function's text.
_GIVES_VALUE = re.compile(r"\breturn\b(?![ \t]*(?:None)?[ \t]*(?:#.*)?$)|\byield\b", re.M)


def _key(node: ast.expr) -> str:
    """A subscript's key as :data:`KEY` keeps it: a dotted name, or a short string or number (its ``repr``)."""
    chain = _chain(node)
    if chain is not None:
        return ".".join(chain)
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int)) and len(repr(node.value)) <= 80:
        return re.sub(r"[^\w.'\"-]", "", repr(node.value))
    return ""


def module_name(path: str) -> tuple[str, bool]:
    """``pkg/a/b.py`` → (``pkg.a.b``, False); ``pkg/a/__init__.py`` → (``pkg.a``, True) (the kernel's
    :func:`~prdigest.kernel.pymodule.module_and_package`)."""
    return module_and_package(path)


class _TooDeep(Exception):
    """A tree deeper than ``safe_parse.MAX_DEPTH``: the file is named and skipped, as the parser's caps do."""


class _Reader:
    """One walk over a module's tree, filling a :class:`FileSummary`."""

    def __init__(self, summary: FileSummary, dotted: re.Pattern[str], source: bytes | str) -> None:
        self.s = summary
        self.dotted = dotted
        # the downstream's own dotted names in strings too (``"ds.sched.MyScheduler"``: a class it hands upstream)
        self.own = _dotted((summary.module.split(".", 1)[0],)) if summary.module else None
        self.source = source
        self._lines: list[str] | None = None
        #: The calls that are statements of their own (their value dropped), by ``id``: the tree outlives the walk.
        self._dropped: set[int] = set()

    def _source_lines(self) -> list[str]:
        if self._lines is None:
            text = self.source.decode("utf-8", "replace") if isinstance(self.source, bytes) else self.source
            self._lines = text.splitlines()
        return self._lines

    def lines(self, start: int, end: int) -> str:
        """The source's lines ``start``..``end`` (1-based, inclusive)."""
        return "\n".join(self._source_lines()[start - 1:end])

    def _returned(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The function's return annotation as :data:`RETURNS` says it (read off its source line), or ""."""
        if fn.returns is not None:
            return _returned(fn, self._source_lines())
        if fn.body and isinstance(fn.body[-1], ast.Raise):
            return ""  # it never returns: an unimplemented hook, not one returning None
        # read off the source (a walk costs more); a nested function's ``return x`` only leaves it unsure
        body = fn.body[1:] if fn.body and _is_docstring(fn.body[0]) else fn.body
        text = self.lines(body[0].lineno, fn.end_lineno or fn.lineno) if body else ""
        return "" if _GIVES_VALUE.search(text) else NO_VALUE

    def walk(self, node: ast.AST) -> None:
        """Every node the handlers do not prune, without recursion; raises :class:`_TooDeep` past
        ``safe_parse.MAX_DEPTH`` levels (the depth counted here: a second pass over the tree cost a sixth of a
        cold index). A handler's children are visited last first, the others in the tree's order."""
        handlers = self._HANDLERS
        # Below this depth no node's leaves can pass the cap: they are left on the tree (a name, its ``Load``,
        # an operator hold nothing the handlers read, and were half of the nodes pushed); deeper, every node is
        # pushed, so a tree is refused exactly when one of its nodes lies past the cap.
        near = safe_parse.MAX_DEPTH - _LEAF_HEIGHT
        stack: list[tuple[ast.AST, int]] = [(node, 1)]
        pop, push = stack.pop, stack.append
        while stack:
            node, depth = pop()
            handler = handlers.get(type(node))
            children = handler(self, node) if handler is not None else None
            if depth > near:
                if depth > safe_parse.MAX_DEPTH:
                    raise _TooDeep
                exact = reversed(list(ast.iter_child_nodes(node))) if children is None else children
                stack.extend((child, depth + 1) for child in exact)
                continue
            depth += 1
            if children is None:  # ast.iter_child_nodes, inlined (it runs for most nodes), less _SCALARS fields
                kind = type(node)
                fields = _FIELDS.get(kind)
                if fields is None:
                    fields = _FIELDS[kind] = tuple(f for f in getattr(kind, "_fields", ()) if f not in _SCALARS)
                below: list[Any] = []
                for name in fields:
                    value = getattr(node, name, None)
                    if type(value) is list:
                        below += value  # nodes, or names (``global x``) and None (``{**d}``'s key): skipped below
                    elif isinstance(value, ast.AST):
                        below.append(value)
                below.reverse()
                children = below
            for child in children:
                if type(child) not in _SKIPPED:
                    push((child, depth))

    def _import(self, node: ast.Import) -> list[ast.AST]:
        for alias in node.names:
            bound = alias.asname or alias.name.split(".")[0]
            # ``import a.b`` binds ``a`` (to the package); ``import a.b as z`` binds z to a.b.
            target = alias.name if alias.asname else alias.name.split(".")[0]
            self.s.imports.append((alias.name, None, f"{bound}={target}", node.lineno, 0))
        return []

    def _import_from(self, node: ast.ImportFrom) -> list[ast.AST]:
        for alias in node.names:
            self.s.imports.append((node.module or "", alias.name, alias.asname or alias.name, node.lineno,
                                   node.level))
        return []

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.s.functions.append((node.lineno, node.end_lineno or node.lineno, node.name))
        if node.col_offset == 0:  # module level: a function a patch may install
            self.s.params[node.name] = _params(node) + self._returned(node)
        return None

    def _class(self, node: ast.ClassDef) -> list[ast.AST]:
        # ``Base[A, B]``: a subscripted generic base is its class
        bases = [c for c in (_chain(b.value if isinstance(b, ast.Subscript) else b) for b in node.bases) if c]
        functions = [n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        methods = [(n.name, n.lineno, _params(n) + self._returned(n)) for n in functions]
        init = next((n for n in functions if n.name == "__init__"), None)
        # read off the source: a walk of the method would cost more than the rest of the class
        own_init = init is not None and not _CALLS_INIT.search(self.lines(init.lineno, init.end_lineno or init.lineno))
        supers = {n.name for n in functions if _calls_super(n.name, self.lines(n.lineno, n.end_lineno or n.lineno))}
        self.s.classes.append(ClassDef(node.name, node.lineno, bases, methods, own_init, node.end_lineno or 0, supers))
        self.s.defines.update(n.name for n in functions)
        self.s.defines.update(t.id for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                              for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                              if isinstance(t, ast.Name))
        return [*node.decorator_list, *node.keywords, *node.body]

    def _assign(self, node: ast.Assign | ast.AugAssign | ast.AnnAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        own = self._own_string(node.value)
        if own is not None:  # ``config.worker_cls = "ds.worker.MyWorker"``
            self.s.registers += [(t.attr, own, node.lineno) for t in targets if isinstance(t, ast.Attribute)]
        value = _chain(node.value) if isinstance(node, ast.Assign) and node.value is not None else None
        if value is None and isinstance(node, ast.Assign):
            value = _imported_module(node.value)
        if value is not None:  # ``M = vllm.x.y``, ``N = M``, ``M = importlib.import_module("vllm.x.y")``
            self.s.aliases += [(t.id, value, t.lineno) for t in targets if isinstance(t, ast.Name)]
        for target in targets:
            for t in (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]):
                if isinstance(t, ast.Subscript):  # ``R[k] = v``: an entry into ``R`` (a registry), with its key
                    owner = _chain(t.value)
                    if owner is not None:
                        self.s.calls.append(((*owner, "__setitem__"), t.lineno, f"kw=;n=2{KEY}{_key(t.slice)}"))
                    continue
                if isinstance(t, ast.Attribute):
                    self.s.defines.add(t.attr)
                    chain = _chain(t)
                    if chain:
                        self.s.assigns.append((chain, t.lineno))
                        if isinstance(node.value, ast.Name) and len(chain) > 1:
                            self.s.installs.append((chain, node.value.id))
                            self.s.values[t.lineno] = node.value.id
        return None

    def _call(self, node: ast.Call) -> list[ast.AST] | None:
        func = _chain(node.func)
        args = node.args
        # loops rather than generators: most calls pass a few arguments, and this runs for every call
        named = [k.arg for k in node.keywords]
        keywords = ",".join([k for k in named if k]) if named else ""
        # positional arguments before any ``*args``; a call spreading ``*args``/``**kwargs`` is marked
        positional = len(args)
        for i, a in enumerate(args):
            if isinstance(a, ast.Starred):
                positional = i
                break
        spread = SPREAD if positional < len(args) or None in named else ""
        for k in node.keywords:
            own = self._own_string(k.value) if k.arg else None
            if own is not None and k.arg:  # ``f(worker_cls="ds.worker.MyWorker")``
                self.s.registers.append((k.arg, own, k.value.lineno))
        detail = f"kw={keywords};n={positional}{spread}{'' if id(node) in self._dropped else USED}"
        if func is not None:
            if func in (("getattr",), ("hasattr",)) and len(args) >= 2 and isinstance(args[1], ast.Constant) \
                    and isinstance(args[1].value, str):
                self.s.guards.append((args[1].value, node.lineno))
            if (func[-1] == "setattr" and len(func) == 1 or func[-2:] == ("patch", "object")) and len(args) >= 2:
                obj, name = _chain(args[0]), args[1]
                if obj and isinstance(name, ast.Constant) and isinstance(name.value, str):
                    self.s.setattrs.append((obj, name.value, node.lineno))
                    self.s.defines.add(name.value)
            self.s.calls.append((func, node.lineno, detail))
            # The function's own chain is recorded as the call; its arguments are walked.
            return [*args, *node.keywords]
        target = node.func
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Call) \
                and _chain(target.value.func) == ("super",):
            self.s.super_calls.append((target.attr, node.lineno, detail))
            return [*args, *node.keywords]  # ``super().m`` is the base's method, no attribute of unknown type
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Subscript) and target.attr in _ENTERING:
            owner = _chain(target.value.value)
            if owner is not None:  # ``R[k].append(v)``: an entry into ``R`` under ``k`` (a registry of lists)
                self.s.calls.append(((*owner, ENTRY), node.lineno, f"kw=;n=1{KEY}{_key(target.value.slice)}"))
        if isinstance(target, ast.Attribute):
            self.s.called.append((target.attr, node.lineno))
        return None

    def _attribute(self, node: ast.Attribute) -> list[ast.AST] | None:
        chain = _chain(node)
        if chain is None:
            if isinstance(node.ctx, ast.Load):
                self.s.attributes.append((node.attr, node.lineno))
            return None
        if isinstance(node.ctx, ast.Load):
            self.s.reads.append((chain, node.lineno))
        return []

    def _expr(self, node: ast.Expr) -> list[ast.AST] | None:
        # A docstring (or any bare string statement) names nothing that runs.
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return []
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Call):
            self._dropped.add(id(value))
        return None

    def _own_string(self, node: ast.expr | None) -> str | None:
        """A string naming a dotted path of the downstream's own (a class it hands upstream), else None."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and self.own is not None \
                and len(node.value) < 200 and self.own.fullmatch(node.value):
            return node.value
        return None

    def _dict(self, node: ast.Dict) -> None:
        for key, value in zip(node.keys, node.values):
            own = self._own_string(value)
            if own is not None and isinstance(key, ast.Constant) and isinstance(key.value, str) \
                    and key.value.isidentifier():  # ``{"worker_cls": "ds.worker.MyWorker"}``
                self.s.registers.append((key.value, own, value.lineno))
        return None

    def _constant(self, node: ast.Constant) -> list[ast.AST]:
        value = node.value
        if isinstance(value, str) and len(value) < 200 and (
                self.dotted.fullmatch(value) or (self.own is not None and self.own.fullmatch(value))):
            self.s.strings.append((value, node.lineno))
        return []

    #: Each handler takes the node type it is keyed by (hence ``Any``); one returning None walks all children.
    _HANDLERS: dict[type[ast.AST], Callable[[_Reader, Any], list[ast.AST] | None]] = {
        ast.Import: _import, ast.ImportFrom: _import_from, ast.ClassDef: _class, ast.Assign: _assign,
        ast.AugAssign: _assign, ast.AnnAssign: _assign, ast.Call: _call, ast.Attribute: _attribute,
        ast.Expr: _expr, ast.Constant: _constant, ast.FunctionDef: _function, ast.AsyncFunctionDef: _function,
        ast.Dict: _dict,
    }


#: Node types no handler reads that hold nothing a handler reads (a name holds only its ``Load``): never pushed.
_LEAVES: frozenset[type[ast.AST]] = frozenset(
    {ast.Name, *(t for base in (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
                 for t in base.__subclasses__())})
#: How many levels a skipped leaf can reach below the node that holds it (a name, then its ``Load``).
_LEAF_HEIGHT = 2
#: Fields that never hold a node a handler reads (names, numbers, and the leaves' own fields): not looked at.
_SCALARS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "module", "level", "kind", "conversion", "is_async",
                      "simple", "type_comment"})
_FIELDS: dict[type, tuple[str, ...]] = {}
#: What the walk never pushes: the leaves, and the names and Nones a node's lists hold beside nodes.
_SKIPPED: frozenset[type] = _LEAVES | {str, type(None)}


_CALLS_INIT = re.compile(r"\.__init__\s*\(")


def _imported_module(value: ast.expr) -> Parts | None:
    """``importlib.import_module("vllm.x.y")`` as the chain ``("vllm", "x", "y")``; None for anything else."""
    if not (isinstance(value, ast.Call) and value.args and isinstance(value.args[0], ast.Constant)
            and isinstance(value.args[0].value, str)):
        return None
    func = _chain(value.func)
    if func is None or func[-1] != "import_module" or not re.fullmatch(r"[A-Za-z_][\w.]*", value.args[0].value):
        return None
    return tuple(value.args[0].value.split("."))


def _calls_super(name: str, source: str) -> bool:
    """Whether a method's source calls the base's method of its own name (``super().f(``, ``Base.f(self``)."""
    # Its ``def`` line names it once, never after a dot: a call needs a second mention. Most methods have none,
    # and compiling and running their pattern was a tenth of a cold index.
    return source.count(name) > 1 and _super_call(name).search(source) is not None


@lru_cache(maxsize=4096)
def _super_call(name: str) -> re.Pattern[str]:
    """The pattern of a call of the base's ``name`` (compiled once per method name: thousands of files share
    their method names, and ``re``'s own cache of 512 patterns thrashed on a 3,000-file tree)."""
    return re.compile(rf"(?:\bsuper\([^)]*\)|\b[A-Z]\w*)\s*\.\s*{re.escape(name)}\s*\(")


def dotted_pattern(upstream: Sequence[str]) -> re.Pattern[str]:
    """A string naming something inside an upstream package: ``vllm.x.Y`` (at least one dot)."""
    return _dotted(tuple(sorted(upstream)))


@lru_cache(maxsize=64)
def _dotted(upstream: tuple[str, ...]) -> re.Pattern[str]:
    roots = "|".join(re.escape(u) for u in upstream)
    return re.compile(rf"(?:{roots})(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def summarize(path: str, source: bytes | str, upstream: Sequence[str]) -> FileSummary:
    """The :class:`FileSummary` of one file (``path`` relative to the downstream's root); a file that does
    not parse gets ``error`` set and nothing else."""
    module, is_package = module_name(path)
    summary = FileSummary(path, module, is_package)
    # too large, too deep or not Python: named, skipped (the depth is counted by the walk itself)
    tree, problem = safe_parse.parse(source, filename=path, max_depth=0)
    if tree is None:
        summary.error = problem
        return summary
    try:
        _Reader(summary, dotted_pattern(upstream), source).walk(tree)
    except (_TooDeep, RecursionError):
        return FileSummary(path, module, is_package, error=safe_parse.too_deep())
    if isinstance(tree, ast.Module):
        summary.typing_only = typing_only_lines(tree)
    return summary


# --- resolution over every file ---------------------------------------------------------------------------------


def _is_upstream(name: str, upstream: Sequence[str]) -> bool:
    return any(name == u or name.startswith(u + ".") for u in upstream)


def _absolute(summary: FileSummary, module: str, level: int) -> str:
    if not level:
        return module
    base = summary.module.split(".") if summary.module else []
    if not summary.is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, module] if module else base)


def resolve_uses(summaries: Iterable[FileSummary], upstream: Sequence[str]) -> list[Use]:
    """Every use of an upstream name in ``summaries`` (one downstream), resolved through imports, the
    downstream's own re-exports and its subclass chains."""
    files = [s for s in summaries if not s.error]
    by_module = {s.module: s for s in files}
    # Each file's local names bound to an upstream dotted name, or to a downstream module's name (to follow).
    bindings: dict[str, dict[str, str]] = {s.path: {} for s in files}
    pending: list[tuple[FileSummary, str, str]] = []  # (file, local, downstream dotted) to resolve
    uses: list[Use] = []
    for s in files:
        own = bindings[s.path]
        for module, name, bound, line, level in s.imports:
            if name is None:  # import a.b [as z]: bound is "local=target"
                local, bound_to = bound.split("=", 1)
                if _is_upstream(module, upstream):
                    own[local] = bound_to
                    uses.append(Use(s.path, line, module, "imports", local=local))
                continue
            full = _absolute(s, module, level)
            if name == "*":
                if _is_upstream(full, upstream):
                    uses.append(Use(s.path, line, f"{full}.*", "imports"))
                continue
            if _is_upstream(full, upstream):
                own[bound] = f"{full}.{name}"
                detail = f"as {bound}" if bound != name else ""
                uses.append(Use(s.path, line, f"{full}.{name}", "imports",
                                detail=with_mark(detail) if line in s.typing_only else detail, local=bound))
            else:
                pending.append((s, bound, f"{full}.{name}"))
    # Downstream re-exports: a name imported from a downstream module that itself bound it upstream.
    # Iterated a few times so that a chain of re-exports (a → b → vLLM) resolves.
    for _ in range(4):
        changed = False
        for s, local, dotted in pending:
            if local in bindings[s.path]:
                continue
            module, _, name = dotted.rpartition(".")
            source = by_module.get(module)
            target = bindings.get(source.path, {}).get(name) if source is not None else None
            if target is not None:
                bindings[s.path][local] = target
                changed = True
        if not changed:
            break
    for s, local, dotted in pending:
        target = bindings[s.path].get(local)
        if target is not None:
            line = next((ln for m, n, b, ln, lv in s.imports if b == local), 0)
            uses.append(Use(s.path, line, target, "imports", detail=f"via {dotted.rpartition('.')[0]}",
                            local=local))

    # Names reached through the downstream's own modules: ``compat.X``, ``ds.compat.X``, ``from ds.compat import *``
    by_path = {s.path: s for s in files}
    siblings = Siblings.of(((s.path, s.module, s.imports) for s in files),
                           lambda path, module, level: _absolute(by_path[path], module, level))

    def bindings_of(module: str) -> dict[str, str]:
        source = by_module.get(module)
        return bindings[source.path] if source is not None else {}

    for s in files:
        for name, target in siblings.star_names(s.path, bindings_of).items():
            bindings[s.path].setdefault(name, target)

    def resolve(path: str, chain: Parts) -> str | None:
        target = bindings[path].get(chain[0])
        if target is None:
            return siblings.resolve(path, chain, bindings_of)
        return ".".join([target, *chain[1:]])

    # Aliases: ``M = vllm.x.y`` (in line order, so ``N = M.z`` follows it); a name also imported keeps the import.
    for s in files:
        for name, chain, _ in sorted(s.aliases, key=lambda a: a[2]):
            target = resolve(s.path, chain)
            if target is None and _is_upstream(".".join(chain), upstream):
                target = ".".join(chain)  # ``importlib.import_module("vllm.x")``: the module, imported by name
            if target is not None and _is_upstream(target, upstream) and name not in bindings[s.path]:
                bindings[s.path][name] = target

    # Classes: upstream bases directly, or through the downstream's own classes (B(A), A(FusedMoE)).
    local_classes: dict[str, tuple[FileSummary, ClassDef]] = {}
    for s in files:
        for c in s.classes:
            local_classes[f"{s.module}.{c.name}"] = (s, c)

    def upstream_bases(key: str, seen: frozenset[str] = frozenset()) -> list[str]:
        s, c = local_classes[key]
        found: list[str] = []
        for base in c.bases:
            target = resolve(s.path, base)
            if target is not None and _is_upstream(target, upstream):
                found.append(target)
                continue
            local = _local_class(s, base, local_classes, by_module)
            if local is not None and local not in seen:
                found += upstream_bases(local, seen | {key})
        return found

    self_rows: dict[str, list[tuple[Parts, int, str, str]]] = {}
    imported_names = {s.path: {b.split("=", 1)[0] if n is None else b for _, n, b, _, _ in s.imports} for s in files}
    # methods the downstream calls on its own objects: an override of one stays reached without upstream's calls
    # (not a name every dict or list has: ``d.update()`` is no call of the downstream's ``update``)
    methods = {name for s in files for c in s.classes for name, _, _ in c.methods} - BUILTIN_METHODS
    on_objects = set().union(*(called_methods(s.calls, s.called, imported_names[s.path], methods) for s in files))
    # the downstream's own classes it names by their dotted path in a string: configured for upstream to build
    configured = {text for s in files for text, _ in s.strings if text in local_classes}
    for key, (s, c) in local_classes.items():
        direct = {t for b in c.bases if (t := resolve(s.path, b)) is not None and _is_upstream(t, upstream)}
        bases = upstream_bases(key)
        if bases:
            if s.path not in self_rows:
                self_rows[s.path] = _self_rows(s)
            uses += _inherited(s, c, bases, self_rows[s.path])
        if direct and len(direct) == len(c.bases):  # every base upstream: ``super().m(…)`` calls one of theirs
            uses += [Use(s.path, line, f"{base}.{name}", "calls", detail=detail, local=f"super().{name}")
                     for name, line, detail in s.super_calls if c.line <= line <= c.end for base in sorted(direct)]
        own_calls = {chain[1] for chain, at, _, how in self_rows[s.path]
                     if how == "calls" and len(chain) == 2 and c.line <= at <= c.end} if bases else set()
        for base in bases:
            if base in direct:
                uses.append(Use(s.path, c.line, base, "subclasses", local=c.name))
            for name, line, params in c.methods:
                if name in c.supers:
                    params += CALLS_SUPER
                if name in own_calls or name in on_objects:
                    params += CALLED
                if name == "__init__" and key in configured:
                    params += CONFIGURED
                if name == "__init__" and c.own_init:
                    sets = {chain[1] for chain, at in s.assigns if len(chain) == 2 and chain[0] == "self"
                            and c.line <= at <= c.end} | {m for m, _, _ in c.methods}
                    params += OWN_INIT + ",".join(sorted(sets))
                uses.append(Use(s.path, line, f"{base}.{name}", "overrides", detail=params, local=c.name))

    uses += _registered(files, local_classes, upstream_bases, on_objects)

    # (file, local name) → the downstream dotted name it imports, the first import of that name
    imported_from: dict[tuple[str, str], str] = {}
    for s, local, dotted in pending:
        imported_from.setdefault((s.path, local), dotted)
    for s in files:
        for chain, name in s.installs:
            owner = resolve(s.path, chain[:-1])
            if owner is not None and _is_upstream(owner, upstream):
                # the functions the file installs on the same class share their ``self``: what one sets is theirs
                mates = {other for target, other in s.installs if target[:-1] == chain[:-1]}
                uses += _installed(s, name, owner, mates)
        for chain, line in s.assigns:
            target = resolve(s.path, chain)
            if target is not None and len(chain) > 1:
                uses.append(Use(s.path, line, target, "patches", detail=_installs(s, line, by_module, imported_from),
                                local=".".join(chain)))
        for chain, attr, line in s.setattrs:
            target = resolve(s.path, chain)
            if target is None and len(chain) == 1 and _is_upstream(chain[0], upstream):
                target = chain[0]
            if target is not None:
                uses.append(Use(s.path, line, f"{target}.{attr}", "patches", local=".".join(chain)))
        for text, line in s.strings:
            if _is_upstream(text, upstream):
                uses.append(Use(s.path, line, text, "patches", detail="string"))
        # the names a chain must start with to resolve (bound upstream, or a downstream module): most calls and
        # reads are of local names, and were a third of this function's time
        roots = bindings[s.path].keys() | siblings.bound.get(s.path, {}).keys()
        for chain, line, detail in s.calls:
            target = resolve(s.path, chain) if chain[0] in roots else None
            if target is not None:
                uses.append(Use(s.path, line, target, "calls", detail=detail, local=".".join(chain)))
        for chain, line in s.reads:
            target = resolve(s.path, chain) if chain[0] in roots else None
            if target is not None and len(chain) > 1:
                uses.append(Use(s.path, line, target, "reads", local=".".join(chain)))
    # Attributes read on objects of unknown type, by name: not of a name the file imports (a module, a class:
    # resolved above, or not the upstream's), not a name the downstream defines anywhere; one line per file.
    defined = set().union(*(s.defines for s in files)) if files else set()
    scopes = {s.path: _Scopes(s) for s in files}
    for s in files:
        imported = imported_names[s.path]
        seen: set[str] = set()
        for name, line in _attribute_reads(s, imported):
            if name in seen or name in defined or name.startswith("__"):
                continue
            seen.add(name)
            uses.append(Use(s.path, line, f".{name}", "attribute", local=name))
        uses += [Use(s.path, line, f".{name}", "method", local=name)
                 for name, line in unknown_receivers(s.calls, s.called, imported | set(bindings[s.path]), defined)]
        # attributes on an object named after a class, whoever assigns them, unless the function allows for their
        # absence (members.py)
        chains = [*s.reads, *((chain[:-1], line) for chain, line, _ in s.calls if len(chain) > 2), *s.assigns]
        at = scopes[s.path].at
        guarded = {(at(line), name) for name, line in s.guards}
        uses += [Use(s.path, line, f".{receiver}.{name}", "member", local=f"{receiver}.{name}")
                 for receiver, name, line in members(chains, imported | set(bindings[s.path]), at, guarded)]
    # built anew rather than ``dataclasses.replace``d: a third of the time of this last step on 60,000 uses
    uses = [Use(u.path, u.line, u.symbol, u.how, u.detail, u.local, scopes[u.path].at(u.line)) for u in uses]
    return unique(uses, key=lambda u: (u.path, u.line, u.symbol, u.how))


def _registered(files: list[FileSummary], classes: dict[str, tuple[FileSummary, ClassDef]],
                upstream_bases: Callable[[str], list[str]], on_objects: set[str]) -> list[Use]:
    """The downstream's classes it puts in a slot upstream reads by their dotted path (``worker_cls =
    "ds.worker.MyWorker"``) and that subclass nothing of the upstream's (duck-typed: upstream calls their methods by
    name): the class as a ``subclasses`` use of ``<registered>.SLOT`` and each of its methods as an ``overrides``
    use of ``<registered>.SLOT.m``; the match reads them as the upstream class a fact says the slot expects."""
    found: list[Use] = []
    for s in files:
        for slot, dotted, at in s.registers:
            got = classes.get(dotted)
            if got is None or upstream_bases(dotted):
                continue  # not a class of the downstream, or one matched through its upstream bases already
            cs, c = got
            where = f"registered as {slot} in {s.path}:{at}"
            found.append(Use(cs.path, c.line, f"{REGISTERED}.{slot}", "subclasses", detail=where, local=c.name))
            own_calls = {chain[1] for chain, line, _ in cs.calls
                         if len(chain) == 2 and chain[0] == "self" and c.line <= line <= c.end}
            for name, line, params in c.methods:
                if name in own_calls or name in on_objects:
                    params += CALLED
                found.append(Use(cs.path, line, f"{REGISTERED}.{slot}.{name}", "overrides", detail=params,
                                 local=c.name))
    return found


class _Scopes:
    """The innermost function holding a line of one file (its classes' names prefixed: ``Runner.step``)."""

    def __init__(self, summary: FileSummary) -> None:
        classes = sorted((c.line, c.end, c.name) for c in summary.classes)
        self._by_line: dict[int, str] = {}
        # outer first, so an inner function (a later start) overwrites the lines it holds: one pass per line
        for start, end, name in sorted(summary.functions):
            owner = [c for c in classes if c[0] < start <= c[1]]
            if owner:
                name = f"{owner[-1][2]}.{name}"
            self._by_line.update(dict.fromkeys(range(start, end + 1), name))

    def at(self, line: int) -> str:
        return self._by_line.get(line, "")


def _inherited(s: FileSummary, c: ClassDef, bases: list[str], rows: list[tuple[Parts, int, str, str]]) -> list[Use]:
    """``self.m(…)`` and ``self.x`` in a subclass's methods, for names the downstream class (nor any downstream
    class of that file) does not define or set: uses of its upstream bases' members."""
    own = {m for m, _, _ in c.methods} | {chain[1] for chain, at in s.assigns
                                          if len(chain) == 2 and chain[0] == "self" and c.line <= at <= c.end}
    own |= {m for other in s.classes for m, _, _ in other.methods}
    found: list[Use] = []
    for chain, line, detail, how in rows:
        if not c.line <= line <= c.end or chain[1] in own:
            continue
        used: UseHow = "calls" if how == "calls" and len(chain) == 2 else "reads"
        found += [Use(s.path, line, f"{base}.{chain[1]}", used, detail=detail if used == "calls" else "",
                      local=".".join(chain[:2])) for base in bases]
    return found


def _self_rows(s: FileSummary) -> list[tuple[Parts, int, str, str]]:
    """A file's calls and reads through ``self.`` (not of a dunder): (chain, line, call detail, how)."""
    rows = [(chain, line, detail, "calls") for chain, line, detail in s.calls] + \
        [(chain, line, "", "reads") for chain, line in s.reads]
    return [r for r in rows if len(r[0]) > 1 and r[0][0] == "self" and not r[0][1].startswith("__")]


def _installs(s: FileSummary, line: int, by_module: dict[str, FileSummary],
              imported_from: dict[tuple[str, str], str]) -> str:
    """The parameters of the function a patch at ``line`` installs (defined in the file, or imported from a
    downstream module), or "" when the index cannot see it (a lambda, a method, an upstream function)."""
    name = s.values.get(line)
    if name is None:
        return ""
    if name in s.params:
        return s.params[name]
    dotted = imported_from.get((s.path, name))
    if dotted is not None:
        module, _, original = dotted.rpartition(".")
        other = by_module.get(module)
        return other.params.get(original, "") if other is not None else ""
    return ""


def _installed(s: FileSummary, function: str, owner: str, mates: set[str] | None = None) -> list[Use]:
    """``self.m(…)`` and ``self.x`` in a module-level function the file installs on an upstream class
    (``Attention.forward = patched_forward``): uses of that class's members, but for the attributes that function
    or another the file installs on the class (``mates``: a replaced ``__init__``) sets itself."""
    spans = {name: (start, end) for start, end, name in reversed(s.functions)
             if not any(c.line < start <= c.end for c in s.classes)}
    span = spans.get(function)
    if span is None:
        return []
    setters = [spans[m] for m in {function, *(mates or ())} if m in spans]
    own = {chain[1] for chain, at in s.assigns if len(chain) == 2 and chain[0] == "self"
           and any(start <= at <= end for start, end in setters)}
    found: list[Use] = []
    for chain, line, detail, how in _self_rows(s):
        if not span[0] <= line <= span[1] or chain[1] in own:
            continue
        used: UseHow = "calls" if how == "calls" and len(chain) == 2 else "reads"
        found.append(Use(s.path, line, f"{owner}.{chain[1]}", used, detail=detail if used == "calls" else "",
                         local=".".join(chain[:2])))
    return found


def _attribute_reads(s: FileSummary, imported: set[str]) -> Iterable[tuple[str, int]]:
    """The attributes a file reads past a chain's root (``a.b.c``: b and c; ``self.x.y``: y, ``x`` being the
    class's own), in reads and in called functions, unless the root is a name it imports; and those read on an
    expression. In line order."""
    found: list[tuple[int, str]] = [(line, name) for name, line in s.attributes]
    for chain, line in [*s.reads, *((c, ln) for c, ln, _ in s.calls)]:
        if chain[0] in imported:
            continue
        found.extend((line, part) for part in chain[2 if chain[0] in ("self", "cls") else 1:])
    found.sort()
    return [(name, line) for line, name in found]


def _local_class(s: FileSummary, base: Parts, classes: dict[str, tuple[FileSummary, ClassDef]],
                 by_module: dict[str, FileSummary]) -> str | None:
    """The downstream class a base expression names (same module, or imported from a downstream module)."""
    if len(base) == 1 and f"{s.module}.{base[0]}" in classes:
        return f"{s.module}.{base[0]}"
    for module, name, bound, _, level in s.imports:
        if name is not None and bound == base[0] and len(base) == 1:
            key = f"{_absolute(s, module, level)}.{name}"
            return key if key in classes else None
    return None
