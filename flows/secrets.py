"""Secrets from Prefect Secret blocks, for deployments whose workers should not carry them in the environment.

A secret set in the environment wins; otherwise the flow looks for a Secret block of the conventional name
(``prefect block create secret`` or ``Secret(value=…).save("github-token")``). Values are never logged,
never parameters, and stay ``SecretStr`` in the settings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Annotated, Any, cast

from prefect.blocks.system import Secret
from pydantic import AliasChoices, Field, SecretStr, ValidationError

from prdigest.deliver.media import Medium
from prdigest.kernel.config import FeishuBot, Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.location import redact_url, url_has_password

#: The Secret block holding Feishu/Lark group bots as JSON: ``{"kernels-group": {"url": "…", "secret": "…"}}``.
FEISHU_BLOCK = "feishu-bots"

#: settings field → the Secret block that may hold it (the steps' own; each medium declares its own secrets)
SECRET_BLOCKS: dict[str, str] = {
    "github_token": "github-token",
    "openai_api_key": "openai-api-key",
    "record_secret": "record-secret",
    "record_secret_previous": "record-secret-previous",
}


def _block(name: str) -> str | None:
    """The Secret block's value, stripped; None when there is no such block or it is empty."""
    try:
        value = cast(Secret, Secret.load(name)).get()  # called synchronously: a block, not a coroutine
    except ValueError:  # no such block: the setting stays unset, and the step that needs it says so
        return None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _field_of(env: str) -> str | None:
    """The settings field an environment variable sets (``SLACK_BOT_TOKEN`` → ``slack_bot_token``), if any."""
    for name, info in Settings.model_fields.items():
        alias = info.validation_alias
        names = alias.choices if isinstance(alias, AliasChoices) else [alias or f"DIGEST_{name.upper()}"]
        if env in names:
            return name
    return None


def with_secret_blocks(settings: Settings, media: Iterable[Medium] = ()) -> tuple[Settings, list[str]]:
    """Fill each secret missing from the environment from its Secret block, if one exists: the steps' own and
    the secrets each of ``media`` declares (``Medium.secrets``: a settings field's, or a plugin channel's own
    environment variable, set for it in this process).

    Returns the settings and the names of the blocks used (names only, for the log).
    """
    wanted = dict(SECRET_BLOCKS)
    own_env: dict[str, str] = {}
    for medium in media:
        for env, block in medium.secrets:
            field = _field_of(env)
            if field is not None:
                wanted.setdefault(field, block)
            else:
                own_env.setdefault(env, block)
    found: dict[str, SecretStr] = {}
    for field, block in wanted.items():
        if getattr(settings, field) is None and (value := _block(block)) is not None:
            found[field] = SecretStr(value)
    used = [wanted[f] for f in found]
    for env, block in own_env.items():
        if not os.environ.get(env, "").strip() and (value := _block(block)) is not None:
            os.environ[env] = value
            used.append(block)
    update: dict[str, object] = dict(found)
    bots = _feishu_bots(settings)
    if bots:
        update["feishu_bots"] = bots
        used.append(FEISHU_BLOCK)
    return (settings.model_copy(update=update) if update else settings), used


def _feishu_bots(settings: Settings) -> dict[str, FeishuBot] | None:
    """The environment's group bots plus those only the ``feishu-bots`` block has (the environment wins
    group by group); None when the block is missing or adds nothing."""
    try:
        value: Any = cast(Secret, Secret.load(FEISHU_BLOCK)).get()  # called synchronously; JSON of any shape
    except ValueError:
        return None
    try:
        given = {str(group): FeishuBot.model_validate(bot) for group, bot in dict(value).items()}
    except (TypeError, ValueError, ValidationError):
        raise ConfigError(f"Secret block '{FEISHU_BLOCK}': give a JSON object of group name → "
                          '{"url": "<webhook>", "secret": "<signing secret>"}') from None
    added = {g: b for g, b in given.items() if g not in settings.feishu_bots}
    return {**settings.feishu_bots, **added} if added else None


#: What a ``state`` parameter may be, as a JSON-schema pattern (the same test as ``url_has_password``): with the
#: deployments' ``enforce_parameter_schema``, Prefect's server refuses a run whose ``state`` carries a password
#: before it stores the run's parameters, not after, as the flow's own check must. Not a pydantic constraint: the
#: flow's in-process validation would quote the value (the password) in its error.
STATE_PATTERN = (r"^(?![\s\S]*://[\s\S]*:[\s\S]+@)"
                 r"(?![\s\S]*://[\s\S]*[?&]([sS][sS][lL])?[pP][aA][sS][sS][wW][oO][rR][dD]=[^&])[\s\S]*$")
#: The ``state`` parameter's type for a flow signature.
StateParameter = Annotated[str, Field(json_schema_extra={"pattern": STATE_PATTERN})]


def refuse_secret_state(state: str | None, parameter: str = "state") -> None:
    """Raise ConfigError when a flow's ``state`` parameter is a PostgreSQL URL with a password: Prefect stores
    parameters in its database and shows them to every UI user. The worker's DIGEST_STATE carries it instead."""
    if state and url_has_password(state):
        raise ConfigError(f"parameter '{parameter}' ({redact_url(state)}) carries a password, and Prefect keeps "
                          "parameters in its database and shows them in the UI: leave it empty and set DIGEST_STATE "
                          "in the worker's environment (or PGPASSWORD, or ~/.pgpass)")


def state_to_environment(parameters: dict[str, object], parameter: str = "state") -> dict[str, object]:
    """``parameters`` without a PostgreSQL ``state`` URL, which goes to DIGEST_STATE in this process's environment
    instead (the flow called in this process reads it there): a ``--state`` URL never becomes a parameter."""
    state = parameters.get(parameter)
    if isinstance(state, str) and "://" in state:  # any URL, even one the settings will refuse
        os.environ["DIGEST_STATE"] = state
        return {k: v for k, v in parameters.items() if k != parameter}
    return parameters
