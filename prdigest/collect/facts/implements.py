"""A new class whose base comes from another project (the upstream a plugin builds on): a new implementation of
that project's extension point (a KV connector deriving from ``KVConnectorBase_V1``, a scheduler from vLLM's
``Scheduler``), read with ``ast`` from the module's imports (nothing is imported).

Said in the class's ``added`` fact as ``detail`` ``implements vllm.distributed.kv_transfer.….KVConnectorBase_V1``.
Not another project: the module's own top-level package, the standard library, and the libraries any class derives
from for its shape whatever it implements (:data:`COMMON`: the tensor runtimes' ``nn.Module``, ``nnx.Module`` or
``autograd.Function``, pydantic models).
"""

from __future__ import annotations

import ast
import sys

from prdigest.collect.facts import pyapi
from prdigest.collect.facts.surface import module_name
from prdigest.kernel.models import Change

#: The start of an ``added`` class fact's detail that names the bases it implements.
IMPLEMENTS = "implements "
#: Top-level packages whose classes are how code is written, not an extension point of one project.
COMMON = frozenset({"torch", "jax", "jaxlib", "flax", "numpy", "triton", "tensorflow", "typing_extensions",
                    "pydantic", "attr", "attrs"})


def implementing(facts: list[Change], texts: dict[str, str]) -> list[Change]:
    """``facts`` with each new top-level class (an ``added`` fact) whose base is imported from another project
    saying which (``texts``: a Python file's text after the commit, by path; tests left out by the caller)."""
    out: list[Change] = []
    for c in facts:
        if c.kind == "added" and "." not in c.symbol and not c.detail and c.path in texts:
            bases = _foreign_bases(texts[c.path], c.path).get(c.symbol)
            if bases:
                c = c.model_copy(update={"detail": IMPLEMENTS + ", ".join(bases)})
        out.append(c)
    return out


def _foreign_bases(text: str, path: str) -> dict[str, tuple[str, ...]]:
    """Top-level class → its bases imported from another project, by their dotted origin."""
    module = pyapi.parse(text)
    if module is None or module.tree is None:
        return {}
    own = module_name(path).split(".")[0]
    origin: dict[str, str] = {}  # a name bound by an import → the dotted thing it is
    for node in module.tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            origin.update({a.asname or a.name: f"{node.module}.{a.name}" for a in node.names})
        elif isinstance(node, ast.Import):
            origin.update({a.asname: a.name for a in node.names if a.asname})
            origin.update({a.name.split(".")[0]: a.name.split(".")[0] for a in node.names if not a.asname})
    found: dict[str, tuple[str, ...]] = {}
    for node in module.tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        bases = []
        for base in node.bases:
            target = base.value if isinstance(base, ast.Subscript) else base  # ``Base[T]``
            head, _, rest = ast.unparse(target).partition(".")
            where = origin.get(head)
            if where is None:
                continue
            top = where.split(".")[0]
            if top != own and top not in COMMON and top not in sys.stdlib_module_names:
                bases.append(f"{where}.{rest}" if rest else where)
        if bases:
            found[node.name] = tuple(bases)
    return found
