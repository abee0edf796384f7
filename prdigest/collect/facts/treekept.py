"""Data attributes "gone" by name, read against the upstream's whole tree (``--git``): a name another class of the
tree still keeps, as a method or property or an attribute some method sets (``self.x = …``), is not gone.

:func:`prdigest.collect.facts.pyapi` marks a removed attribute :data:`~prdigest.collect.facts.pyapi.ATTRIBUTE_GONE`
when no class of the changed files keeps the name, and a downstream's ``obj.x`` on an object of unknown type then
breaks by name. A class in a file the commit did not touch may keep it (vLLM 0.18.1 dropped
``EngineCore.is_ec_producer`` while ``ECTransferConfig.is_ec_producer``, unchanged, stayed: tpu-inference's
``ec_transfer_config.is_ec_producer`` was flagged). With the tree, such a fact keeps its removal (a read through
the class's name or a subclass still breaks) and loses the mark: a read by name is not matched.
"""

from __future__ import annotations

import re

from prdigest.collect.facts.hierarchy import UpstreamTree
from prdigest.collect.facts.pyapi import ATTRIBUTE_GONE
from prdigest.kernel.models import Change


def _set_somewhere(tree: UpstreamTree, sha: str, name: str) -> bool | None:
    """Whether a Python file of the tree sets ``self.name`` (None when the tree cannot be read whole)."""
    setter = re.compile(rf"\bself\.{re.escape(name)}[ \t]*(?::[^=\n]+)?=(?!=)")
    found = tree.texts_where(sha, lambda text: setter.search(text) is not None)
    return None if found is None else bool(found)


def tree_kept(facts: list[Change], tree: UpstreamTree | None, sha: str) -> list[Change]:
    """The facts, with each attribute marked gone by name unmarked when a class of the tree keeps the name."""
    gone = {f.symbol.rpartition(".")[2] for f in facts if f.kind == "attribute" and ATTRIBUTE_GONE in f.detail}
    if not gone or tree is None:
        return facts
    methods = tree.method_names(sha)
    if methods is None:
        return facts  # the tree too large to scan: the changed files' word stands
    kept = {name for name in gone if name in methods or _set_somewhere(tree, sha, name)}
    return [f.model_copy(update={"detail": f.detail.replace(ATTRIBUTE_GONE, "")})
            if f.kind == "attribute" and ATTRIBUTE_GONE in f.detail and f.symbol.rpartition(".")[2] in kept else f
            for f in facts]
