"""Names upstream announces deprecated: each downstream use of one is a ``check`` (it still works; it goes in the
release the fact names, and the fact says what to use instead when the announcing line does).

A ``deprecated`` fact is read from a line the PR adds to a shipped module (a warning's message, a comment:
prdigest.collect.facts.deprecations), so its symbol is matched as a name of that module only (``vllm.multimodal
.utils.group_mm_kwargs_by_modality`` kept as an alias of its new name): a use that resolves to it, never a word.
"""

from __future__ import annotations

from collections.abc import Iterator

from prdigest.connect.impact.matchers import Context, Hit, Matcher, matches
from prdigest.kernel.models import Change


def _deprecated(change: Change, ctx: Context) -> Iterator[Hit]:
    """Imports, calls and reads of the deprecated name of the fact's module, each a check."""
    if not change.path.endswith(".py"):
        return
    words = f"{change.symbol} is deprecated" + (f", removed in {change.after}" if change.after else "") \
        + (f"; use {change.detail} instead" if change.detail else "")
    for use in ctx.table.named(change.symbol.rpartition(".")[2]):
        if use.how in ("imports", "calls", "reads") and matches(use, ctx.prefixes, change.symbol, deeper=False) \
                is not None:
            yield Hit(use, "check", words)


#: Read by prdigest.connect.impact.match beside the API's matchers.
DEPRECATIONS: dict[str, Matcher] = {"deprecated": _deprecated}
