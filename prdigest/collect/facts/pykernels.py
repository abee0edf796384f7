"""Kernels written in Python kernel languages, read with ``ast`` (nothing is imported): Triton and Pallas.

- **Triton**: a function decorated ``@triton.jit``, ``@triton.autotune(…)`` or ``@triton.heuristics(…)``, under
  whatever name the module binds ``triton`` (``import triton as tr``, ``from vllm.triton_utils import triton``) or
  those decorators (``from triton import jit``). Its launch is every ``kernel[grid](…, BLOCK=…, num_warps=…)`` of
  the module and its autotune configs.
- **Pallas** (a module that imports ``jax.experimental.pallas``): a function passed to ``pallas_call``,
  ``pl.kernel``, ``emit_pipeline`` or ``core_map`` (itself, through ``functools.partial`` or a local name), a
  function those decorate, or one taking ``*_ref`` parameters; its launch is the launching call's keywords (grid,
  block specs, scratch shapes, compiler parameters) and its launcher the module-level function that makes the
  call: the op its callers know (``ragged_gather``), by which a new kernel is named.

A kernel's helpers (module-level functions it calls, in the same module) are kernel code too. A kernel's numerics are
the dtype casts its code makes (``x.astype(out_dtype)``, ``x.to(tl.float32)``, ``preferred_element_type=…``,
``dtype=`` of an accumulator), counted: where a kernel rounds to a narrower type is where its accuracy is decided,
so a cast added, removed or moved past a reduction is a fact (prdigest/collect/facts/commit.py adds these facts
to the Python API's).
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.hunklines import HEAD_DEF, hunks
from prdigest.collect.facts.surface import module_name
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change

KernelLanguage = Literal["triton", "pallas"]

#: Triton's decorators that make a kernel.
_TRITON_DECORATORS = frozenset({"jit", "autotune", "heuristics"})
#: Pallas calls that launch (or pipeline) a kernel body, by their last name.
_PALLAS_LAUNCHES = frozenset({"pallas_call", "kernel", "emit_pipeline", "core_map", "emit_pipeline_with_allocations"})
#: Launch keywords that say nothing about how the kernel runs.
_QUIET_KEYWORDS = frozenset({"name", "debug", "interpret", "cost_estimate", "metadata"})
#: Calls that make an array whose ``dtype=`` is an accumulator's type.
_ALLOCATORS = frozenset({"zeros", "full", "empty", "ones", "zeros_like", "full_like", "empty_like", "ones_like"})
#: A dtype as written (``jnp.float32``, ``tl.bfloat16``, ``out_dtype``, ``acc_dtype``).
_DTYPE = re.compile(r"(?:^|\.)(?:u?int\d+|float\d+\w*|bfloat16|f(?:p)?(?:8|16|32)\w*|bf16|\w*dtype\w*|\w*_type)$")
#: An array library's prefix of a dtype.
_LIBRARY = re.compile(r"^(?:jnp|np|numpy|tl|torch|jax\.numpy|triton\.language)\.")
#: Functions taking this many ``*_ref`` parameters in a Pallas module are kernels (refs are what Pallas passes).
_REFS = 2
#: Helpers followed from a kernel (calls of calls).
_DEPTH = 3
#: Longest operand or launch value kept in a fact, in characters.
_SHOWN = 40


@dataclass(frozen=True)
class Kernel:
    """One kernel (or a helper of one) of a module, with what its launch and its numerics are."""

    name: str
    language: KernelLanguage
    line: int
    #: The module-level function that launches it (Pallas), empty when none or the kernel itself.
    launcher: str = ""
    #: ``key=value`` of each launch (sorted, whole): the grid, block specs, meta-parameters, autotune configs.
    launch: tuple[str, ...] = ()
    #: ``operand→dtype`` of each cast its code makes.
    casts: tuple[str, ...] = ()
    #: For a helper: the kernel it serves.
    helper_of: str = ""
    #: The module-level functions with a ``kernel[grid](…)`` launch of it (Triton): how the rest of the code calls it.
    launched_by: tuple[str, ...] = ()


def _dotted(node: ast.expr) -> str:
    return pyapi._decorator_name(node)


def _text(node: ast.AST, limit: int = 400) -> str:
    return pyapi._unparse(node, limit) or ""


@dataclass
class _Names:
    """What the module binds the kernel languages to."""

    triton: set[str]
    triton_decorators: set[str]
    pallas: set[str]
    pallas_launches: set[str]

    @property
    def any(self) -> bool:
        return bool(self.triton or self.triton_decorators or self.pallas or self.pallas_launches)


def _names(tree: ast.Module) -> _Names:
    names = _Names(set(), set(), set(), set())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "triton" or alias.name.startswith("triton."):
                    if alias.asname is None:
                        names.triton.add("triton")
                    elif alias.name == "triton":
                        names.triton.add(alias.asname)
                elif alias.name.startswith("jax.experimental.pallas"):
                    names.pallas.add(alias.asname or "jax")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                bound = alias.asname or alias.name
                if node.module == "triton" and alias.name in _TRITON_DECORATORS:
                    names.triton_decorators.add(bound)
                elif alias.name == "triton":  # ``from vllm.triton_utils import triton``
                    names.triton.add(bound)
                elif node.module.startswith("jax.experimental.pallas") or (
                        node.module == "jax.experimental" and alias.name == "pallas"):
                    (names.pallas_launches if alias.name in _PALLAS_LAUNCHES else names.pallas).add(bound)
    return names


def _is_triton_decorator(node: ast.expr, names: _Names) -> bool:
    dotted = _dotted(node)
    if dotted in names.triton_decorators:
        return True
    root, _, leaf = dotted.rpartition(".")
    return root in names.triton and leaf in _TRITON_DECORATORS


def _is_pallas_launch(func: ast.expr, names: _Names) -> bool:
    """Whether ``func`` (what is called) launches a Pallas kernel body: ``pl.pallas_call``, ``pltpu.emit_pipeline``…"""
    dotted = _dotted(func)
    if dotted in names.pallas_launches:
        return True
    root, _, rest = dotted.partition(".")
    return bool(rest) and rest.rpartition(".")[2] in _PALLAS_LAUNCHES and root in names.pallas


def _partial(call: ast.expr) -> ast.Call | None:
    """``functools.partial(f, …)`` / ``partial(f, …)``: the call, else None."""
    if isinstance(call, ast.Call) and _dotted(call.func).rpartition(".")[2] == "partial" and call.args:
        return call
    return None


def _target(node: ast.expr, local: dict[str, ast.expr], depth: int = 0) -> str | None:
    """The function a launch's first argument names: directly, through ``partial`` or a local name."""
    if depth > 4:
        return None
    if isinstance(node, ast.Name):
        if node.id in local:
            return _target(local[node.id], local, depth + 1) or node.id
        return node.id
    inner = _partial(node)
    if inner is not None:
        return _target(inner.args[0], local, depth + 1)
    return None


