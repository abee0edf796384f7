"""Drafters as a registry, like media (``prdigest.deliver.media``): a drafter is one module implementing
:class:`~prdigest.draft.Drafter` and one :class:`DrafterKind` registration saying how to build it, how many
PRs it drafts at once, what the edition calls it, what its tokens cost, how it reports its usage, and whether
it writes the lede. The pipeline, ``digest eval``, the flow and the CLI look drafters up here by name;
none of them names one.

Registrations build lazily: importing this module imports no model SDK. A drafter from another package is an entry point
in
the ``pr_digest.drafters`` group naming its :class:`DrafterKind` (see ``prdigest.kernel.registry``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prdigest.connect.lede import Complete
from prdigest.draft import Drafter
from prdigest.draft.cache import DraftCache
from prdigest.draft.cost import cost_usd
from prdigest.draft.usage import usage_markdown
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Coverage, Entry, PullRequest
from prdigest.kernel.registry import DRAFTERS_GROUP, Registry
from prdigest.kernel.storage import Store
from prdigest.kernel.vocabulary import Vocabulary

if TYPE_CHECKING:
    from prdigest.draft.packing import DraftContext


@dataclass(frozen=True)
class DraftingContext:
    """What building a drafter may use."""

    settings: Settings
    #: The repo's vocabulary (labels, audiences, drafting hints); None: repo-independent signals only.
    vocabulary: Vocabulary | None = None
    #: The run's state store, opened on first call (the offline drafter never calls it); None: the drafter
    #: opens and closes its own.
    store: Callable[[], Store] | None = None
    #: Builds the draft cache over the store (``digest eval`` passes one that records its hits).
    cache: Callable[[Store], DraftCache] = DraftCache


def _one(settings: Settings) -> int:
    return 1


def _free(tokens_in: int, tokens_out: int, settings: Settings) -> float:
    return 0.0


@dataclass(frozen=True)
class DrafterKind:
    """One drafter as the run knows it: its name (``--drafter``) and what callers ask of it."""

    name: str
    #: One line for ``--help`` and error messages.
    summary: str
    #: The drafter, with no I/O (its ``check`` connects).
    build: Callable[[DraftingContext], Drafter]
    #: How many PRs it drafts at once (1: in line, in PR order).
    concurrency: Callable[[Settings], int] = _one
    #: The edition's ``drafter`` field; None: the kind's name.
    label: Callable[[Settings], str] | None = None
    #: The estimated price of a run's tokens.
    cost: Callable[[int, int, Settings], float] = _free
    #: The draft step's usage for the editor (markdown: drafts, tokens, cost); None: nothing to report.
    usage: Callable[[list[Entry], Settings], str] | None = None
    #: The model completion that writes the lede; None: the lede is composed offline.
    complete: Callable[[Settings], Complete] | None = None
    #: What the drafter is given of a PR (files, lines, remarks, issues), for the entry's coverage; None: it
    #: reads the whole PR (the offline drafter), nothing to record.
    coverage: Callable[[PullRequest, "DraftContext | None", Settings], Coverage] | None = None

    def title(self, settings: Settings) -> str:
        """What the edition and ``eval.json`` call this drafter (``offline``, ``openai:<model>``)."""
        return self.label(settings) if self.label else self.name


class DrafterRegistry(Registry[DrafterKind]):
    """The drafters a run may use, by name."""

    what, flag, group = "drafter", "--drafter", DRAFTERS_GROUP


def _offline(context: DraftingContext) -> Drafter:
    from prdigest.draft.offline import OfflineDrafter

    return OfflineDrafter(context.vocabulary)


def _openai(context: DraftingContext) -> Drafter:
    from prdigest.draft.llm import OpenAIDrafter
    from prdigest.draft.offline import OfflineDrafter

    # The model's failures fall back to the offline draft, with the repo's vocabulary.
    if context.store is None:
        raise ConfigError("--drafter openai caches its drafts in the state store: build it through the "
                          "composition root (prdigest.pipeline.compose), which hands it the run's store")
    return OpenAIDrafter.from_settings(context.settings, conn=context.store(),
                                      fallback=OfflineDrafter(context.vocabulary), cache=context.cache)


def _openai_coverage(pr: PullRequest, context: "DraftContext | None", settings: Settings) -> Coverage:
    from prdigest.draft.packing import pack

    return pack(pr, settings.llm_input_budget, context).coverage


def _openai_complete(settings: Settings) -> Complete:
    from prdigest.draft.endpoint import openai_complete

    return openai_complete(settings)


#: The shipped drafters, declared as entry points of the ``pr_digest.drafters`` group in pyproject.toml like
#: any installed package's.
OFFLINE = DrafterKind("offline", "deterministic drafts from the PR's own data, no network", build=_offline)
OPENAI = DrafterKind("openai", "a chat model at --llm-base-url (OpenAI or any compatible server)", build=_openai,
                     concurrency=lambda settings: settings.llm_concurrency,
                     label=lambda settings: f"openai:{settings.model}", cost=cost_usd, usage=usage_markdown,
                     complete=_openai_complete, coverage=_openai_coverage)

#: Every drafter a run may name: the installed entry points (the shipped ones among them), loaded by name, and
#: a team's own registered in process: ``DRAFTERS.register(DrafterKind(...))`` before the run is built.
DRAFTERS = DrafterRegistry()
