"""The upstream's class hierarchy across modules, read from the whole tree (``--git``): a method "removed" from a
class that still inherits it from a base in an unchanged module is no removal, and a method removed or renamed
that no class of the tree still defines is marked so (a downstream calling ``self.x.m()`` on an object of unknown
type most likely calls this one); a data attribute "removed" from a class that still gets it from such a base
is no fact.

Only the modules the changed classes' bases come from are read (each blob once per run); the method names of the
whole tree are read only when a method was removed or renamed. Without a tree (files or patches alone) a
removed method whose class has a base in a module the commit did not change is marked: it may still be inherited.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from prdigest.collect.facts import pyapi
from prdigest.collect.git import CommitDiff, GitUnavailable, UpstreamClone
from prdigest.collect.git.diff import blob_texts
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_of

#: Said after a removed or renamed method's ``detail`` when no class of the upstream's tree (after the commit)
#: defines a method of that name: a call ``obj.m()`` on an object of unknown type most likely reaches this one.
METHOD_GONE = "no upstream class keeps a method of that name"
#: The same, when only the commit's changed files could be read (no tree): a call by name is only a check.
METHOD_GONE_CHANGED = "no class of the changed files keeps a method of that name"
#: Said after a removed or renamed method's ``detail`` when no upstream class defines a method of that name but the
#: upstream still calls one (``t.sum()`` on a tensor after ``Bitmatrix.sum`` went): a method of a type from outside
#: the upstream, so a call by that name on an object of unknown type is no evidence, and none is matched by name.
METHOD_OUTSIDE = "the upstream still calls a method of that name on objects of other types"
#: Said after a removed method's ``detail`` when its class has a base in a module that was not read (no tree):
#: the method may still be inherited from it.
BASE_UNREAD = "its class may inherit it from {}, not read"
#: How many bases up a chain is followed (a deeper hierarchy is rare, a cycle is stopped by it too).
MAX_DEPTH = 8
#: A tree with more Python files than this is not scanned for method names (the name is then not proven gone).
MAX_SCANNED = 20_000

_METHOD = re.compile(r"^[ \t]+(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(", re.MULTILINE)
#: A method call as written (``x.sum(``, ``).view(``): its name.
_CALLED = re.compile(r"[\w)\]]\s*\.\s*([A-Za-z_]\w*)\s*\(")
#: Method names every Python object or builtin container has (``d.clear()`` on a dict): a call of one on an object
#: of unknown type is never proven to reach the upstream's method.
BUILTIN_METHODS = frozenset(n for t in (object, dict, list, set, frozenset, tuple, str, bytes, int, float)
                            for n in dir(t))


class UpstreamTree(Protocol):
    """The upstream's files at a commit: what the facts engine reads beyond the commit's changed files."""

    def text(self, sha: str, path: str) -> str | None:
        """The file's text at ``sha``; None when the tree has no such file (or it cannot be read)."""
        ...

    def method_names(self, sha: str) -> frozenset[str] | None:
        """Every name a ``def`` inside a class (or function) of the tree's Python files binds; None if unknown."""
        ...

    def called_names(self, sha: str) -> frozenset[str] | None:
        """Every name the tree's Python files call as a method (``x.m(``); None if unknown."""
        ...

    def texts_where(self, sha: str, keep: Callable[[str], bool], suffix: str = "") -> dict[str, str] | None:
        """The text of each Python file of the tree (whose path ends with ``suffix``) that ``keep`` accepts (a
        ``class`` line naming a base, a ``from m import`` line); None if the tree cannot be read whole."""
        ...


