"""Secrets from Prefect Secret blocks, for deployments whose workers should not carry them in the environment.

A secret set in the environment wins; otherwise the flow looks for a Secret block of the conventional name
(``prefect block create secret`` or ``Secret(value=…).save("github-token")``). Values are never logged,
never parameters, and stay ``SecretStr`` in the settings.
"""

from __future__ import annotations

from prefect.blocks.system import Secret
from pydantic import SecretStr, ValidationError

from prdigest.kernel.config import FeishuBot, Settings
from prdigest.kernel.errors import ConfigError

#: The Secret block holding Feishu/Lark group bots as JSON: ``{"kernels-group": {"url": "…", "secret": "…"}}``.
FEISHU_BLOCK = "feishu-bots"

#: settings field → the Secret block that may hold it
SECRET_BLOCKS: dict[str, str] = {
    "github_token": "github-token",
    "openai_api_key": "openai-api-key",
    "slack_bot_token": "slack-bot-token",
    "smtp_password": "smtp-password",
    "record_secret": "record-secret",
}


def with_secret_blocks(settings: Settings) -> tuple[Settings, list[str]]:
    """Fill each secret missing from the environment from its Secret block, if one exists.

    Returns the settings and the names of the blocks used (names only, for the log).
    """
    found: dict[str, SecretStr] = {}
    for field, block in SECRET_BLOCKS.items():
        if getattr(settings, field) is not None:
            continue
        try:
            value = Secret.load(block).get()
        except ValueError:  # no such block: the setting stays unset, and the step that needs it says so
            continue
        if isinstance(value, str) and value.strip():
            found[field] = SecretStr(value.strip())
    used = [SECRET_BLOCKS[f] for f in found]
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
        value = Secret.load(FEISHU_BLOCK).get()
    except ValueError:
        return None
    try:
        given = {str(group): FeishuBot.model_validate(bot) for group, bot in dict(value).items()}
    except (TypeError, ValueError, ValidationError):
        raise ConfigError(f"Secret block '{FEISHU_BLOCK}': give a JSON object of group name → "
                          '{"url": "<webhook>", "secret": "<signing secret>"}') from None
    added = {g: b for g, b in given.items() if g not in settings.feishu_bots}
    return {**settings.feishu_bots, **added} if added else None


def refuse_secret_state(state: str | None, parameter: str = "state") -> None:
    """Raise ConfigError when a flow's ``state`` parameter is a PostgreSQL URL with a password: Prefect stores
    parameters in its database and shows them to every UI user. The worker's DIGEST_STATE carries it instead."""
    from prdigest.kernel.errors import ConfigError
    from prdigest.kernel.location import redact_url, url_has_password

    if state and url_has_password(state):
        raise ConfigError(f"parameter '{parameter}' ({redact_url(state)}) carries a password, and Prefect keeps "
                          "parameters in its database and shows them in the UI: leave it empty and set DIGEST_STATE "
                          "in the worker's environment (or PGPASSWORD, or ~/.pgpass)")


def state_to_environment(parameters: dict[str, object], parameter: str = "state") -> dict[str, object]:
    """``parameters`` without a PostgreSQL ``state`` URL, which goes to DIGEST_STATE in this process's environment
    instead (the flow called in this process reads it there): a ``--state`` URL never becomes a parameter."""
    import os

    state = parameters.get(parameter)
    if isinstance(state, str) and "://" in state:  # any URL, even one the settings will refuse
        os.environ["DIGEST_STATE"] = state
        return {k: v for k, v in parameters.items() if k != parameter}
    return parameters
