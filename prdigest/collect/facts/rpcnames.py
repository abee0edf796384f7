"""Methods the upstream now calls by their name in a string on every object of a base class that does not define
them: a new obligation of the base's subclasses, said as an ``abstract`` fact on the base.

vLLM's executor calls its workers' methods over RPC by name (``self.collective_rpc("reset_encoder_cache")``); a
worker is any subclass of ``WorkerBase``. When a commit adds such a call for a name ``WorkerBase`` does not define
(only the GPU ``Worker`` does), every other worker (a plugin's ``NPUWorker(WorkerBase)``) fails on it. The base is
the class the calls go to: an upstream base of a class that defines the name, which defines at least
:data:`MIN_CALLED` other names the same caller function calls by name, and does not define (nor inherit from an
upstream base) this one.

Read from the changed files and, with the upstream's whole tree (``--git``), the files that call by name and the
files defining the classes involved. Without the tree nothing is said (the base and its methods are out of sight).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from prdigest.collect.facts.hierarchy import UpstreamTree
from prdigest.collect.git import CommitDiff
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change

#: A call by name: a function whose name says it dispatches (``collective_rpc``, ``call_utility``), its first
#: argument a string that is an identifier.
_BY_NAME = re.compile(r"\b(\w*(?:rpc|utility)\w*)\(\s*[\"']([A-Za-z_]\w*)[\"']", re.IGNORECASE)
#: Names a base must define among those its caller function calls by name, to be the class the calls go to.
MIN_CALLED = 3


def _called(text: str | None) -> set[tuple[str, str]]:
    return {(m[1], m[2]) for m in _BY_NAME.finditer(text or "")}


def _classes(text: str, path: str) -> dict[str, tuple[list[str], set[str]]]:
    """Each top-level class of a file: its bases' last names and the names its body defines."""
    tree, _ = safe_parse.parse(text, filename=path)
    out: dict[str, tuple[list[str], set[str]]] = {}
    if not isinstance(tree, ast.Module):
        return out
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = [ast.unparse(b).split("[", 1)[0].rpartition(".")[2] for b in node.bases]
            names = {n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            names |= {t.id for n in node.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                      for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Name)}
            out[node.name] = (bases, names)
    return out


def _mentions(heads: tuple[str, ...]) -> Callable[[str], bool]:
    return lambda text: any(h in text for h in heads)


def with_rpc_obligations(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None,
                         packages: Sequence[str]) -> list[Change]:
    """The facts, and an ``abstract`` fact for each method a commit now calls by name on a base's objects that
    the base does not define."""
    if tree is None or not packages:
        return facts
    new: set[tuple[str, str]] = set()
    for f in diff.files:
        if f.path.endswith(".py") and f.after:
            new |= _called(f.after) - _called(f.before)
    if not new:
        return facts
    callers = {caller for caller, _ in new}
    texts = tree.texts_where(diff.sha, lambda t: any(f"{c}(" in t for c in callers)) or {}
    called: dict[str, set[str]] = {}
    for text in texts.values():
        for caller, name in _called(text):
            called.setdefault(caller, set()).add(name)
    names = {name for _, name in new}
    defining = tree.texts_where(diff.sha, lambda t: any(f"def {n}(" in t for n in names)) or {}
    classes: dict[str, tuple[str, list[str], set[str]]] = {}  # class → (path, bases, names)

    def read(paths_texts: dict[str, str]) -> None:
        for path, text in paths_texts.items():
            if any(path == p or path.startswith(p.replace(".", "/") + "/") for p in packages):
                for cls, (bases, defined) in _classes(text, path).items():
                    classes.setdefault(cls, (path, bases, defined))

    read(defining)
    wanted = {b for _, bases, _ in classes.values() for b in bases} - classes.keys()
    for _ in range(3):  # the bases' bases, a few levels up
        if not wanted:
            break
        read(tree.texts_where(diff.sha, _mentions(tuple(f"class {b}" for b in wanted))) or {})
        wanted = {b for _, bases, _ in classes.values() for b in bases} - classes.keys()

    def defines(cls: str, name: str, seen: frozenset[str] = frozenset()) -> bool:
        if cls not in classes or cls in seen:
            return False
        _, bases, defined = classes[cls]
        return name in defined or any(defines(b, name, seen | {cls}) for b in bases)

    def ancestors(cls: str, seen: frozenset[str] = frozenset()) -> list[str]:
        if cls not in classes or cls in seen:
            return []
        return [b for b in classes[cls][1] if b in classes] + [a for b in classes[cls][1]
                                                                 for a in ancestors(b, seen | {cls})]

    def everything(cls: str) -> set[str]:
        return classes[cls][2].union(*(classes[a][2] for a in ancestors(cls)))

    have = {(f.kind, f.symbol) for f in facts}
    out = list(facts)
    for caller, name in sorted(new):
        others = called.get(caller, set()) - {name}
        # the class the calls go to: of those defining the name, the ones defining most of what the caller calls
        # by name (``Worker`` for collective_rpc; for call_utility, ``EngineCore``, with no base lacking it)
        implementers = {c: len(everything(c) & others) for c, (_, _, defined) in classes.items() if name in defined}
        best = max(implementers.values(), default=0)
        for cls in sorted(c for c, n in implementers.items() if n == best and n >= MIN_CALLED):
            for base in ancestors(cls):
                path, _, defined = classes[base]
                if defines(base, name) or len(defined & others) < MIN_CALLED \
                        or ("abstract", f"{base}.{name}") in have:
                    continue
                have.add(("abstract", f"{base}.{name}"))
                out.append(Change(kind="abstract", symbol=f"{base}.{name}", path=path,
                                  detail=f"called by name (`{caller}(\"{name}\")`) on every {base}; "
                                         f"{base} does not define it"))
    return out
