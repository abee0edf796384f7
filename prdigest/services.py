"""The composition root: the one place that picks real or offline implementations of each service."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prdigest.config import Settings
from prdigest.delivery import Channel
from prdigest.delivery.outbox import OutboxChannel
from prdigest.errors import ConfigError
from prdigest.models import Language
from prdigest.readers import ReadersFile, example_readers_path, load_readers
from prdigest.sources import JsonlSource, Source, sample_week_path
from prdigest.subsystems import Classifier, classifier_for

DEFAULT_SENDER = "pr-digest <pr-digest@localhost>"


class RunOptions(BaseModel):
    """What one edition run is asked to do: the flow's parameters (JSON, never secrets)."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(default="sample", description="jsonl:PATH, github, or 'sample' (the shipped week)")
    repo: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    since: str | None = None
    until: str | None = None
    drafter: Literal["offline", "openai"] = "offline"
    approve: Literal["auto", "ui"] = "auto"
    deliver: str = "outbox"
    readers: str | None = None
    rules: str | None = None
    out: str = "out"
    language: Language | None = None
    # Non-secret settings given as flags; None = from the environment (see prdigest.config.Settings).
    state: str | None = None
    github_url: str | None = None
    llm_base_url: str | None = None
    model: str | None = None
    slack_base_url: str | None = None

    def settings_overrides(self) -> dict[str, object]:
        """The flags that override environment settings."""
        return {"language": self.language, "state": self.state, "github_url": self.github_url,
                "llm_base_url": self.llm_base_url, "model": self.model, "slack_base_url": self.slack_base_url}

    @field_validator("deliver")
    @classmethod
    def _media(cls, value: str) -> str:
        parts = {p.strip() for p in value.split(",") if p.strip()}
        if parts != {"outbox"} and not parts <= {"smtp", "slack"} or not parts:
            raise ValueError(f"--deliver '{value}': use 'outbox' or any of 'smtp,slack'")
        return ",".join(sorted(parts))

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        if value not in ("sample", "github") and not value.startswith("jsonl:"):
            raise ValueError(f"--source '{value}': use jsonl:PATH or github")
        return value

    @property
    def media(self) -> frozenset[str]:
        return frozenset({"email", "slack"}) if self.deliver == "outbox" else frozenset(
            {"smtp": "email", "slack": "slack"}[p] for p in self.deliver.split(","))


def make_source(options: RunOptions, settings: Settings) -> Source:
    """The PR source the options name."""
    if options.source == "sample":
        return JsonlSource(sample_week_path(), options.repo)
    if options.source.startswith("jsonl:"):
        return JsonlSource(Path(options.source.removeprefix("jsonl:")).expanduser(), options.repo)
    if options.source == "github":
        from prdigest.github import GitHubSource

        if not options.repo:
            raise ConfigError("--source github needs --repo OWNER/NAME (e.g. --repo vllm-project/vllm)")
        if settings.github_token is None or not settings.github_token.get_secret_value().strip():
            raise ConfigError("--source github needs a token: set GITHUB_TOKEN to a token that can read "
                              f"{options.repo}")
        return GitHubSource(options.repo, token=settings.github_token.get_secret_value().strip(),
                            base_url=settings.github_url, state=settings.state,
                            concurrency=settings.github_concurrency)
    raise ConfigError(f"--source '{options.source}': use jsonl:PATH or github")


def make_classifier(options: RunOptions, repo: str) -> Classifier:
    """Rules from ``--rules``, the shipped rules for the repo, or the generic top-level-folder fallback."""
    return classifier_for(repo, Path(options.rules) if options.rules else None)


def make_readers(options: RunOptions, classifier: Classifier) -> ReadersFile:
    """The readers file, validated against the subsystems the classifier can assign."""
    path = Path(options.readers) if options.readers else example_readers_path()
    return load_readers(path, classifier.known_subsystems)


def make_drafter(options: RunOptions, settings: Settings):  # -> Drafter
    """The drafter the options name."""
    from prdigest.drafting.offline import OfflineDrafter

    if options.drafter == "offline":
        return OfflineDrafter()
    from prdigest.drafting.llm import OpenAIDrafter

    # Bad configuration (no key, unknown model, unreachable base URL) stops here, before any drafting.
    drafter = OpenAIDrafter.from_settings(settings)
    drafter.check()
    return drafter


def make_channels(options: RunOptions, settings: Settings, out: Path) -> dict[str, Channel]:
    """Channels per medium: both to the outbox, or to SMTP and/or Slack, checked (connected, logged in)."""
    if options.deliver == "outbox":
        outbox = OutboxChannel(out / "outbox")
        return {"email": outbox, "slack": outbox}
    from prdigest.delivery.slack import SlackChannel
    from prdigest.delivery.smtp import SmtpChannel

    wanted = options.deliver.split(",")
    # Build every channel first (settings only, no I/O), so a missing setting is reported before any
    # connection; then the preflight checks connect and authenticate, before the first message.
    channels: dict[str, Channel] = {}
    if "smtp" in wanted:
        channels["email"] = SmtpChannel.from_settings(settings)
    if "slack" in wanted:
        channels["slack"] = SlackChannel.from_settings(settings)
    try:
        for channel in channels.values():
            channel.check()  # type: ignore[attr-defined]
    except BaseException:
        for channel in channels.values():
            channel.close()
        raise
    return channels


def sender(settings: Settings) -> str:
    """The From address: DIGEST_FROM, or a placeholder that only the outbox accepts."""
    from prdigest.delivery.email_message import check_from

    return check_from(settings.from_address) if settings.from_address else DEFAULT_SENDER
