"""Upstream classes handed over by name: the slots where the upstream takes a class as its qualified name in a
string (``parallel_config.worker_cls = "vllm.v1.worker.gpu_worker.Worker"``), and which of its classes it expects
there, read from its own code.

A class expected in a slot is one the upstream's code puts there itself (an attribute, a keyword or a dict key of
that name given a dotted string naming one of its classes) or the type the slot's consumer resolves it as
(``worker_class: type[WorkerBase] = resolve_obj_by_qualname(parallel_config.worker_cls)``). A method fact of such
a class says the slot (``Change.registered``): a downstream class registered in the same slot that subclasses
nothing of the upstream's (``TPUWorker``, called by its method names over RPC) is matched as implementing it
(prdigest.connect.impact.index's registered uses).

Read from the changed files and, with the upstream's whole tree (``--git``), every Python file of it that names a
dotted path of the upstream in a string or a ``type[…]`` annotation.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from functools import lru_cache

from prdigest.collect.facts.hierarchy import Hierarchy, Reader, UpstreamTree, module_reader
from prdigest.collect.git import CommitDiff
from prdigest.kernel import safe_parse
from prdigest.kernel.models import Change
from prdigest.kernel.pymodule import module_and_package, module_of

#: Method facts a class registered by name meets as an override would (not a changed body: upstream's own
#: implementation of the method, which the registered class replaces whole).
KINDS = frozenset({"signature", "returns", "removed", "renamed", "abstract", "passes"})
#: A file worth parsing: a ``type[…]`` annotation or a quoted dotted path.
_WORTH = re.compile(r"type\[|[\"'][A-Za-z_]\w*(?:\.\w+){2,}[\"']")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def with_registered(facts: list[Change], diff: CommitDiff, tree: UpstreamTree | None,
                    packages: Sequence[str]) -> list[Change]:
    """The facts, each method fact of a class the upstream expects in a slot saying the slot (``registered``)."""
    targets = [f for f in facts if f.kind in KINDS and f.symbol.count(".") == 1 and f.public
               and f.path.endswith(".py") and not f.symbol.startswith("*.")]
    if not targets or not packages:
        return facts
    after = {f.path: f.after for f in diff.files if f.after is not None and f.path.endswith(".py")}
    texts = dict(after)
    if tree is not None:
        texts.update(tree.texts_where(diff.sha, lambda t: bool(_WORTH.search(t))) or {})
    filled: dict[str, set[str]] = {}
    for path, text in texts.items():
        if not _WORTH.search(text):
            continue
        module, package = module_and_package(path)
        for slot, cls in _slots(text, module, package, tuple(packages)):
            filled.setdefault(slot, set()).add(cls)
    if not filled:
        return facts
    by_class: dict[str, list[str]] = {}
    for slot, classes in sorted(filled.items()):
        for cls in classes:
            by_class.setdefault(cls, []).append(slot)
    owners = {id(f): [f"{module_of(f.path)}.{f.symbol.split('.')[0]}", *f.inherited_by] for f in targets}
    # the same change of one method on several classes of a slot (WorkerBase, Worker(WorkerBase), CPUWorker(Worker)):
    # said of the most general one only, so a registered class's method is flagged once
    ancestry = _Ancestry(module_reader(after, tree, diff.sha))
    changed: dict[tuple[str, str, str], set[str]] = {}
    for f in targets:
        for owner in owners[id(f)]:
            for slot in by_class.get(owner, ()):
                changed.setdefault((f.kind, slot, f.symbol.split(".")[1]), set()).add(owner)
    out: list[Change] = []
    for f in facts:
        if id(f) in owners:
            method = f.symbol.split(".")[1]
            slots = sorted({s for owner in owners[id(f)] for s in by_class.get(owner, ())
                            if not ancestry.below_another(owner, changed[(f.kind, s, method)])})
            if slots:
                f = f.model_copy(update={"registered": tuple(slots)})
        out.append(f)
    return out


class _Ancestry:
    """The upstream classes above one (``vllm.a.Base`` for ``vllm.b.Child(Base)``), resolved through imports."""

    def __init__(self, read: Reader) -> None:
        self.classes = Hierarchy(read)
        self._above: dict[str, set[str]] = {}

    def above(self, cls: str) -> set[str]:
        if cls not in self._above:
            self._above[cls] = set()  # a cycle of bases ends here
            module, _, name = cls.rpartition(".")
            found: set[str] = set()
            for base in self.classes.bases(module, name):
                if isinstance(base, tuple):
                    dotted = ".".join(base)
                    found |= {dotted, *self.above(dotted)}
            self._above[cls] = found
        return self._above[cls]

    def below_another(self, cls: str, others: set[str]) -> bool:
        """Whether one of ``others`` is a class above ``cls``."""
        return bool(self.above(cls) & (others - {cls}))


@lru_cache(maxsize=16384)
def _slots(text: str, module: str, package: bool, packages: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """(slot, upstream class) pairs one module says: what it puts in a slot by name, and the type it reads one as."""
    tree, _ = safe_parse.parse(text, filename=module)
    if not isinstance(tree, ast.Module):
        return ()
    imported: dict[str, str] = {}
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    found: set[tuple[str, str]] = set()

    def upstream_class(value: ast.expr | None) -> str | None:
        if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
            return None
        text = value.value
        if not _DOTTED.fullmatch(text) or not any(text.startswith(p + ".") for p in packages):
            return None
        return text if text.rpartition(".")[2][:1].isupper() else None  # a class, by the name's convention

    annotated: list[tuple[ast.expr, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module or "", node.level, module, package)
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{source}.{alias.name}"
        elif isinstance(node, ast.Assign):
            cls = upstream_class(node.value)
            if cls is not None:
                found.update((t.attr, cls) for t in node.targets if isinstance(t, ast.Attribute))
        elif isinstance(node, ast.keyword) and node.arg is not None:
            cls = upstream_class(node.value)
            if cls is not None:
                found.add((node.arg, cls))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                cls = upstream_class(value)
                if cls is not None and isinstance(key, ast.Constant) and isinstance(key.value, str) \
                        and key.value.isidentifier():
                    found.add((key.value, cls))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            annotated.append((node.annotation, node.value))
    for ann, value in annotated:  # ``x: type[C] = resolve(config.slot)``: the consumer reads the slot as a C
        if not (isinstance(ann, ast.Subscript) and isinstance(ann.value, ast.Name) and ann.value.id == "type"
                and isinstance(ann.slice, ast.Name)):
            continue
        name = ann.slice.id
        cls = imported.get(name) or (f"{module}.{name}" if name in defined else None)
        if cls is None or not any(cls.startswith(p + ".") for p in packages):
            continue
        # the attributes it reads (``config.slot``), not the functions it calls nor a chain's inner links
        inner = {id(n.func) for n in ast.walk(value) if isinstance(n, ast.Call)}
        inner |= {id(n.value) for n in ast.walk(value) if isinstance(n, ast.Attribute)}
        found.update((a.attr, cls) for a in ast.walk(value) if isinstance(a, ast.Attribute) and id(a) not in inner)
    return tuple(sorted(found))


def _absolute(source: str, level: int, module: str, package: bool) -> str:
    """``from ..x import C`` written in ``module`` → the module it names."""
    if not level:
        return source
    parts = module.split(".") if package else module.split(".")[:-1]
    parts = parts[: len(parts) - (level - 1)] if level > 1 else parts
    return ".".join([*parts, source] if source else parts)
