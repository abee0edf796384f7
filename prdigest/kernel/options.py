"""What one edition run is asked to do (:class:`RunOptions`): the flow's parameters and ``digest run``'s flags.

Its own light module: the command line builds its flags from these fields before anything heavy is imported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.location import state_help
from prdigest.kernel.models import Language
from prdigest.kernel.registry import DRAFTERS_GROUP, MEDIA_GROUP, SOURCES_GROUP, registry


def _transports() -> str:
    """The installed media's transports (the ``pr_digest.media`` entry points' names; none is imported)."""
    return ",".join(registry(MEDIA_GROUP, "medium", "--deliver").names()) or "smtp,slack,feishu"


class RunOptions(BaseModel):
    """What one edition run is asked to do: the flow's parameters (JSON, never secrets)."""

    model_config = ConfigDict(extra="forbid")

    # Each field is a flag of `digest run` (flows/cli/options.py): its description is the flag's help.
    source: str = Field(default="sample", description="jsonl:PATH (a file in the source format), github, or "
                        "sample (the shipped week).")
    repo: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$",
                             description="OWNER/NAME (inferred from a JSONL file's URLs).")
    since: str | None = Field(default=None, description="Window start, UTC date or ISO time (inclusive).")
    until: str | None = Field(default=None, description="Window end, UTC date or ISO time (exclusive).")
    drafter: str = Field(default="offline", description="offline or openai (any registered drafter).")
    approve: Literal["auto", "ui"] = Field(default="auto", description="auto, or ui (an editor approves in "
                                           "Prefect).")
    deliver: str = Field(default="outbox", description=f"outbox, or any of {_transports()} (comma-separated).")
    readers: str | None = Field(default=None, description="readers.yaml (default: the shipped example).")
    rules: str | None = Field(default=None, description="Subsystem rules YAML (default: shipped for the repo).")
    out: str = Field(default="out", description="Output folder: digest.json, email/, slack/, outbox/.")
    language: Language | None = Field(default=None, description="zh-CN (default), en, or a language of a catalog "
                                      "in $DIGEST_CATALOGS; or $DIGEST_LANGUAGE.")
    # Non-secret settings given as flags; None = from the environment (see prdigest.kernel.config.Settings).
    state: str | None = Field(default=None, description=state_help())
    github_url: str | None = Field(default=None, description="GitHub API base URL (Enterprise: "
                                   "https://HOST/api/v3); or $DIGEST_GITHUB_URL. Token: $GITHUB_TOKEN.")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible base URL (e.g. a vLLM "
                                     "server's /v1); or $DIGEST_LLM_BASE_URL.")
    model: str | None = Field(default=None, description="LLM model name; or $DIGEST_MODEL.")
    slack_base_url: str | None = Field(default=None, description="Slack Web API base URL; or "
                                       "$DIGEST_SLACK_BASE_URL. Token: $SLACK_BOT_TOKEN.")
    site_url: str | None = Field(default=None, description="The archive's public URL: 'view in browser' and "
                                 "permalinks in every medium; or $DIGEST_SITE_URL.")
    git: str | None = Field(default=None, description="The upstream's git clone, for code facts and whole files: "
                            "a local clone's folder, or a URL kept as a bare partial clone in the state folder "
                            "and fetched once per run (default: the REST patches); or $DIGEST_GIT.")
    no_discussion: bool = Field(default=False, description="Collect no reviews, conversation comments or linked "
                                "issues (a cheaper run: the model sees the diff and inline review comments only).")
    input_budget: int | None = Field(default=None, ge=500, le=1_000_000, description="Tokens of PR data packed "
                                     "into one prompt (default 12000); or $DIGEST_LLM_INPUT_BUDGET.")
    site_impact: bool = Field(default=False, description="Show 'Affects your code' (the downstreams' file "
                              "paths) on the archive pages; or $DIGEST_SITE_IMPACT (off: those paths are private).")
    no_calibration: bool = Field(default=False, description="Keep the drafter's verdicts: do not apply the repo's "
                                 "verdict calibration (digest calibrate) kept in the state store.")
    resend_edition: bool = Field(default=False, description="Run an edition the ledger shows as delivered "
                                 "again, review included (without it such a run stops before collecting and "
                                 "keeps digest.json).")

    def settings_overrides(self) -> dict[str, object]:
        """The flags that override environment settings."""
        return {"language": self.language, "state": self.state, "github_url": self.github_url,
                "llm_base_url": self.llm_base_url, "model": self.model, "slack_base_url": self.slack_base_url,
                "site_url": self.site_url, "llm_input_budget": self.input_budget,
                "git": self.git, "site_impact": self.site_impact or None}

    @field_validator("deliver")
    @classmethod
    def _deliver(cls, value: str) -> str:
        # Which transports exist is the media registry's business (checked when services are built);
        # here only the shape: 'outbox' alone, or a list of transport names.
        parts = {p.strip() for p in value.split(",") if p.strip()}
        if not parts or ("outbox" in parts and len(parts) > 1):
            raise ValueError(f"--deliver '{value}': use 'outbox' or any of '{_transports()}'")
        return ",".join(sorted(parts))

    # Checked in the kernel's registry of the group: the entry point a name declares is loaded then (the step
    # that owns the group is not imported with this module; the flags are built first).
    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return _known(lambda: registry(SOURCES_GROUP, "source", "--source").parse(value), value)

    @field_validator("drafter")
    @classmethod
    def _drafter(cls, value: str) -> str:
        return _known(lambda: registry(DRAFTERS_GROUP, "drafter", "--drafter")[value], value)


def _known(lookup: Callable[[], object], value: str) -> str:
    """``value`` when ``lookup`` finds it in its registry; its one-line ConfigError as pydantic's ValueError."""
    try:
        lookup()
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return value
