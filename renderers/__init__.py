"""Renderers: pure functions from an edition and a variant to what each medium shows.

- :func:`render_email` → :class:`RenderedEmail` (subject, preheader, HTML from MJML, plain text, problems)
- :func:`render_slack` → ``chat.postMessage`` payloads (parent first, then thread replies)
- :func:`render_text` → the plain-text digest

What all three show alike (UI strings, entries cleaned and capped, verdict groups, the subject) is
:mod:`renderers.view`.

They never import Prefect and never touch the network. Untrusted text is made safe per medium by
:mod:`renderers.escape`.
"""

from prdigest.kernel.models import RenderProblem
from renderers.email import RenderedEmail, render_email
from renderers.slack import THREAD_KEY, render_slack
from renderers.text import render_text

__all__ = ["RenderProblem", "RenderedEmail", "THREAD_KEY", "render_email", "render_slack", "render_text"]
