"""Who is a bot: GitHub App accounts (``name[bot]``) and the well-known automation accounts that comment as
users. Their comments (CI reports, coverage tables, merge-queue notices, AI review summaries) never reach a
prompt or a draft: they are long, repetitive and say nothing a reader of the digest needs."""

from __future__ import annotations

#: Automation accounts that post as ordinary users (lower case). A GitHub App always ends in ``[bot]``.
KNOWN_BOTS = frozenset({
    "github-actions", "dependabot", "dependabot-preview", "renovate", "mergify", "codecov", "codecov-commenter",
    "netlify", "vercel", "coderabbitai", "gemini-code-assist", "copilot-pull-request-reviewer", "copilot",
    "sourcery-ai", "sonarcloud", "sonarqubecloud", "pre-commit-ci", "allcontributors", "stale", "k8s-ci-robot",
    "facebook-github-bot", "pytorchbot", "pytorch-bot", "pytorchmergebot", "vllmbot", "readthedocs", "claassistant",
    "cla-bot", "linux-foundation-easycla", "mergeable", "bors", "bors-ng", "kodiakhq", "imgbot", "snyk-bot",
})


def is_bot(login: str | None, kind: str | None = None) -> bool:
    """True for a bot's login (``name[bot]``, a known automation account) or a user GitHub types ``Bot``."""
    if kind == "Bot":
        return True
    name = (login or "").strip().lower()
    return name.endswith("[bot]") or name in KNOWN_BOTS
