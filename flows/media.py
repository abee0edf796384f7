"""The media pr-digest knows: each one renderer, one channel and one registration.

Media are plugins like sources and drafters (``prdigest.kernel.registry``): an entry point in the
``pr_digest.media`` group names a :class:`~prdigest.deliver.media.Medium`, its name the medium's transport
(what ``--deliver`` names). The shipped media below are declared so in pyproject.toml; a team's own is an
installed package's entry point, or ``register_medium(Medium(...))`` from its code. A run imports only the
plugins it names; the shipped media are always there (an outbox run writes every one of them).
"""

from __future__ import annotations

from importlib.metadata import entry_points

from prdigest.deliver.email_message import EmailComposer, email_message_id, email_notice, email_outbox_file
from prdigest.deliver.feishu import FeishuChannel, address_problem, feishu_composer, feishu_outbox_file
from prdigest.deliver.media import MediaRegistry, Medium
from prdigest.deliver.slack import SlackChannel, slack_composer, slack_notice, slack_outbox_file
from prdigest.deliver.smtp import SmtpChannel
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.registry import MEDIA_GROUP
from renderers.bundle import email_rendering, slack_rendering
from renderers.feishu import feishu_notice, feishu_rendering

# Each addressed by the readers file's key of its name (prdigest/readers/addresses.py declares the keys).
EMAIL = Medium(name="email", transport="smtp", render=email_rendering,
               composer=EmailComposer, outbox_file=email_outbox_file, channel=SmtpChannel.from_settings,
               message_id=email_message_id, notice=email_notice,
               secrets=(("DIGEST_SMTP_PASSWORD", "smtp-password"),))
SLACK = Medium(name="slack", transport="slack", render=slack_rendering,
               composer=slack_composer, outbox_file=slack_outbox_file, channel=SlackChannel.from_settings,
               notice=slack_notice, secrets=(("SLACK_BOT_TOKEN", "slack-bot-token"),))
# Its group bots (URL and signing secret per group) are one JSON Secret block, read by flows/secrets.py.
FEISHU = Medium(name="feishu", transport="feishu", render=feishu_rendering,
                composer=feishu_composer, outbox_file=feishu_outbox_file, channel=FeishuChannel.from_settings,
                address_problem=address_problem, notice=feishu_notice)

_registered: list[Medium] = []


def register_medium(medium: Medium) -> None:
    """Make every later run know ``medium`` (after the shipped ones)."""
    _registered.append(medium)


def unregister_medium(name: str) -> None:
    """Forget a medium registered with :func:`register_medium`."""
    _registered[:] = [m for m in _registered if m.name != name]


#: The shipped media's transports, in the order a run writes and delivers them.
SHIPPED = ("smtp", "slack", "feishu")


def default_media(deliver: str | None = None) -> MediaRegistry:
    """A fresh registry: the shipped media, then installed plugins, then registered ones.

    With ``deliver`` (a run's ``--deliver``), only the plugins it names (entry point name = transport) are
    imported: an installed plugin nobody asked for runs no code and renders nothing. Without it, all (a
    resend of an earlier edition may need any of them).
    """
    named = None if deliver is None else {w.strip() for w in deliver.split(",") if w.strip()}
    installed = {ep.name: ep for ep in reversed(list(entry_points(group=MEDIA_GROUP)))}  # first on sys.path wins
    missing = [t for t in SHIPPED if t not in installed]
    if missing:
        raise ConfigError(f"the shipped media {', '.join(missing)} are not installed ({MEDIA_GROUP} entry "
                          "points): install pr-digest (./scripts/setup re-installs it after pyproject.toml changes)")
    shipped = [installed[t].load() for t in SHIPPED]
    plugins = [ep.load() for name, ep in sorted(installed.items())
               if name not in SHIPPED and (named is None or name in named)]
    return MediaRegistry([*shipped, *plugins, *_registered])
