"""Signed reader links: a token names one reader of one repo's digest, for one purpose, and nothing else.

Tokens are signed with ``DIGEST_WEB_SECRET`` by itsdangerous (HMAC-SHA1 over a salted key derived from the
secret); the purpose is the salt, so an unsubscribe token is no preferences token and the other way round.
They do not expire: an unsubscribe link in a year-old message must still work (RFC 8058 gives no lifetime),
and a leaked link lets someone change only that reader's choices for that repo, which the reader can undo.
The CSRF field of the preferences form is a separate, timed signature bound to the reader's token.

A token has one spelling: itsdangerous' base64 also accepts padding and other values of the last
character's unused bits, so a token that verifies is accepted only if it is exactly what signing its value
gives (otherwise one link would be many, each counted apart by a rate limit). The secret can be rotated:
``DIGEST_WEB_SECRET_PREVIOUS`` (one or more, separated by spaces) still verifies the links sent before,
while every new link is signed with ``DIGEST_WEB_SECRET``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from itsdangerous import BadData, URLSafeSerializer, URLSafeTimedSerializer

from prdigest.kernel.keys import check_secret

Purpose = Literal["unsubscribe", "preferences"]
PURPOSES: tuple[Purpose, ...] = ("unsubscribe", "preferences")
#: A form older than this is refused (the reader reloads the page and sends it again).
CSRF_MAX_AGE = 2 * 3600
_SALT = "pr-digest/reader-link/"
_CSRF_SALT = "pr-digest/preferences-form"


class BadLink(Exception):
    """A token that is forged, altered, truncated, for another purpose, or not a reader's at all."""


@dataclass(frozen=True)
class ReaderRef:
    """Whom a token names: one reader of one repo's digest, and for an unsubscribe link the medium it came
    in (``email``, ``slack``): unsubscribing there stops that medium only. A token without one (links sent
    before links named their medium) stops the reader's personal media (see ``preferences.stopped_media``)."""

    repo: str
    reader: str
    medium: str | None = None


class LinkSigner:
    """Makes and checks reader tokens and the preferences form's CSRF field."""

    def __init__(self, secret: str, previous: tuple[str, ...] = ()) -> None:
        check_secret(secret, "DIGEST_WEB_SECRET")
        for old in previous:
            check_secret(old, "DIGEST_WEB_SECRET_PREVIOUS")
        keys = (secret, *(old for old in previous if old != secret))
        # Signing uses the first key only; checking tries each, the current one first.
        self._links = {p: [URLSafeSerializer(k, salt=_SALT + p) for k in keys] for p in PURPOSES}
        self._csrf = [URLSafeTimedSerializer(k, salt=_CSRF_SALT) for k in keys]

    def token(self, ref: ReaderRef, purpose: Purpose) -> str:
        """The URL-safe token for ``ref`` and ``purpose``."""
        return self._links[purpose][0].dumps([ref.repo, ref.reader, *([ref.medium] if ref.medium else [])])

    def reader(self, token: str, purpose: Purpose) -> ReaderRef:
        """Whom a token names; raises :class:`BadLink` unless it was signed here for ``purpose`` (with the
        current or a previous secret) and is spelled exactly as signing wrote it."""
        if not token or len(token) > 600:
            raise BadLink("empty or oversized token")
        for serializer in self._links[purpose]:
            try:
                value = serializer.loads(token)
            except BadData:
                continue
            if serializer.dumps(value) != token:
                raise BadLink("another spelling of a token")
            if (not isinstance(value, list) or len(value) not in (2, 3)
                    or not all(isinstance(v, str) and v for v in value)):
                raise BadLink("signed, but not a reader")  # pragma: no cover - only a leaked secret signs this
            return ReaderRef(*value)
        raise BadLink("bad signature")

    def csrf(self, token: str) -> str:
        """A form field that proves the form was served for this reader's token, recently."""
        return self._csrf[0].dumps(_digest(token))

    def check_csrf(self, token: str, field: str | None) -> bool:
        """Whether ``field`` was made by :meth:`csrf` for ``token`` within :data:`CSRF_MAX_AGE`."""
        if not field or len(field) > 300:
            return False
        for serializer in self._csrf:
            try:
                return bool(serializer.loads(field, max_age=CSRF_MAX_AGE) == _digest(token))
            except BadData:
                continue
        return False


def _digest(token: str) -> str:
    # The CSRF field carries a hash of the token, not the token: the form's HTML never repeats it twice.
    return hashlib.sha256(token.encode()).hexdigest()[:32]
