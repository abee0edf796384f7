"""Settings a PR introduces to its users: a check of one refuses nobody's existing configuration.

A key the PR documents for the first time (a page of its user docs names it as code after the commit and no page
did before) and that the module now checking it did not name before is new to readers, wherever else some other
module happened to read a key of that name (vllm-ascend #5168: ``prefill_pp_layer_partition`` of the KV pool's
new decode-side store, a key the Mooncake connector reads from its own prefill table). A check of it validates
the new setting as it comes: no reader has set it for this feature yet, so it asks nothing. A setting the docs
named before, or that the module read before, keeps its check (prdigest/collect/facts/rejections.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prdigest.collect.facts.reach import Evidence, doc_names, user_doc
from prdigest.collect.git import CommitDiff
from prdigest.kernel.models import Change


def named_in(name: str, text: str) -> bool:
    """Whether ``text`` writes ``name`` as a word (``prefill_pp_size`` does not name ``prefill_pp``)."""
    return bool(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text))


def introduced(facts: Sequence[Change], diff: CommitDiff, before: Evidence | None) -> list[Change]:
    """``facts`` without a check of a setting ``diff`` documents for the first time and whose module did not name
    it before; ``before`` is the evidence of the tree at the parent (the facts stand without it)."""
    refused = [c for c in facts if c.detail == "rejected" and c.kind in ("env", "config")]
    if not refused or before is None or not before.whole_tree:
        return list(facts)
    documented: set[str] = set()
    for f in diff.files:
        if f.after and user_doc(f.path):
            documented |= doc_names(f.path, f.after) - doc_names(f.path, f.before or "")
    texts = {f.path: f.before or "" for f in diff.files}  # the module before: did it read the key?
    new = {c.symbol for c in refused if c.symbol in documented and c.symbol not in before.documented
           and not named_in(c.symbol, texts.get(c.path, ""))}
    return [c for c in facts if not (c in refused and c.symbol in new)]
