"""How a delivery failed: for one recipient for good, for the whole channel, or just this time.

A plain :class:`prdigest.errors.DeliveryError` is transient: the ledger keeps the message pending and
the next run retries it. The two subclasses below tell the ledger-aware loop to do something else.
"""

from __future__ import annotations

from prdigest.errors import DeliveryError


class RecipientRejected(DeliveryError):
    """The provider refused this recipient or this message for good (5xx, bad address,
    ``channel_not_found``): retrying cannot help, so the ledger marks it failed and moves on."""


class ChannelUnavailable(DeliveryError):
    """The provider cannot be reached or refuses us altogether (server down, login rejected):
    every remaining message of this channel stays pending for the next run instead of being tried."""


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every non-empty secret in ``text`` by ``***`` (defence in depth: we never format
    secrets into messages, but a server may echo what it was sent)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
