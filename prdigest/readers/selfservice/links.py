"""Each reader's unsubscribe and preferences links, and how they enter a message rendered once per variant.

A variant's e-mail is rendered once for all its readers, so its footer holds placeholders
(:data:`UNSUBSCRIBE_SLOT`, :data:`PREFERENCES_SLOT`: URLs under ``.invalid``, which resolves nowhere if one
ever escaped); each reader's composer puts that reader's links in their place (listmonk's per-subscriber
template values). With ``DIGEST_WEB_URL`` the links are signed ``digest web`` URLs; without it
``DIGEST_UNSUBSCRIBE_URL`` (a team's own service, ``{reader}`` replaced) gives the unsubscribe link alone.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.i18n import messages
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.tokens import LinkSigner, ReaderRef

UNSUBSCRIBE_SLOT = "https://pr-digest.invalid/reader/unsubscribe"
PREFERENCES_SLOT = "https://pr-digest.invalid/reader/preferences"


#: Each kind of link and its placeholder, in the order a footer shows them.
SLOTS = {"unsubscribe": UNSUBSCRIBE_SLOT, "preferences": PREFERENCES_SLOT}


@dataclass(frozen=True)
class ReaderLinks:
    """One reader's links; None where there is none."""

    unsubscribe: str | None = None
    preferences: str | None = None

    def fill(self, text: str, *, for_html: bool) -> str:
        """``text`` with the placeholders replaced by these links (HTML-escaped in HTML)."""
        for slot, url in ((UNSUBSCRIBE_SLOT, self.unsubscribe), (PREFERENCES_SLOT, self.preferences)):
            if slot in text:
                text = text.replace(slot, (html.escape(url) if for_html else url) if url else "")
        return text


#: A reader's links for one repo's digest, in a message on one medium (None: any): ``linker(reader, "email")``.
Linker = Callable[[Reader, "str | None"], ReaderLinks]


def web_base(settings: Settings) -> tuple[str, LinkSigner] | None:
    """``DIGEST_WEB_URL`` (no trailing slash) and its signer, or None when self-service is off.

    Raises ConfigError for a URL without its secret, a secret too short or too uniform (current or
    previous), or a URL that is not http(s)."""
    if not settings.web_url:
        return None
    url = settings.web_url.rstrip("/")
    parts = urlsplit(url)
    if parts.scheme not in ("https", "http") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError(f"DIGEST_WEB_URL '{settings.web_url}' is not the public http(s) URL of `digest web` "
                          "(e.g. https://digest.example.com/reader)")
    secret = settings.web_secret.get_secret_value() if settings.web_secret else ""
    if not secret.strip():
        raise ConfigError("DIGEST_WEB_URL is set but DIGEST_WEB_SECRET is not: set it to a long random string "
                          "(python3 -c 'import secrets; print(secrets.token_urlsafe(32))'), the same for the runs "
                          "that send and for `digest web`")
    previous = settings.web_secret_previous.get_secret_value().split() if settings.web_secret_previous else []
    return url, LinkSigner(secret, tuple(previous))


def unsubscribe_path(token: str) -> str:
    return f"/u/{token}"


def preferences_path(token: str) -> str:
    return f"/p/{token}"


def link_kinds(settings: Settings) -> tuple[str, ...]:
    """Which links every message carries: both with ``digest web``, the unsubscribe link alone with
    DIGEST_UNSUBSCRIBE_URL, none otherwise (the renderers leave a placeholder for each)."""
    if settings.web_url:
        return ("unsubscribe", "preferences")
    return ("unsubscribe",) if settings.unsubscribe_url else ()


def footer_links(kinds: tuple[str, ...], language: str) -> list[tuple[str, str]]:
    """(label, placeholder URL) for each kind, in ``language`` (the catalog's ``links.*``)."""
    words = messages(language, "links")
    return [(words[k], SLOTS[k]) for k in SLOTS if k in kinds]


def linker(settings: Settings, repo: str) -> Linker | None:
    """Each reader's links for ``repo``'s digest, or None when messages carry none."""
    web = web_base(settings)
    if web is not None:
        base, signer = web

        def links(reader: Reader, medium: str | None = None) -> ReaderLinks:
            # Each link names its medium: the e-mail's unsubscribe stops the e-mail, not a shared Slack channel,
            # and a preferences link posted in a shared channel or group cannot switch any medium off.
            ref = ReaderRef(repo, reader.id, medium)
            return ReaderLinks(base + unsubscribe_path(signer.token(ref, "unsubscribe")),
                               base + preferences_path(signer.token(ref, "preferences")))
        return links
    template = settings.unsubscribe_url
    if template:
        def templated(reader: Reader, medium: str | None = None) -> ReaderLinks:
            return ReaderLinks(unsubscribe_url(template, reader, medium))
        return templated
    return None


def unsubscribe_url(template: str, reader: Reader, medium: str | None = None) -> str:
    """DIGEST_UNSUBSCRIBE_URL with ``{reader}`` (and ``{medium}``, when it names one) replaced, URL-quoted."""
    return template.replace("{reader}", quote(reader.id, safe="")).replace("{medium}", quote(medium or "", safe=""))
