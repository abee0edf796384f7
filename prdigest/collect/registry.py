"""PR sources as a registry, like media and drafters: a source is one module implementing
:class:`~prdigest.collect.sources.Source` and one :class:`SourceKind` registration. ``--source`` names a kind, with an
argument after a colon when the kind takes one (``jsonl:PATH``); the composition root looks it up here.

Registrations build lazily: importing this module imports no client library. A source from another package is an entry
point
in the ``pr_digest.sources`` group naming its :class:`SourceKind` (see ``prdigest.kernel.registry``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from prdigest.collect.sources import JsonlSource, Source, sample_week_path
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.registry import SOURCES_GROUP, Registry
from prdigest.kernel.storage import Store

if TYPE_CHECKING:
    from prdigest.collect.git import UpstreamClone


@dataclass(frozen=True)
class SourceContext:
    """What building a source may use."""

    settings: Settings
    #: ``--repo``: the repository to collect (a JSONL file can tell it from its PR URLs).
    repo: str | None = None
    #: The run's state store, opened on first call (a file source never calls it); a source that keeps state
    #: refuses to be built without it (no component opens a store of its own).
    store: Callable[[], Store] | None = None
    #: Collect the discussion (reviews, conversation comments, linked issues); False: ``--no-discussion``.
    discussion: bool = True
    #: The run's ``--git`` clone (opened on first call; None when there is none or it cannot be had): a source
    #: may leave to it what it gives (the GitHub source then lists no PR's files).
    upstream: "Callable[[], UpstreamClone | None] | None" = None


@dataclass(frozen=True)
class SourceKind:
    """One kind of PR source: its name, the argument it takes after ``NAME:``, and how to build it."""

    name: str
    #: One line for ``--help`` and error messages.
    summary: str
    #: Builds the source from the argument ("" when the kind takes none); no network I/O.
    build: Callable[[str, SourceContext], Source]
    #: What follows ``NAME:`` (``PATH`` for ``jsonl:PATH``); None: the kind takes no argument.
    argument: str | None = None

    @property
    def form(self) -> str:
        """How ``--source`` spells it (``jsonl:PATH``, ``github``)."""
        return f"{self.name}:{self.argument}" if self.argument else self.name


class SourceRegistry(Registry[SourceKind]):
    """The PR sources a run may use, by name (``forms`` and ``parse``: the kernel registry's NAME:ARGUMENT)."""

    what, flag, group = "source", "--source", SOURCES_GROUP

    def build(self, value: str, context: SourceContext) -> Source:
        """The source ``--source value`` names."""
        kind, argument = self.parse(value)
        return kind.build(argument, context)


def _jsonl(argument: str, context: SourceContext) -> Source:
    return JsonlSource(Path(argument).expanduser(), context.repo)


def _sample(argument: str, context: SourceContext) -> Source:
    return JsonlSource(sample_week_path(), context.repo)


def _github(argument: str, context: SourceContext) -> Source:
    from prdigest.collect.github import GitHubSource

    settings = context.settings
    if not context.repo:
        raise ConfigError("--source github needs --repo OWNER/NAME (e.g. --repo vllm-project/vllm)")
    if settings.github_token is None or not settings.github_token.get_secret_value().strip():
        raise ConfigError(f"--source github needs a token: set GITHUB_TOKEN to a token that can read {context.repo}")
    if context.store is None:
        raise ConfigError("--source github keeps its cache in the state store: build it through the composition "
                          "root (prdigest.pipeline.compose), which hands it the run's store")
    return GitHubSource(context.repo, token=settings.github_token.get_secret_value().strip(),
                        base_url=settings.github_url, state=context.store,
                        concurrency=settings.github_concurrency, discussion=context.discussion,
                        upstream=context.upstream if settings.git else None)


#: The shipped sources, declared as entry points of the ``pr_digest.sources`` group in pyproject.toml like any
#: installed package's.
JSONL = SourceKind("jsonl", "a file in the source format, one PR a line", build=_jsonl, argument="PATH")
GITHUB = SourceKind("github", "the GitHub (or GitHub Enterprise) API, with GITHUB_TOKEN", build=_github)
SAMPLE = SourceKind("sample", "the shipped sample week of vLLM PRs", build=_sample)

#: Every source a run may name: the installed entry points (the shipped ones among them), loaded by name, and a
#: team's own registered in process: ``SOURCES.register(SourceKind(...))`` before the run is built.
SOURCES = SourceRegistry()