class GitTree:
    """An :class:`UpstreamTree` read from a clone: one ``ls-tree`` per commit, each blob read once per run."""

    def __init__(self, clone: UpstreamClone, packages: Sequence[str] = ()) -> None:
        self.clone, self.packages = clone, tuple(packages)
        self._listings: dict[str, dict[str, str] | None] = {}
        self._texts: dict[str, str | None] = {}
        self._names: dict[str, frozenset[str]] = {}
        self._scanned: dict[str, frozenset[str] | None] = {}
        self._calls: dict[str, frozenset[str]] = {}
        self._called: dict[str, frozenset[str] | None] = {}

    def _listing(self, sha: str) -> dict[str, str] | None:
        if sha not in self._listings:
            try:
                out = self.clone.run(["ls-tree", "-r", "--full-tree", "--end-of-options", sha], what="ls-tree")
            except GitUnavailable:
                self._listings[sha] = None
                return None
            found: dict[str, str] = {}
            for row in out.decode("utf-8", "replace").splitlines():
                meta, _, path = row.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob" and path.endswith((".py", ".pyi")) and self._ours(path):
                    found[path] = parts[2]
            self._listings[sha] = found
        return self._listings[sha]

    def _ours(self, path: str) -> bool:
        module = module_of(path)
        return not self.packages or any(module == p or module.startswith(p + ".") for p in self.packages)

    def _read(self, oids: set[str]) -> None:
        todo = {o for o in oids if o not in self._texts}
        if not todo:
            return
        try:
            self.clone.fetch_blobs(todo)  # a partial clone: one batch
            texts = blob_texts(self.clone, todo)
        except GitUnavailable:
            texts = {}
        for oid in todo:
            self._texts[oid] = (texts.get(oid) or (None, ""))[0]

    def text(self, sha: str, path: str) -> str | None:
        oid = (self._listing(sha) or {}).get(path)
        if oid is None:
            return None
        self._read({oid})
        return self._texts[oid]

    def texts_where(self, sha: str, keep: Callable[[str], bool], suffix: str = "") -> dict[str, str] | None:
        listing = self._listing(sha)
        if listing is None or len(listing) > MAX_SCANNED:
            return None
        chosen = {path: oid for path, oid in listing.items() if path.endswith(suffix)}
        self._read(set(chosen.values()))  # each blob once per run: method_names reads the same
        return {path: text for path, oid in chosen.items() if (text := self._texts.get(oid)) and keep(text)}

    def method_names(self, sha: str) -> frozenset[str] | None:
        return self._names_in(sha, _METHOD, self._names, self._scanned)

    def called_names(self, sha: str) -> frozenset[str] | None:
        return self._names_in(sha, _CALLED, self._calls, self._called)

    def _names_in(self, sha: str, pattern: re.Pattern[str], per_blob: dict[str, frozenset[str]],
                  per_sha: dict[str, frozenset[str] | None]) -> frozenset[str] | None:
        """What ``pattern`` finds in every Python file of the tree at ``sha`` (each blob read and searched once
        per run); None when the tree cannot be listed or is too large to scan."""
        if sha not in per_sha:
            listing = self._listing(sha)
            if listing is None or len(listing) > MAX_SCANNED:
                per_sha[sha] = None
            else:
                self._read(set(listing.values()))
                names: set[str] = set()
                for oid in listing.values():
                    if oid not in per_blob:
                        per_blob[oid] = frozenset(pattern.findall(self._texts.get(oid) or ""))
                    names |= per_blob[oid]
                per_sha[sha] = frozenset(names)
        return per_sha[sha]


def _paths(module: str) -> tuple[str, ...]:
    base = module.replace(".", "/")
    return (f"{base}.py", f"{base}/__init__.py", f"{base}.pyi", f"src/{base}.py", f"src/{base}/__init__.py")


def _absolute(source: str, module: str, package: bool) -> str:
    """``from .x import B`` written in ``module`` (a package's ``__init__`` when ``package``) → the dotted name."""
    level = len(source) - len(source.lstrip("."))
    if not level:
        return source
    parts = module.split(".")
    if not package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    rest = source[level:]
    return ".".join([*parts, rest] if rest else parts)


Reader = Callable[[str], tuple[pyapi.Module, bool] | None]


def module_reader(after: dict[str, str], tree: UpstreamTree | None, sha: str) -> Reader:
    """Module → (parsed, is it a package): a changed file's text after the commit, else the tree's at ``sha``."""

    def read(module: str) -> tuple[pyapi.Module, bool] | None:
        for path in _paths(module):
            text = after.get(path) if path in after or tree is None else tree.text(sha, path)
            parsed = pyapi.parse(text) if text else None
            if parsed is not None:
                return parsed, path.endswith("__init__.py")
        return None

    return read


class Hierarchy:
    """Classes resolved across modules through each module's imports, read by ``read`` (module → parsed, is it a
    package), each module once."""

    def __init__(self, read: Reader) -> None:
        self._read = read
        self._modules: dict[str, tuple[pyapi.Module, bool] | None] = {}

    def module(self, name: str) -> tuple[pyapi.Module, bool] | None:
        if name not in self._modules:
            self._modules[name] = self._read(name)
        return self._modules[name]

    def bases(self, module: str, cls: str) -> list[tuple[str, str] | str]:
        """The bases of ``module.cls``: (module, class) where found, else the base as written (not found)."""
        got = self.module(module)
        if got is None or cls not in got[0].defs:
            return []
        parsed, package = got
        out: list[tuple[str, str] | str] = []
        for base in parsed.defs[cls].bases:
            if "=" in base:  # metaclass=…
                continue
            written = base.split("[", 1)[0].strip()
            found = self._find(module, parsed, package, written)
            out.append(found if found is not None else written)
        return out

    def find(self, module: str, parsed: pyapi.Module, package: bool, written: str) -> tuple[str, str] | None:
        """Where the class ``written`` in ``module`` (``parsed``) is defined, following re-exports, or None."""
        return self._find(module, parsed, package, written.split("[", 1)[0].strip())

    def _find(self, module: str, parsed: pyapi.Module, package: bool, written: str,
              depth: int = 0) -> tuple[str, str] | None:
        """Where the class ``written`` in ``module`` is defined (following re-exports), or None."""
        head, _, rest = written.partition(".")
        if not rest and parsed.defs.get(head) is not None and parsed.defs[head].kind == "class":
            return module, head
        source = parsed.imported.get(head)
        if source is None or depth > MAX_DEPTH:
            return None
        source = _absolute(source, module, package)
        if not rest:  # ``from m import B`` → (m, B)
            candidates = [(source, head)]
        else:  # ``from a import b`` + ``b.B``; ``import a.b as x`` + ``x.B``; ``import a.b`` + ``a.b.B``
            dotted = [f"{source}.{head}.{rest}", f"{source}.{rest}", f"{head}.{rest}"]
            candidates = [(d.rpartition(".")[0], d.rpartition(".")[2]) for d in dotted]
        for target, name in candidates:
            got = self.module(target)
            found = self._find(target, got[0], got[1], name, depth + 1) if got is not None else None
            if found is not None:
                return found
        return None

    def source_of(self, module: str, cls: str, method: str, *, data: bool = False) -> tuple[str, list[str]]:
        """The ancestor (``module.Class``) of ``module.cls`` that defines ``method`` (not itself; ``data``: or sets
        a data attribute of that name), and the bases met that could not be read."""
        unread: list[str] = []
        seen: set[tuple[str, str]] = {(module, cls)}
        todo = [(module, cls, 0)]
        while todo:
            mod, name, depth = todo.pop(0)
            for base in self.bases(mod, name):
                if isinstance(base, str):
                    unread.append(base)
                    continue
                if base in seen or depth >= MAX_DEPTH:
                    continue
                seen.add(base)
                parsed = self.module(base[0])
                key = f"{base[1]}.{method}"
                if parsed is not None and (key in parsed[0].defs or data and key in parsed[0].attributes):
                    return f"{base[0]}.{base[1]}", unread
                todo.append((base[0], base[1], depth + 1))
        return "", unread


