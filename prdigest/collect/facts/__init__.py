"""Code facts: what each PR's diff did to the code, read from every changed file before and after (never from
its prose; never a name that is not written in one of the two versions).

:func:`week_facts` computes a week's (one read of the clone, cached by commit); :func:`commit_facts` one
commit's; :func:`patch_facts` what the REST patches show when there is no clone; :func:`is_breaking` says
whether an entry's facts make it breaking.
"""

from __future__ import annotations

from collections.abc import Iterable

from prdigest.collect.facts.cache import FactsCache
from prdigest.collect.facts.commit import FACTS_VERSION, commit_facts
from prdigest.collect.facts.patches import patch_facts
from prdigest.collect.facts.surface import Surface, module_name
from prdigest.collect.facts.week import WeekFacts, week_facts
from prdigest.kernel.models import Change

__all__ = ["FACTS_VERSION", "FactsCache", "Surface", "WeekFacts", "breaking_facts", "commit_facts", "is_breaking",
           "module_name", "patch_facts", "week_facts"]

def breaking_facts(changes: Iterable[Change]) -> list[Change]:
    """The facts that break callers (:attr:`Change.breaks <prdigest.kernel.models.Change.breaks>`: a public name
    removed, renamed, moved (not re-exported) or whose signature changed other than by parameters with
    defaults; an environment variable, argument or config field removed or renamed; a kernel removed)."""
    return [c for c in changes if c.breaks]


def is_breaking(changes: Iterable[Change]) -> bool:
    """Whether any fact is breaking: the entry's ``breaking`` mark before review."""
    return any(c.breaks for c in changes)
