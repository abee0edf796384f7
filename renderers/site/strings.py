"""The archive's reader-facing words: the catalogs' ``site.*`` (the digest's own words come from renderers.view)."""

from __future__ import annotations

from prdigest.kernel.i18n import Section, messages


def site_strings(language: str) -> Section:
    """The archive's words for ``language`` (English for a message its catalog lacks)."""
    return messages(language, "site")
