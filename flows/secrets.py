"""Secrets from Prefect Secret blocks, for deployments whose workers should not carry them in the environment.

A secret set in the environment wins; otherwise the flow looks for a Secret block of the conventional name
(``prefect block create secret`` or ``Secret(value=…).save("github-token")``). Values are never logged,
never parameters, and stay ``SecretStr`` in the settings.
"""

from __future__ import annotations

from prefect.blocks.system import Secret
from pydantic import SecretStr

from prdigest.config import Settings

#: settings field → the Secret block that may hold it
SECRET_BLOCKS: dict[str, str] = {
    "github_token": "github-token",
    "openai_api_key": "openai-api-key",
    "slack_bot_token": "slack-bot-token",
    "smtp_password": "smtp-password",
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
    return (settings.model_copy(update=found) if found else settings), [SECRET_BLOCKS[f] for f in found]
