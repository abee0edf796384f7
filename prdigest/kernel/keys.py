"""How strong a secret must be to key an HMAC: one rule for every secret the product is given.

The reader-link secret (``DIGEST_WEB_SECRET``) and the edition-record seal (``DIGEST_RECORD_SECRET``) are both
HMAC keys, and an HMAC is only as strong as its key: a short one, or a long one of few different characters
(``aaaa…``, ``abab…``), can be guessed offline from one signed value. Both settings are refused, before anything
runs, unless the secret passes :func:`check_secret`; the message names the setting, never the secret.
"""

from __future__ import annotations

from prdigest.kernel.errors import ConfigError

#: Shorter secrets are refused: ``secrets.token_urlsafe(32)`` gives 43 characters.
MIN_SECRET = 32
#: ... and so are secrets of few different characters, whatever their length.
MIN_DISTINCT = 10
#: How to make a good one, for the messages.
HOW = "python3 -c 'import secrets; print(secrets.token_urlsafe(32))'"


def check_secret(secret: str, name: str) -> None:
    """Raise :class:`ConfigError` naming ``name`` unless ``secret`` is long and varied enough to key an HMAC:
    at least :data:`MIN_SECRET` characters, :data:`MIN_DISTINCT` different ones, none a quarter of it."""
    common = max((secret.count(ch) for ch in set(secret)), default=0)
    if len(secret) < MIN_SECRET or len(set(secret)) < MIN_DISTINCT or common > len(secret) // 4:
        raise ConfigError(
            f"{name} is {len(secret)} characters of {len(set(secret))} different kinds: use at least {MIN_SECRET} "
            f"random ones, at least {MIN_DISTINCT} different and none a quarter of it ({HOW})")