def _launch_items(call: ast.Call) -> tuple[str, ...]:
    return tuple(sorted(f"{k.arg}={_text(k.value)}" for k in call.keywords if k.arg and k.arg not in _QUIET_KEYWORDS))


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """Module-level functions and methods by their dotted name, as pyapi names them (the first definition)."""
    found: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(prefix + node.name, node)
            elif isinstance(node, ast.ClassDef):
                walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.If, ast.Try)):
                for part in (node.body, node.orelse, getattr(node, "finalbody", [])):
                    walk(part, prefix)
    walk(tree.body, "")
    return found


def _dtype(node: ast.expr) -> str | None:
    """A cast's target as written, without the array library's prefix (``jnp.float32`` → ``float32``)."""
    text = _text(node, 80)
    return _LIBRARY.sub("", text) if _DTYPE.search(text) else None


def _short(node: ast.expr) -> str:
    text = _text(node, 200)
    return text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "…"


def _casts(fn: ast.AST) -> tuple[str, ...]:
    """``operand→dtype`` of each cast in ``fn``'s code, in source order."""
    found: list[tuple[int, int, str]] = []
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        where = (node.lineno, node.col_offset)
        if isinstance(func, ast.Attribute) and func.attr in ("astype", "to") and node.args:
            dtype = _dtype(node.args[0])
            if dtype:
                found.append((*where, f"{_short(func.value)}→{dtype}"))
        elif isinstance(func, (ast.Attribute, ast.Name)) and _dotted(func).rpartition(".")[2] in (
                "cast", "convert_element_type") and len(node.args) >= 2:
            dtype = _dtype(node.args[1])
            if dtype:
                found.append((*where, f"{_short(node.args[0])}→{dtype}"))
        for k in node.keywords:
            if k.arg == "preferred_element_type" or (
                    k.arg == "dtype" and _dotted(func).rpartition(".")[2] in _ALLOCATORS):
                dtype = _dtype(k.value)
                if dtype:
                    found.append((*where, f"{_dotted(func).rpartition('.')[2]}→{dtype}"))
    return tuple(text for _, _, text in sorted(found))


