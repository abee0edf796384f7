"""An editor's "not a break" in the review: ``accept SYMBOL PATH`` under *Changes* clears the edition's impacts
of that upstream symbol in that downstream file. The reviewed edition leaves them out, and the flow keeps them
in the state store (:mod:`prdigest.connect.impact.cleared`) for later runs and alerts, until the symbol changes
again."""

from __future__ import annotations

import re

from prdigest.connect.impact.cleared import Clearances
from prdigest.kernel.models import Edition, Entry, Impact
from prdigest.state.store import Store


def accepted_pairs(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """(symbol, path) pairs from ``SYMBOL PATH; SYMBOL PATH``, and why a part is not one."""
    pairs: list[tuple[str, str]] = []
    errors: list[str] = []
    for part in (p.strip() for p in re.split(r"[;\n]", text)):
        if not part:
            continue
        words = part.split()
        if len(words) != 2 or not re.fullmatch(r"[A-Za-z_][\w.]*", words[0]):
            errors.append(f"accept: '{part[:80]}' is not 'SYMBOL PATH' (e.g. accept FusedMoE.forward "
                          "vllm_ascend/ops/fused_moe.py)")
            continue
        pairs.append((words[0], words[1]))
    return pairs, errors


def _named(symbol: str, given: str) -> bool:
    return symbol == given or symbol.endswith("." + given)


def accepted_impacts(edition: Edition, text: str) -> tuple[list[Impact], list[str]]:
    """The edition's impacts an ``accept`` text names, and why a pair names none."""
    pairs, reasons = accepted_pairs(text)
    found: list[Impact] = []
    for symbol, path in pairs:
        hits = [i for e in edition.entries for i in e.impact if i.path == path and _named(i.symbol, symbol)]
        if not hits:
            reasons.append(f"accept: no impact of {edition.name} on {symbol[:80]} in {path[:120]} (the review lists "
                           "them under Affects downstream)")
        found += hits
    return found, reasons


def without(entries: list[Entry], accepted: list[Impact]) -> list[Entry]:
    """``entries`` without the ``accepted`` impacts."""
    gone = set(accepted)
    return [e if not gone.intersection(e.impact) else e.model_copy(update={"impact": [i for i in e.impact
                                                                                      if i not in gone]})
            for e in entries]


def keep_accepted(store: Store, edition: Edition, text: str, who: str) -> int:
    """Keep the impacts ``text`` accepts as "not a break" in the state store; how many were new."""
    accepted = accepted_impacts(edition, text)[0]
    return Clearances(store, edition.repo).clear(accepted, who) if accepted else 0
