"""Render every variant of an edition for every medium, isolating per-PR failures."""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import urlsplit

from prdigest.models import Edition
from prdigest.variants import Variant
from renderers.email import RenderedEmail, render_email
from renderers.slack import render_slack


@dataclass
class RenderedVariant:
    """One variant's email (HTML + text) and Slack payloads, shared by all its readers."""

    variant: Variant
    email: RenderedEmail
    slack: list[dict]
    problems: list[dict[str, str | int]] = field(default_factory=list)


def link_hosts_for(api_url: str) -> tuple[str, ...]:
    """Hosts whose PR URLs may become links: github.com, plus a GitHub Enterprise host from its API URL."""
    host = (urlsplit(api_url).hostname or "").lower()
    return ("github.com",) if host in ("", "api.github.com", "github.com") else ("github.com", host)


def render_variants(edition: Edition, variants: list[Variant],
                    link_hosts: tuple[str, ...] = ("github.com",)) -> list[RenderedVariant]:
    """Render each variant once (never per reader); PRs that failed are listed in ``problems``."""
    rendered = []
    for variant in variants:
        email = render_email(edition, variant, link_hosts=link_hosts)
        problems = [{"number": p.number, "medium": "email", "variant": variant.key, "error": p.error}
                    for p in email.problems]
        rendered.append(RenderedVariant(variant, email, render_slack(edition, variant, link_hosts=link_hosts),
                                        problems))
    return rendered