def casts(fn: ast.AST) -> tuple[str, ...]:
    """``operand→dtype`` of each cast in any function's code, kernel or not (prdigest/collect/facts/bodyaspects.py)."""
    return _casts(fn)


def functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """A module's functions and methods by dotted name, as pyapi names them (prdigest/collect/facts/bodyaspects.py)."""
    return _functions(tree)


def _calls(fn: ast.AST) -> set[str]:
    return {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def kernels(text: str | None) -> dict[str, Kernel]:
    """The kernels of a module (and their helpers) by dotted name; empty when it has none or is not Python."""
    if not text or ("triton" not in text and "pallas" not in text):
        return {}
    return _kernels(text)


@functools.lru_cache(maxsize=256)
def _kernels(text: str) -> dict[str, Kernel]:
    module = pyapi.parse(text)
    tree = module.tree if module is not None else None
    if tree is None:
        return {}
    names = _names(tree)
    if not names.any:
        return {}
    functions = _functions(tree)
    top = {name for name in functions if "." not in name}
    found: dict[str, tuple[KernelLanguage, str, list[str]]] = {}  # name → (language, launcher, launch items)
    items: list[str]
    wrappers: dict[str, set[str]] = {}  # Triton kernel → the functions that launch it

    def mark(name: str, language: KernelLanguage, launcher: str = "", launch: tuple[str, ...] = ()) -> None:
        if name not in functions:
            return
        lang, was, items = found.setdefault(name, (language, launcher, []))
        if launcher and not was:
            found[name] = (lang, launcher, items)
        items.extend(launch)

    for name, fn in functions.items():
        for d in fn.decorator_list:
            if _is_triton_decorator(d, names):
                mark(name, "triton", launch=tuple(f"autotune={_text(k.value)}" for k in d.keywords
                                                  if k.arg == "configs") if isinstance(d, ast.Call) else ())
            elif (call := _partial(d)) is not None and _is_pallas_launch(call.args[0], names):
                mark(name, "pallas", launch=_launch_items(call))  # @functools.partial(pl.pallas_call, grid=…)
            elif isinstance(d, ast.Call) and _is_pallas_launch(d.func, names):
                mark(name, "pallas", launch=_launch_items(d))  # @pl.kernel(out_shape=…)
        if names.pallas and sum(a.arg.endswith(("_ref", "_refs")) for a in (*fn.args.posonlyargs, *fn.args.args,
                                                                           *fn.args.kwonlyargs)) >= _REFS:
            mark(name, "pallas")
    for name, fn in functions.items():
        local: dict[str, ast.expr] = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                local.setdefault(node.targets[0].id, node.value)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not fn:
                local.setdefault(node.name, ast.Name(id=name))  # a nested kernel: its enclosing function's code
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            if _is_pallas_launch(node.func, names) and (node.args or node.keywords):
                first = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg in ("kernel", "body", "f")), None)
                target = _target(first, local) if first is not None else None
                if target is not None and target in functions:
                    mark(target, "pallas", launcher=name if name != target and "." not in name else "",
                         launch=_launch_items(node))
            elif isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name):
                kernel = node.func.value.id  # ``kernel[grid](…)``: a Triton launch
                items = [f"grid={_text(node.func.slice)}", *(f"{k.arg}={_text(k.value)}" for k in node.keywords
                                                              if k.arg and k.arg[:1].isupper() or k.arg in (
                                                                  "num_warps", "num_stages", "num_ctas"))]
                if kernel in functions and functions[kernel].decorator_list:
                    found.setdefault(kernel, ("triton", "", []))[2].extend(items)
                    if "." not in name and name != kernel:
                        wrappers.setdefault(kernel, set()).add(name)
    out: dict[str, Kernel] = {}
    for name, (language, launcher, items) in found.items():
        if language == "triton" and not any(_is_triton_decorator(d, names) for d in functions[name].decorator_list):
            continue  # a subscripted call of a function that is not a Triton kernel
        out[name] = Kernel(name, language, functions[name].lineno, launcher, tuple(sorted(set(items))),
                           _casts(functions[name]), launched_by=tuple(sorted(wrappers.get(name, ()))))
    # helpers: module-level functions a kernel calls, followed a few calls deep
    frontier = [(k, k) for k in out]
    for _ in range(_DEPTH):
        step = []
        for name, owner in frontier:
            for callee in sorted(_calls(functions[name]) & top):
                if callee not in out:
                    out[callee] = Kernel(callee, out[owner].language, functions[callee].lineno,
                                         casts=_casts(functions[callee]), helper_of=owner)
                    step.append((callee, owner))
        frontier = step
    return out


