"""C++ and CUDA functions read with tree-sitter: functions, methods and ``__global__`` kernels with their
parameters, and the operator schemas registered with ``.def("name(Tensor x) -> Tensor")``; what was added,
removed or changed signature between two versions of a file.

The grammar is ``tree-sitter-cuda`` (a superset of C++: ``__global__``, ``<<<…>>>``), used for every C++ and
CUDA file. ``tree-sitter-language-pack`` was the first choice, but its 1.x wheels download each grammar on
first use, which fails on machines without internet (ours, CI's); the grammar wheel ships its parser.
"""

from __future__ import annotations

import functools
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from prdigest.kernel.models import Change, ChangeKind

log = logging.getLogger(__name__)

_SUFFIXES = (".cu", ".cuh", ".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hip", ".inl")
_PRIVATE_NAMESPACES = frozenset({"detail", "details", "internal", "impl", "anonymous"})
_MACRO = re.compile(r"[A-Z0-9_]+")
_OP_SCHEMA = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*\((.*)\)\s*->", re.DOTALL)


def is_kernel_file(path: str) -> bool:
    return path.endswith(_SUFFIXES)


@dataclass(frozen=True)
class Function:
    """One C++ function, method, kernel or registered operator."""

    name: str
    line: int
    params: tuple[str, ...]
    #: Parameter names, in order, for a compact detail (``+stride``).
    names: tuple[str, ...]
    kernel: bool = False
    op: bool = False
    public: bool = True
    #: The body as written, for definitions (empty for a declaration): a body fact when only it changed, as
    #: code (comments and whitespace are no change).
    body: str = ""

    def signature(self) -> str:
        text = f"({', '.join(self.params)})"
        return text if len(text) <= 240 else text[:239] + "…"


@functools.lru_cache(maxsize=1)
def _parser() -> Any:
    try:
        import tree_sitter
        import tree_sitter_cuda
    except ImportError as exc:  # a broken install: the other facts still come
        log.warning("C++/CUDA facts are off: %s (install tree-sitter and tree-sitter-cuda)", exc)
        return None
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_cuda.language()))


def _text(node: Any) -> str:
    return " ".join(node.text.decode("utf-8", "replace").split())


def _declared_name(declarator: Any) -> tuple[Any, Any] | None:
    """(function_declarator, its name node) under a declarator chain, or None when it declares no function."""
    node = declarator
    for _ in range(8):
        if node is None:
            return None
        if node.type == "function_declarator":
            return node, node.child_by_field_name("declarator")
        node = node.child_by_field_name("declarator")
    return None


def _param(node: Any) -> tuple[str, str]:
    text = _text(node)
    name = ""
    stack = [node.child_by_field_name("declarator")]
    while stack:
        n = stack.pop()
        if n is None:
            continue
        if n.type == "identifier":
            name = n.text.decode("utf-8", "replace")
            break
        stack.extend(reversed(n.named_children))
    if node.type == "optional_parameter_declaration":
        default = node.child_by_field_name("default_value")
        if default is not None:
            text = text.replace(_text(default), "").rstrip(" =") + f"={_text(default)}"
    return text, name or text


def _function(node: Any, scope: str, private: bool) -> Function | None:
    found = _declared_name(node.child_by_field_name("declarator"))
    if found is None:
        return None
    function, name_node = found
    if name_node is None:
        return None
    name = _text(name_node).replace(" ", "")
    if _MACRO.fullmatch(name.rpartition("::")[2]):  # TORCH_LIBRARY(...) { … } and other macros
        return None
    params: list[str] = []
    names: list[str] = []
    plist = function.child_by_field_name("parameters")
    for p in plist.named_children if plist is not None else []:
        if p.type in ("parameter_declaration", "optional_parameter_declaration", "variadic_parameter_declaration"):
            text, pname = _param(p)
            params.append(text)
            names.append(pname)
    kinds = {c.type for c in node.children}
    static = any(c.type == "storage_class_specifier" and _text(c) == "static" for c in node.children)
    qualified = f"{scope}{name}" if "::" not in name or not scope else f"{scope}{name}"
    return Function(qualified, node.start_point[0] + 1, tuple(params), tuple(names), kernel="__global__" in kinds,
                    public=not (private or static or name.startswith("_")), body=_body_text(node))


def _body_text(node: Any) -> str:
    """A definition's body as written (compared as code by :func:`_as_code` only when it differs)."""
    body = node.child_by_field_name("body") if node.type == "function_definition" else None
    return body.text.decode("utf-8", "replace") if body is not None else ""


_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|//[^\n]*|/\*.*?\*/', re.DOTALL)


def _as_code(body: str) -> str:
    """A body as its tokens: comments cut out (string literals kept), whitespace collapsed."""
    return " ".join(_COMMENT_OR_STRING.sub(lambda m: m[0] if m[0][0] in "\"'" else " ", body).split())


def functions(text: str | None) -> dict[str, list[Function]] | None:
    """Qualified name → its functions (overloads), or None when the parser is unavailable."""
    if text is None:
        return {}
    return _functions(text)