def _upstream_unread(written: list[str], module: str, parsed: pyapi.Module, packages: Sequence[str]) -> list[str]:
    """The unread bases that come from the upstream's own packages (``torch.nn.Module`` is not the upstream's)."""
    roots = tuple(packages) or (module.split(".")[0],)
    out = []
    for base in written:
        source = parsed.imported.get(base.partition(".")[0], "")
        if source.startswith(".") or any(source == r or source.startswith(r + ".") for r in roots):
            out.append(base)
    return out


def across_modules(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None,
                   packages: Sequence[str] = ()) -> list[Change]:
    """The facts, with each public method removed or renamed read against the class hierarchy across modules."""
    methods = [f for f in facts if f.kind in ("removed", "renamed") and "." in f.symbol and f.path.endswith(".py")]
    attributes = [f for f in facts if f.kind == "attribute" and f.detail.startswith("removed") and tree is not None]
    if not methods and not attributes:
        return facts
    after = {f.before_path: f.after for f in diff.files if f.after is not None}
    after.update({f.path: f.after for f in diff.files if f.after is not None})

    classes = Hierarchy(module_reader(after, tree, diff.sha))
    names: frozenset[str] | None = None
    called: frozenset[str] | None = None
    gone = METHOD_GONE
    if tree is not None and methods:
        names, called = tree.method_names(diff.sha), tree.called_names(diff.sha)
    if names is None or called is None:  # what is available: the changed files after the commit
        gone = METHOD_GONE_CHANGED
        sources = [text for path, text in after.items() if path.endswith(".py")]
        names = frozenset(m for text in sources for m in _METHOD.findall(text))
        called = frozenset(m for text in sources for m in _CALLED.findall(text))
    # by identity: ``f in methods`` compares pydantic models field by field, quadratic in a PR's facts
    attribute_ids, method_ids = {id(f) for f in attributes}, {id(f) for f in methods}
    out: list[Change] = []
    for f in facts:
        owner, _, leaf = f.symbol.rpartition(".")
        if id(f) in attribute_ids and owner and classes.source_of(module_of(f.path), owner, leaf, data=True)[0]:
            continue  # the class still has it, from a base in another module
        if id(f) in method_ids:
            f = _read_method(f, classes, names, called, gone, tree is not None, packages)
        out.append(f)
    return out


def _read_method(f: Change, classes: Hierarchy, names: frozenset[str], called: frozenset[str], gone: str,
                 whole: bool, packages: Sequence[str]) -> Change:
    cls, _, method = f.symbol.rpartition(".")
    if f.kind == "renamed" and f.before:  # the symbol is the new name; calls use the old one
        method = f.before.rpartition(".")[2]
    module = module_of(f.path)
    if f.kind == "removed" and not f.detail:
        source, unread = classes.source_of(module, cls, method)
        if source:
            return Change(kind="body", symbol=f.symbol, path=f.path, line=f.line, before=f.before,
                          detail=f"now inherited from {source}", public=f.public)
        got = classes.module(module)
        upstream = _upstream_unread(unread, module, got[0], packages) if got is not None else []
        if upstream and not whole:
            return f.model_copy(update={"detail": BASE_UNREAD.format(", ".join(upstream))})
    if method not in names and not method.startswith("__"):
        # a builtin's name (``clear``) is called on dicts everywhere: that stays a check (matchers._by_name)
        if method in called and method not in BUILTIN_METHODS:
            gone = METHOD_OUTSIDE
        return f.model_copy(update={"detail": f"{f.detail} ({gone})" if f.detail else gone})
    return f