def _numerics(before: Kernel, after: Kernel) -> str:
    """``+s_rowmax→out_dtype; -s→out_dtype``: the casts one version makes and the other does not (empty when the
    same)."""
    old, new = Counter(before.casts), Counter(after.casts)
    if old == new:
        return ""
    parts = [f"+{c}" for c in sorted((new - old).elements())] + [f"-{c}" for c in sorted((old - new).elements())]
    return "; ".join(dict.fromkeys(parts))  # operands hold commas (``jnp.matmul(q, k.T)``)


def _launch(before: Kernel, after: Kernel) -> str:
    """The launch keys whose value changed, was added or removed (``grid; scratch_shapes``)."""
    old = dict(item.split("=", 1) for item in before.launch)
    new = dict(item.split("=", 1) for item in after.launch)
    return "; ".join(k for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k))


def facts(path: str, before: str | None, after: str | None, api: list[Change], *,
          before_path: str | None = None) -> list[Change]:
    """``api`` (the Python API facts of this file, pyapi.compare) with its kernels said as kernels: a kernel added
    (named by its launcher when both are new) or removed, a kernel's signature, its launch and its numerics changed.
    A body fact stays beside a kernel fact (a downstream that patches the function still matches it)."""
    old, new = kernels(before), kernels(after)
    if not old and not new:
        return api
    # A new op (its launcher and its kernel both new) is one fact named as its callers know it. A launcher removed
    # stays a removed name: a downstream that imports it is told (a kernel fact has no match).
    added = {c.symbol for c in api if c.kind == "added"}
    ops = {k.launcher: k for k in new.values() if k.launcher in added and k.name not in old and not k.helper_of}
    folded = {k.name for k in ops.values()}
    out: list[Change] = []
    said: set[str] = set()
    for c in api:
        op = ops.get(c.symbol) if c.kind == "added" else None
        if op is not None:
            out.append(c.model_copy(update={"kind": "kernel", "detail": c.kind, "language": op.language}))
            said.add(c.symbol)
            continue
        k = new.get(c.symbol) or old.get(c.symbol)
        if k is None:
            out.append(c)
        elif c.kind in ("added", "removed", "signature") and not k.helper_of:
            if c.symbol in folded and c.kind != "signature":
                continue
            out.append(c.model_copy(update={"kind": "kernel", "detail": c.detail or c.kind, "language": k.language}))
            said.add(c.symbol)
        else:
            out.append(c.model_copy(update={"language": k.language}) if c.language == "python" else c)
    # a private kernel (``_rms_kernel``) has no API fact to say it by: it is a kernel all the same
    parsed = pyapi.parse(after) if after else None
    defs = parsed.defs if parsed is not None else {}
    out += [Change(kind="kernel", symbol=k.name, path=path, line=k.line, after=defs[k.name].signature(),
                    detail="added", public=not _private(k.name), language=k.language)
            for k in new.values() if k.name not in old and not k.helper_of and k.name not in said | folded
            and k.name in defs]
    out.extend(_changed(path, old, new, said))
    return out