@functools.lru_cache(maxsize=256)
def _functions(text: str) -> dict[str, list[Function]] | None:
    parser = _parser()
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8", "replace"))
    found: dict[str, list[Function]] = {}

    def add(f: Function | None) -> None:
        if f is not None and f not in found.get(f.name, []):
            found.setdefault(f.name, []).append(f)

    def walk(node: Any, scope: str, private: bool, depth: int) -> None:
        if depth > 12:
            return
        for child in node.named_children:
            kind = child.type
            if kind in ("function_definition", "declaration", "field_declaration"):
                add(_function(child, scope, private))
                if kind == "function_definition":
                    _ops(child, add)
            elif kind == "namespace_definition":
                name_node = child.child_by_field_name("name")
                name = _text(name_node) if name_node is not None else ""
                body = child.child_by_field_name("body")
                if body is not None:
                    walk(body, f"{scope}{name}::" if name else scope,
                         private or not name or name in _PRIVATE_NAMESPACES, depth + 1)
            elif kind in ("class_specifier", "struct_specifier"):
                name_node = child.child_by_field_name("name")
                body = child.child_by_field_name("body")
                if name_node is not None and body is not None:
                    walk(body, f"{scope}{_text(name_node)}::", private, depth + 1)
            elif kind in ("template_declaration", "linkage_specification", "declaration_list", "preproc_if",
                          "preproc_ifdef", "preproc_else", "preproc_elif", "field_declaration_list",
                          "access_specifier", "preproc_elifdef"):
                walk(child, scope, private, depth + 1)
            elif kind == "expression_statement":
                _ops(child, add)

    walk(tree.root_node, "", False, 0)
    return found


def _ops(node: Any, add: Any) -> None:
    """Operators registered inside a ``TORCH_LIBRARY`` block: ``ops.def("rms_norm(Tensor! out, …) -> ()")``."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "call_expression":
            function = n.child_by_field_name("function")
            if function is not None and function.type == "field_expression" and \
                    _text(function.child_by_field_name("field") or function).endswith("def"):
                args = n.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                if first is not None and first.type in ("string_literal", "concatenated_string"):
                    schema = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', first.text.decode("utf-8", "replace")))
                    match = _OP_SCHEMA.match(schema)
                    if match:
                        params = tuple(p.strip() for p in _split_params(match[2]) if p.strip())
                        names = tuple(p.split()[-1].split("=")[0] for p in params)
                        add(Function(f"op:{match[1]}", n.start_point[0] + 1, params, names, op=True))
                    continue
        stack.extend(n.named_children)


def _split_params(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return out


def _language(path: str) -> Literal["cuda", "cpp"]:
    return "cuda" if path.endswith((".cu", ".cuh", ".hip")) else "cpp"


def compare(path: str, before: str | None, after: str | None, *, before_path: str | None = None) -> list[Change]:
    """Functions and kernels added, removed, or whose parameters changed; registered operators likewise."""
    old, new = functions(before), functions(after)
    if old is None or new is None:
        return []
    language = _language(path)
    facts: list[Change] = []
    for name in sorted(old.keys() | new.keys()):
        b, a = old.get(name, []), new.get(name, [])
        sample = (a or b)[0]
        kind_added: ChangeKind = "kernel" if sample.kernel else "added"
        kind_removed: ChangeKind = "kernel" if sample.kernel else "removed"
        if not b:
            if not sample.public and not sample.kernel:
                continue
            facts.append(Change(kind=kind_added, symbol=name, path=path, line=a[0].line, after=a[0].signature(),
                                detail="added", public=sample.public, language=language))
        elif not a:
            facts.append(Change(kind=kind_removed, symbol=name, path=before_path or path, line=b[0].line,
                                before=b[0].signature(), detail="removed", public=sample.public, language=language))
        else:
            bs, as_ = sorted({f.params for f in b}), sorted({f.params for f in a})
            if bs == as_:
                bodies = [(x.body, y.body) for x, y in zip(b, a) if x.body and y.body and x.body != y.body]
                if len(b) == len(a) and any(_as_code(x) != _as_code(y) for x, y in bodies):
                    # the same parameters, a different body: what the function does changed, not how it is called
                    facts.append(Change(kind="body", symbol=name, path=path, line=a[0].line, detail="body changed",
                                        public=sample.public, language=language))
                continue
            if len(bs) == 1 and len(as_) == 1:
                detail = _detail(b[0], a[0])
            else:
                detail = "overloads changed"
            facts.append(Change(kind="kernel" if sample.kernel else "signature", symbol=name, path=path,
                                line=a[0].line, before="; ".join(f"({', '.join(p)})" for p in bs)[:240],
                                after="; ".join(f"({', '.join(p)})" for p in as_)[:240], detail=detail,
                                public=sample.public, language=language))
    return facts


def _detail(b: Function, a: Function) -> str:
    removed = [n for n in b.names if n not in a.names]
    added = [n for n in a.names if n not in b.names]
    parts = [f"+{n}" for n in added] + [f"-{n}" for n in removed]
    before = dict(zip(b.names, b.params))
    for name, text in zip(a.names, a.params):
        if name in before and before[name] != text:
            parts.append(f"{name}: {before[name]}→{text}")
    if not parts:
        parts.append("reordered")
    return ", ".join(parts)
