"""Where each edition and entry lives in the archive, and the absolute links other media make to it.

Paths are built from the edition's exact repo and window, so two editions never share a page:
``editions/<owner>/<repo>/<window>/`` where ``<window>`` is the ISO week (``2026-W47``) when the window is
exactly one Monday-to-Monday week, else ``<since>--<until>`` (dates, with ``T<hhmm>Z`` when not midnight).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from prdigest.kernel.errors import ConfigError
from prdigest.kernel.i18n import Section, messages
from prdigest.kernel.models import Edition, utc

_SEGMENT = re.compile(r"[^A-Za-z0-9._-]+")
#: Characters that must never reach an href or a Slack ``<url|label>`` from the configured site URL.
_UNSAFE_URL = re.compile(r"[\s\"'<>|\\^`{}]")

def link_strings(language: str) -> Section:
    """The link words for ``language`` (the catalog's ``links.*``)."""
    return messages(language, "links")


def _segment(text: str) -> str:
    seg = _SEGMENT.sub("-", text).strip("-.")
    return seg or "-"


def _stamp(dt: datetime) -> str:
    dt = utc(dt)
    day = dt.date().isoformat()
    if (dt.hour, dt.minute, dt.second, dt.microsecond) == (0, 0, 0, 0):
        return day
    if dt.microsecond:
        return f"{day}T{dt:%H%M%S.%f}Z"
    return f"{day}T{dt:%H%M%S}Z" if dt.second else f"{day}T{dt:%H%M}Z"


def window_slug(since: datetime, until: datetime) -> str:
    """``2026-W47`` for a whole ISO week (Monday 00:00 UTC to the next Monday), else ``since--until``."""
    s, u = utc(since), utc(until)
    midnight = (s.hour, s.minute, s.second, s.microsecond) == (0, 0, 0, 0)
    if midnight and s.weekday() == 0 and u - s == timedelta(days=7):
        year, week, _ = s.isocalendar()
        return f"{year}-W{week:02d}"
    return f"{_stamp(s)}--{_stamp(u)}"


def edition_dir(edition: Edition) -> str:
    """The edition's folder in the site, relative, ending with ``/``: ``editions/vllm-project/vllm/2026-W47/``."""
    owner, _, name = edition.repo.partition("/")
    parts = [_segment(owner)] + ([_segment(name)] if name else [])
    return "/".join(["editions", *parts, window_slug(edition.since, edition.until)]) + "/"


def site_base(url: str | None) -> str | None:
    """The configured site URL, checked, ending with ``/``; None when none is configured.

    Raises ConfigError naming the setting when it is not an absolute http(s) URL without query or fragment.
    """
    if url is None or not url.strip():
        return None
    url = url.strip()
    where = f"site URL '{url}' (--site-url or $DIGEST_SITE_URL)"
    if _UNSAFE_URL.search(url) or any(ord(ch) > 126 or ord(ch) < 33 for ch in url):
        raise ConfigError(f"{where}: contains spaces, quotes or characters a link cannot carry; "
                          "percent-encode them")
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise ConfigError(f"{where}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{where}: give an absolute http(s) URL, e.g. https://digest.example.com/")
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ConfigError(f"{where}: remove the query, fragment or user info")
    return url if url.endswith("/") else url + "/"


def edition_url(base: str, edition: Edition) -> str:
    """The edition page's absolute URL under ``base`` (from :func:`site_base`)."""
    return base + edition_dir(edition)


def permalink(base: str, edition: Edition, number: int) -> str:
    """An entry's absolute permalink: ``<base>editions/…/2026-W47/#pr-41234``."""
    return f"{edition_url(base, edition)}#pr-{int(number)}"
