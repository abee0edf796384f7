"""Signed reader links: a token names one reader of one repo's digest, for one purpose, and nothing else.

Tokens are signed with ``DIGEST_WEB_SECRET`` by itsdangerous (HMAC-SHA1 over a salted key derived from the
secret); the purpose is the salt, so an unsubscribe token is no preferences token and the other way round.
They do not expire: an unsubscribe link in a year-old message must still work (RFC 8058 gives no lifetime),
and a leaked link lets someone change only that reader's choices for that repo, which the reader can undo.
The CSRF field of the preferences form is a separate, timed signature bound to the reader's token.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from itsdangerous import BadData, URLSafeSerializer, URLSafeTimedSerializer

from prdigest.kernel.errors import ConfigError

Purpose = Literal["unsubscribe", "preferences"]
PURPOSES: tuple[Purpose, ...] = ("unsubscribe", "preferences")
#: A form older than this is refused (the reader reloads the page and sends it again).
CSRF_MAX_AGE = 2 * 3600
#: Shorter secrets are refused: the HMAC is only as strong as the key.
MIN_SECRET = 16
_SALT = "pr-digest/reader-link/"
_CSRF_SALT = "pr-digest/preferences-form"


class BadLink(Exception):
    """A token that is forged, altered, truncated, for another purpose, or not a reader's at all."""


@dataclass(frozen=True)
class ReaderRef:
    """Whom a token names: one reader of one repo's digest."""

    repo: str
    reader: str


class LinkSigner:
    """Makes and checks reader tokens and the preferences form's CSRF field."""

    def __init__(self, secret: str) -> None:
        if len(secret) < MIN_SECRET:
            raise ConfigError(f"DIGEST_WEB_SECRET is {len(secret)} characters: use at least {MIN_SECRET} random "
                              "ones (python3 -c 'import secrets; print(secrets.token_urlsafe(32))')")
        self._links = {p: URLSafeSerializer(secret, salt=_SALT + p) for p in PURPOSES}
        self._csrf = URLSafeTimedSerializer(secret, salt=_CSRF_SALT)

    def token(self, ref: ReaderRef, purpose: Purpose) -> str:
        """The URL-safe token for ``ref`` and ``purpose``."""
        return self._links[purpose].dumps([ref.repo, ref.reader])

    def reader(self, token: str, purpose: Purpose) -> ReaderRef:
        """Whom a token names; raises :class:`BadLink` unless it was signed here for ``purpose``."""
        if not token or len(token) > 600:
            raise BadLink("empty or oversized token")
        try:
            value = self._links[purpose].loads(token)
        except BadData as exc:
            raise BadLink(type(exc).__name__) from None
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, str) and v for v in value)):
            raise BadLink("signed, but not a reader")  # pragma: no cover - only a leaked secret signs this
        return ReaderRef(value[0], value[1])

    def csrf(self, token: str) -> str:
        """A form field that proves the form was served for this reader's token, recently."""
        return self._csrf.dumps(_digest(token))

    def check_csrf(self, token: str, field: str | None) -> bool:
        """Whether ``field`` was made by :meth:`csrf` for ``token`` within :data:`CSRF_MAX_AGE`."""
        if not field or len(field) > 300:
            return False
        try:
            return self._csrf.loads(field, max_age=CSRF_MAX_AGE) == _digest(token)
        except BadData:
            return False


def _digest(token: str) -> str:
    # The CSRF field carries a hash of the token, not the token: the form's HTML never repeats it twice.
    return hashlib.sha256(token.encode()).hexdigest()[:32]