def _changed(path: str, old: dict[str, Kernel], new: dict[str, Kernel], said: set[str]) -> Iterator[Change]:
    """A launch or the numerics changed, for kernels (and helpers) both versions have."""
    for name in sorted(old.keys() & new.keys()):
        b, a = old[name], new[name]
        numerics = _numerics(b, a)
        if numerics:
            yield Change(kind="kernel", symbol=name, path=path, line=a.line, before="; ".join(b.casts)[:240] or "-",
                         after="; ".join(a.casts)[:240] or "-", detail=f"numerics: {numerics}",
                         public=not _private(name), language=a.language)
        launch = _launch(b, a) if not a.helper_of else ""
        if launch and name not in said:
            yield Change(kind="kernel", symbol=name, path=path, line=a.line, before="; ".join(b.launch)[:240] or "-",
                         after="; ".join(a.launch)[:240] or "-", detail=f"launch: {launch}",
                         public=not _private(name), language=a.language)


def _private(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def put_to_use(facts: list[Change], files: list[tuple[str, str | None, str | None]]) -> list[Change]:
    """Each new kernel of a Python kernel language with ``needed_by`` set to the modules (of ``files``: the commit's
    shipped files as (path, before, after)) whose code now calls it, or a function of its module that launches it,
    and did not before: a kernel the PR also puts to use, not one left for a later PR to call."""
    new = [c for c in facts if c.kind == "kernel" and c.detail == "added" and c.language in ("triton", "pallas")]
    if not new:
        return facts
    out = []
    texts = {path: after for path, _, after in files}
    for c in facts:
        if c in new:
            # the kernel itself, or (Triton) the functions of its module that launch it
            known = kernels(texts.get(c.path)).get(c.symbol)
            names = [c.symbol.rpartition(".")[2], *(known.launched_by if known else ())]
            call = re.compile(rf"(?<![\w.])(?:{'|'.join(map(re.escape, names))})\s*[\[(]")
            users = tuple(module_name(path) for path, before, after in files
                          if path != c.path and after and len(call.findall(after)) > len(call.findall(before or "")))
            if users:
                c = c.model_copy(update={"needed_by": users})
        out.append(c)
    return out


# from patches alone (REST): what the changed lines show ------------------------------------------------------

_TRITON_LINE = re.compile(r"^\s*@\s*(?:\w+\.)*triton\.(?:jit|autotune|heuristics)\b")
_PALLAS_LINE = re.compile(r"\b(?:pallas_call|pl\.kernel|emit_pipeline|core_map)\(\s*(?:functools\.)?(?:partial\(\s*)?"
                          r"([A-Za-z_]\w*)")
_TOP_DEF = re.compile(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)\s*\(")
_CAST_LINE = re.compile(r"([\w.\]\[)]+)\.(?:astype|to)\(\s*([\w.]+)\s*\)|(\w+)\([^=]*preferred_element_type=([\w.]+)")
#: A patch of a kernel language's module (its lines or its path say so).
_KERNEL_PATCH = re.compile(r"\b(?:pallas|pltpu|triton|tl\.\w+)\b|(?:^|/)(?:kernels?|triton|pallas)/")


def _patch_casts(text: str) -> list[str]:
    """The casts of one changed line: read as Python when it is a statement alone (as full files are read), else
    by its shape (a line of a statement that spans several)."""
    tree, _ = safe_parse.parse(text.strip())
    if isinstance(tree, ast.Module):
        return list(_casts(tree))
    out = []
    for m in _CAST_LINE.finditer(text):
        operand, dtype = (m[1], m[2]) if m[1] else (m[3], m[4])
        if _DTYPE.search(dtype):
            out.append(f"{operand}→{_LIBRARY.sub('', dtype)}")
    return out


def patch_facts(path: str, patch: str, facts: list[Change]) -> list[Change]:
    """``facts`` (what patches.py read of this file) with the kernels the changed lines show: a ``def`` under a
    ``@triton.jit`` line, or one an added ``pallas_call`` launches, added or removed; a function (by the hunk's own
    ``def`` lines and git's hunk header) whose casts differ between the two sides, in a kernel language's module."""
    if not _KERNEL_PATCH.search(path) and not _KERNEL_PATCH.search(patch):
        return facts
    found = hunks(patch)
    launched = {sign: set(_PALLAS_LINE.findall("\n".join(r.text for h in found for r in h.rows
                                                         if r.sign in (sign, " ")))) for sign in "+-"}
    kernels: dict[tuple[str, str], tuple[KernelLanguage, int]] = {}  # (sign, name) → language, line
    casts: dict[str, dict[str, list[str]]] = {}  # function → sign → casts
    for h in found:
        head = HEAD_DEF.match(h.header.strip())
        current = head[1] if head else ""
        decorated = {"+": False, "-": False}
        for r in h.rows:
            match = _TOP_DEF.match(r.text)
            if match:
                current = match[1]
                for sign in "+-":
                    if r.sign == sign:
                        if decorated[sign]:
                            kernels[(sign, current)] = ("triton", r.line)
                        elif current in launched[sign]:
                            kernels[(sign, current)] = ("pallas", r.line)
            if _TRITON_LINE.match(r.text):
                decorated.update({s: True for s in "+-" if r.sign in (s, " ")})
            elif r.text.strip() and not r.text.lstrip().startswith("@"):
                decorated = {"+": False, "-": False}
            if r.sign in "+-" and current:
                casts.setdefault(current, {"+": [], "-": []})[r.sign].extend(_patch_casts(r.text))
    language: KernelLanguage = "pallas" if "pallas" in patch or "pltpu" in patch else "triton"
    new = {name: v for (sign, name), v in kernels.items() if sign == "+" and ("-", name) not in kernels}
    gone = {name: v for (sign, name), v in kernels.items() if sign == "-" and ("+", name) not in kernels}
    out = []
    for c in facts:
        if c.kind in ("added", "removed") and c.symbol in (new if c.kind == "added" else gone):
            lang = (new if c.kind == "added" else gone)[c.symbol][0]
            out.append(c.model_copy(update={"kind": "kernel", "detail": c.kind, "language": lang}))
        else:
            out.append(c)
    said = {c.symbol for c in out if c.kind == "kernel"}
    out += [Change(kind="kernel", symbol=n, path=path, line=line, after=n, detail="added", language=lang,
                   public=not _private(n)) for n, (lang, line) in sorted(new.items()) if n not in said]
    out += [Change(kind="kernel", symbol=n, path=path, line=line, before=n, detail="removed", language=lang,
                   public=not _private(n)) for n, (lang, line) in sorted(gone.items()) if n not in said]
    for name, sides in sorted(casts.items()):
        old, added = Counter(sides["-"]), Counter(sides["+"])
        if old != added and name not in new and name not in gone:
            parts = [f"+{x}" for x in sorted((added - old).elements())]
            parts += [f"-{x}" for x in sorted((old - added).elements())]
            out.append(Change(kind="kernel", symbol=name, path=path, before="; ".join(sides["-"])[:240] or "-",
                              after="; ".join(sides["+"])[:240] or "-", detail="numerics: " + "; ".join(parts),
                              public=not _private(name), language=language))
    return out
