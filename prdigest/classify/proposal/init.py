"""``digest rules init`` without the command line: read a repository, propose, write the file, and check
that it loads like a hand-written one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from prdigest.classify.proposal.propose import Proposal, propose
from prdigest.classify.proposal.repo import RepoSnapshot, from_checkout
from prdigest.classify.proposal.writer import render
from prdigest.classify.rulesfile import load_rules
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import PullRequest


def read_repo(repo: str, *, checkout: Path | None, settings: Settings | None,
              prs: list[PullRequest] | None = None) -> RepoSnapshot:
    """The repository from ``checkout`` (nothing fetched) or else through the GitHub API; ``prs`` adds the
    labels and changes of PRs already at hand."""
    if checkout is not None:
        snapshot = from_checkout(checkout, repo)
    else:
        from prdigest.classify.proposal.remote import from_github

        if settings is None:
            raise ConfigError("reading a repository through the GitHub API needs settings (GITHUB_TOKEN)")
        token = settings.github_token.get_secret_value().strip() if settings.github_token else None
        snapshot = from_github(repo, token=token or None, base_url=settings.github_url)
    if prs:
        snapshot.add_prs(prs)
    return snapshot


def write_proposal(proposal: Proposal, out: Path) -> str:
    """Write the proposal to ``out`` atomically after checking it loads; return the text."""
    text = render(proposal)
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=".rules-", suffix=".yaml", dir=out.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        loaded = load_rules(Path(temp))
        if loaded != proposal.rules():  # the writer and the model must never disagree
            raise AssertionError(f"the written rules for {proposal.repo} do not load into the proposal")
        os.replace(temp, out)
    finally:
        if os.path.exists(temp):
            os.unlink(temp)
    return text


def init_rules(repo: str, out: Path, *, checkout: Path | None = None, settings: Settings | None = None,
               prs: list[PullRequest] | None = None) -> Proposal:
    """Propose rules for ``repo`` and write them to ``out``."""
    proposal = propose(read_repo(repo, checkout=checkout, settings=settings, prs=prs))
    write_proposal(proposal, out)
    return proposal
