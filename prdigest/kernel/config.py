"""Settings: one object, built once from flags and the environment, then passed down."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.gitvalues import location_problem
from prdigest.kernel.i18n import DEFAULT
from prdigest.kernel.location import DEFAULT_STATE, StateLocation
from prdigest.kernel.models import Language

DEFAULT_GITHUB_URL = "https://api.github.com"
#: ``DIGEST_FEISHU_<NAME>_URL`` / ``_SECRET``: NAME is a group's name upper-cased, ``-`` as ``_``.
_FEISHU_VARIABLE = re.compile(r"DIGEST_FEISHU_([A-Z0-9][A-Z0-9_]*)_(URL|SECRET)")


class FeishuBot(BaseModel):
    """A Feishu/Lark group's custom bot: its webhook URL (it holds the bot's token) and signing secret."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: SecretStr | None = None
    secret: SecretStr | None = None


def feishu_variable(group: str, what: Literal["URL", "SECRET"] = "URL") -> str:
    """The environment variable holding a group's webhook URL (or signing secret)."""
    return f"DIGEST_FEISHU_{group.upper().replace('-', '_')}_{what}"


def feishu_bots_from(environ: Mapping[str, str]) -> dict[str, FeishuBot]:
    """Every group bot the environment names, by group name (``kernels-group`` from ``KERNELS_GROUP``)."""
    found: dict[str, dict[str, SecretStr]] = {}
    for key, value in environ.items():
        match = _FEISHU_VARIABLE.fullmatch(key)
        if match and value.strip():
            found.setdefault(match[1].lower().replace("_", "-"), {})[match[2].lower()] = SecretStr(value.strip())
    return {group: FeishuBot(**parts) for group, parts in sorted(found.items())}


