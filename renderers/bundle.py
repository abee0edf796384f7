"""Each medium's renderer as the media registry calls it: edition + variant → payload, files, problems."""

from __future__ import annotations

from prdigest.connect.variants import Variant
from prdigest.deliver.media import RenderContext, Rendering, RenderProblem, link_hosts_for  # noqa: F401
from prdigest.kernel.jsontext import pretty
from prdigest.kernel.models import Edition
from renderers.email import render_email
from renderers.shared import sharing
from renderers.slack import render_slack


def email_rendering(edition: Edition, variant: Variant, context: RenderContext) -> Rendering:
    """``email/<variant>.html`` and ``.txt``; a PR whose MJML fails is left out and reported."""
    with sharing(context.shared):  # entries rendered once per render step, not once per variant
        email = render_email(edition, variant, link_hosts=context.link_hosts, site_url=context.site_url,
                             reader_links=context.reader_links)
    problems = list(email.problems)  # each names its PR, medium and variant already
    files = {f"email/{variant.key}.html": email.html.encode("utf-8"),
             f"email/{variant.key}.txt": email.text.encode("utf-8")}
    return Rendering("email", variant.key, email, files, problems)


def slack_rendering(edition: Edition, variant: Variant, context: RenderContext) -> Rendering:
    """``slack/<variant>.json``: the ``chat.postMessage`` payloads, parent first."""
    with sharing(context.shared):
        payloads = render_slack(edition, variant, link_hosts=context.link_hosts, site_url=context.site_url)
    # A DM reader's own links are added by the composer (prdigest.deliver.slack): a channel gets none.
    files = {f"slack/{variant.key}.json": pretty(payloads).encode("utf-8")}
    return Rendering("slack", variant.key, payloads, files)
