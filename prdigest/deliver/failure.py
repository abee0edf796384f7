"""How a delivery failed: for one recipient for good, for the whole channel, or just this time.

A plain :class:`prdigest.kernel.errors.DeliveryError` is transient and certain: the message did not reach the
provider, so the ledger keeps it pending and the next run retries it. The subclasses below tell the
ledger-aware loop to do something else.
"""

from __future__ import annotations

from prdigest.kernel.errors import DeliveryError


class RecipientRejected(DeliveryError):
    """The provider refused this recipient or this message for good (5xx, bad address,
    ``channel_not_found``): retrying cannot help, so the ledger marks it failed and moves on."""


class ChannelUnavailable(DeliveryError):
    """The provider cannot be reached or refuses us altogether (server down, login rejected):
    every remaining message of this channel stays pending for the next run instead of being tried."""


class MaybeDelivered(DeliveryError):
    """The message may have reached the provider: the failure came after the body went out (no answer
    to the end of SMTP DATA, a reset or timeout after a Slack POST). The ledger marks it ``uncertain``
    with this reason; it is never sent again unless an operator asks (``digest resend --uncertain``)."""


def redact(text: str, secrets: tuple[str, ...]) -> str:
    """Replace every non-empty secret in ``text`` by ``***`` (defence in depth: we never format
    secrets into messages, but a server may echo what it was sent)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