class _FeishuBotsSource(PydanticBaseSettingsSource):
    """The group bots from ``DIGEST_FEISHU_<NAME>_URL`` / ``_SECRET``: names only known at run time."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        bots = feishu_bots_from(os.environ)
        return {"feishu_bots": bots} if bots else {}


class Settings(BaseSettings):
    """Every setting has a CLI flag and an environment variable; secrets use their ecosystems' names."""

    model_config = SettingsConfigDict(env_prefix="DIGEST_", extra="ignore", populate_by_name=True,
                                      hide_input_in_errors=True)  # a bad value may hold a password

    #: A SQLite file or postgresql://… (str/repr/JSON never show its password).
    state: StateLocation = StateLocation.parse(DEFAULT_STATE)
    language: Language = DEFAULT

    github_url: str = DEFAULT_GITHUB_URL
    github_token: SecretStr | None = Field(default=None, validation_alias="GITHUB_TOKEN")
    #: Per-PR fetches in flight at once.
    github_concurrency: int = Field(default=8, ge=1, le=64)

    llm_base_url: str | None = Field(
        default=None, validation_alias=AliasChoices("DIGEST_LLM_BASE_URL", "OPENAI_BASE_URL")
    )
    model: str = "gpt-4.1-mini"
    openai_api_key: SecretStr | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    #: Drafts in flight at once.
    llm_concurrency: int = Field(default=8, ge=1, le=256)
    #: A requests-per-minute ceiling of our own, for an endpoint that limits without saying so; by default
    #: requests are paced only by the limits the endpoint announces (its rate-limit headers and 429s).
    llm_rpm: int | None = Field(default=None, ge=1)
    #: Seconds one LLM read may wait before the call is abandoned (and retried).
    llm_timeout: float = Field(default=60.0, gt=0)
    #: Seconds one entry's drafting may take in all (calls, retries, repair), and all of the run's entries;
    #: past either the entry is the offline draft, marked for the editor.
    llm_entry_deadline: float = Field(default=180.0, gt=0)
    llm_run_deadline: float = Field(default=3600.0, gt=0)
    #: Tokens of PR data packed into one prompt (prdigest/draft/packing.py).
    llm_input_budget: int = Field(default=12_000, ge=500)
    #: USD per million tokens in / out, for the edition's cost estimate.
    llm_price_in: float = Field(default=0.40, ge=0)
    llm_price_out: float = Field(default=1.60, ge=0)

    smtp_host: str | None = None
    smtp_port: int | None = None
    smtp_user: str | None = None
    smtp_password: SecretStr | None = None
    smtp_security: Literal["starttls", "ssl", "none"] = "starttls"
    from_address: str | None = Field(default=None, validation_alias="DIGEST_FROM")

    slack_bot_token: SecretStr | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    slack_base_url: str = "https://slack.com/api/"

    #: Feishu/Lark group bots by group name (the readers file's ``feishu:``), from the environment.
    feishu_bots: dict[str, FeishuBot] = Field(default_factory=dict)

    unsubscribe_url: str | None = None
    #: ``digest web``'s public URL (``DIGEST_WEB_URL``): each message carries a signed one-click unsubscribe
    #: link and a preferences link under it; ``DIGEST_WEB_SECRET`` signs them (required with the URL).
    web_url: str | None = None
    web_secret: SecretStr | None = None
    #: Secrets the links were signed with before ``DIGEST_WEB_SECRET`` was rotated (``DIGEST_WEB_SECRET_PREVIOUS``,
    #: separated by spaces): they still verify the links already sent; new links use the current one only.
    web_secret_previous: SecretStr | None = None
    #: Seals each edition record (``DIGEST_RECORD_SECRET``, the same on every worker): a record rewritten in the
    #: state database after its review is never delivered. Unset: a key file beside a SQLite state file;
    #: required with PostgreSQL (see ``prdigest.state.record``).
    record_secret: SecretStr | None = None
    #: Record secrets of before a rotation (``DIGEST_RECORD_SECRET_PREVIOUS``, separated by spaces): records they
    #: sealed still check (and are delivered or resent); every new seal uses ``DIGEST_RECORD_SECRET``.
    record_secret_previous: SecretStr | None = None
    #: The archive site's public URL (``DIGEST_SITE_URL``): links from email, Slack and feeds; none = no links.
    site_url: str | None = None
    #: Show "Affects your code" (the downstreams' file paths) on the archive pages (``DIGEST_SITE_IMPACT``):
    #: off by default, since a downstream's paths are its team's, not public.
    site_impact: bool = False

    #: Passes over the deliveries a transient failure (a 451 greylisting answer, a Slack 500) left pending, within
    #: the run, and the seconds before the first (doubled before each next): ``DIGEST_DELIVERY_RETRIES``,
    #: ``DIGEST_DELIVERY_RETRY_DELAY``. What stays pending after them makes the run exit non-zero.
    delivery_retries: int = Field(default=3, ge=0, le=10)
    delivery_retry_delay: float = Field(default=30.0, ge=0, le=3600)

    #: Weeks an earlier edition's follow-up stays listed while open (then it ages out: ``expired``).
    followup_weeks: int = Field(default=6, ge=1, le=104)
    #: Propose follow-ups done by a semantic match (the optional ``semantic`` extra); the editor confirms.
    followup_semantic: bool = True

    #: Seconds an edition waits for an editor (``--approve ui``) before the run fails and nothing is sent.
    review_timeout: int = Field(default=3 * 24 * 3600, ge=1)

    #: The upstream's git clone (``--git`` / ``DIGEST_GIT``): a local clone's folder, or a URL kept as a bare,
    #: blob-less partial clone in the state folder (fetched once per run); None: facts from the REST patches.
    git: str | None = None
    #: Where a URL's clone is kept (``DIGEST_GIT_DIR``; default: beside a SQLite state file, else ``.digest``).
    git_dir: str | None = None

    def clone_home(self) -> Path:
        """The folder a URL's clone is kept under: ``DIGEST_GIT_DIR``, or the SQLite state file's folder, or
        ``.digest`` when the state is PostgreSQL."""
        if self.git_dir:
            return Path(self.git_dir).expanduser()
        return self.state.path.parent if self.state.path is not None else Path(".digest")

    @classmethod
    def settings_customise_sources(cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
                                   env_settings: PydanticBaseSettingsSource,
                                   dotenv_settings: PydanticBaseSettingsSource,
                                   file_secret_settings: PydanticBaseSettingsSource,
                                   ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _FeishuBotsSource(settings_cls), dotenv_settings, file_secret_settings)

    @field_validator("git")
    @classmethod
    def _git_location(cls, value: str | None) -> str | None:
        # It reaches git's argv: refused here, before anything runs, when git would read it as an option or
        # as a transport that runs a command.
        if value and (problem := location_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("github_url", "slack_base_url", "llm_base_url", "site_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        # Checked when the settings are built, before anything runs: a typo'd URL is one line, not a failure
        # after collecting and drafting (an unset optional URL stays None, or "" from an empty variable).
        if value and not value.startswith(("http://", "https://")):
            raise ValueError(f"'{value}' is not an http(s) URL")
        return value


#: The settings a flag of ``digest run`` also sets (``RunOptions.settings_overrides``), by the flag's name;
#: every other setting is named by its environment variable only (there is no ``--smtp-port``).
FLAGS = {"language": "--language", "state": "--state", "github_url": "--github-url",
         "llm_base_url": "--llm-base-url", "model": "--model", "slack_base_url": "--slack-base-url",
         "site_url": "--site-url", "llm_input_budget": "--input-budget", "git": "--git",
         "site_impact": "--site-impact"}


def env_name(field: str) -> str:
    """The environment variable of setting ``field`` (its alias, e.g. ``DIGEST_FROM``, ``SLACK_BOT_TOKEN``)."""
    info = Settings.model_fields.get(field)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, str):
        return alias
    if isinstance(alias, AliasChoices):
        return str(alias.choices[0])
    return f"DIGEST_{field.upper()}"


def load_settings(**overrides: object) -> Settings:
    """Build settings from the environment, with CLI flags (non-None overrides) taking precedence.

    A bad value is a ConfigError naming every bad setting at once, each by its flag (when it has one) and
    environment variable."""
    given: dict[str, Any] = {k: v for k, v in overrides.items() if v is not None}
    try:
        return Settings(**given)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else "(settings)"
            inner = ".".join(str(p) for p in err["loc"][1:])
            flag = FLAGS.get(field)
            names = f"flag {flag} or ${env_name(field)}" if flag else f"${env_name(field)}"
            problems.append(f"setting '{field}{'.' + inner if inner else ''}' ({names}): {err['msg']}")
        raise ConfigError("; ".join(problems)) from None
