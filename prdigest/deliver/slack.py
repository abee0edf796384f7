"""Slack: the Web API through slack-sdk's ``WebClient``; a parent message, then thread replies."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from http.client import HTTPException
from urllib.error import URLError

from pydantic import SecretStr
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler, RateLimitErrorRetryHandler

from prdigest.deliver import Message, Parts
from prdigest.deliver.failure import ChannelUnavailable, MaybeDelivered, RecipientRejected, redact
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, DeliveryError
from prdigest.kernel.i18n import messages
from prdigest.kernel.jsontext import pretty
from prdigest.kernel.text import slack_entities
from prdigest.readers.selfservice.preferences import SLACK_DM

#: Errors that no retry can fix for this destination or this message.
PERMANENT = frozenset({
    "channel_not_found", "not_in_channel", "is_archived", "user_not_found", "user_not_visible",
    "user_disabled", "cannot_dm_bot", "invalid_blocks", "invalid_blocks_format", "msg_too_long",
    "no_text", "too_many_attachments", "restricted_action", "restricted_action_read_only_channel",
    "restricted_action_thread_only_channel", "restricted_action_non_threadable_channel",
    "team_access_not_granted", "messages_tab_disabled", "invalid_arguments", "thread_not_found",
})
#: Errors that concern the token or the app: nothing will get through until someone fixes them.
FATAL = frozenset({
    "invalid_auth", "not_authed", "account_inactive", "token_revoked", "token_expired", "no_permission",
    "missing_scope", "not_allowed_token_type", "ekm_access_denied", "org_login_required", "team_not_found",
})
#: Errors after which Slack says part of the call may have succeeded ("likely due to a transient issue on our
#: end. It's possible some aspect of the operation succeeded"): after a post, the message may be in the channel.
MAYBE_DONE = frozenset({"internal_error", "fatal_error"})
#: Keys the renderer must not smuggle in: they would let text from a PR ping people or re-parse it.
_DROPPED = frozenset({"thread", "channel", "thread_ts", "link_names", "parse", "as_user", "reply_broadcast"})


@dataclass(frozen=True)
class SlackCheckpoint:
    """How far one reader's thread got: the destination channel ID, the ``ts`` replies thread under,
    how many payloads were accepted, and the first parent's ``ts`` (the provider id)."""

    channel: str
    ts: str
    done: int
    first: str


def _error(exc: SlackApiError) -> str:
    return str(exc.response.get("error") or f"HTTP {exc.response.status_code}")


class _Redact(logging.Filter):
    """Keeps the bot token out of slack-sdk's debug logs (it already hides the header; this is belt
    and braces for anything it may echo)."""

    def __init__(self, secret: str) -> None:
        super().__init__()
        self.secret = secret

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secret and self.secret in record.getMessage():
            record.msg, record.args = record.getMessage().replace(self.secret, "***"), None
        return True


class _UnsentRetryHandler(ConnectionErrorRetryHandler):
    """Retries a call only when urllib failed before the request was fully sent (connecting, or writing
    it: urllib wraps those errors in ``URLError``). slack-sdk's own handler also retries
    ``ConnectionResetError`` and ``RemoteDisconnected``, which urllib raises while *waiting for the
    answer*, after Slack may have posted: a second POST would post the message twice. A read timeout is
    never retried by either."""

    def __init__(self, max_retry_count: int) -> None:
        super().__init__(max_retry_count=max_retry_count, error_types=[URLError])


#: The longest Slack ``Retry-After`` a delivery waits out; a longer one leaves the row pending (with the reason)
#: for the run's own retries, a later run or ``digest resend --pending``, instead of a silent two-minute sleep.
MAX_RETRY_AFTER = 30.0

log = logging.getLogger(__name__)


class _CappedRateLimitHandler(RateLimitErrorRetryHandler):
    """slack-sdk's 429 handler, but a wait longer than ``cap`` seconds is not waited (the call fails with
    ``ratelimited``, so the row stays pending), and every wait is logged."""

    def __init__(self, max_retry_count: int, cap: float) -> None:
        super().__init__(max_retry_count=max_retry_count)
        self.cap = cap

    @staticmethod
    def _retry_after(response) -> float:  # slack-sdk's HttpResponse
        for name, values in response.headers.items():
            if name.lower() == "retry-after":
                try:
                    return float(values[0] if isinstance(values, list) else values)
                except (TypeError, ValueError, IndexError):
                    return 1.0
        return 1.0

    def _can_retry(self, *, state, request, response=None, error=None) -> bool:
        if not super()._can_retry(state=state, request=request, response=response, error=error):
            return False
        wait = self._retry_after(response)
        method = request.url.rsplit("/", 1)[-1]
        if wait > self.cap:
            log.warning("Slack rate-limits %s and asks to wait %g s (Retry-After), more than the %g s a delivery "
                        "waits: the message stays pending", method, wait, self.cap)
            return False
        log.warning("Slack rate-limits %s: waiting %g s (Retry-After) before trying again", method, wait)
        return True


class SlackChannel:
    """Posts each reader's Slack payloads: ``#name`` and ``C…``/``G…``/``D…`` IDs directly (chat.postMessage
    accepts a name and answers with the ID), user IDs (``U…``/``W…``) via ``conversations.open``.

    ``push`` returns the parent message's ``ts`` once every payload of the thread was accepted.
    ``channel_not_found`` and other per-destination errors raise :class:`RecipientRejected`; a rejected
    token or an unreachable API raises :class:`ChannelUnavailable`. Rate limits (429) wait ``Retry-After``
    through slack-sdk's retry handler, at most :data:`MAX_RETRY_AFTER` seconds each (a longer one leaves the
    message pending), each wait logged; a call that failed before its request went out is retried; a
    ``chat.postMessage`` that got no answer after it went out (a timeout, a reset) raises
    :class:`MaybeDelivered` and is never posted again by itself.
    """

    name = "slack"
    resumable = True

    def __init__(self, *, token: SecretStr, base_url: str = "https://slack.com/api/", timeout: int = 30,
                 rate_limit_retries: int = 5, connection_retries: int = 2,
                 max_retry_after: float = MAX_RETRY_AFTER) -> None:
        secret = token.get_secret_value()
        self._secret = secret
        logger = logging.getLogger("prdigest.deliver.slack.sdk")
        if not any(isinstance(f, _Redact) and f.secret == secret for f in logger.filters):
            logger.addFilter(_Redact(secret))
        self.base_url = base_url
        self.client = WebClient(
            token=secret, base_url=base_url, timeout=timeout, logger=logger,
            retry_handlers=[_UnsentRetryHandler(max_retry_count=connection_retries),
                            _CappedRateLimitHandler(rate_limit_retries, max_retry_after)],
        )
        self._dm: dict[str, str] = {}
        self.team: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> "SlackChannel":
        """The channel ``SLACK_BOT_TOKEN`` and ``DIGEST_SLACK_BASE_URL`` describe (no I/O yet)."""
        token = settings.slack_bot_token
        if token is None or not token.get_secret_value().strip():
            raise ConfigError("SLACK_BOT_TOKEN is not set: give the bot token (xoxb-…) to deliver to Slack "
                              "(or use --deliver outbox)")
        return cls(token=token, base_url=settings.slack_base_url)

    def _redact(self, text: str) -> str:
        return redact(text, (self._secret,))

    def check(self) -> None:
        """Preflight: ``auth.test`` before the first message (ConfigError with one line if it fails)."""
        try:
            reply = self.client.auth_test()
        except SlackApiError as exc:
            error = _error(exc)
            if error in FATAL:
                raise ConfigError(self._redact(f"Slack at {self.base_url} rejected SLACK_BOT_TOKEN "
                                               f"({error}): check the token and the app's scopes")) from None
            raise ConfigError(self._redact(f"Slack at {self.base_url}: auth.test failed ({error}): "
                                           "try again later or check DIGEST_SLACK_BASE_URL")) from None
        except (SlackClientError, URLError, OSError) as exc:
            raise ConfigError(self._redact(f"Slack at {self.base_url}: cannot connect ({exc}): "
                                           "check DIGEST_SLACK_BASE_URL")) from None
        self.team = reply.get("team")

    def _destination(self, target: str) -> str:
        """Where chat.postMessage should post: the target itself, or the DM channel of a user ID."""
        if target[:1] not in ("U", "W"):
            return target
        if target not in self._dm:
            reply = self._call(target, self.client.conversations_open, users=target)
            self._dm[target] = reply["channel"]["id"]
        return self._dm[target]

    def _call(self, target: str, method: Callable, *, posts: bool = False, **kwargs):
        """One Web API call with slack-sdk's errors mapped onto ours; ``posts``: the call posts a message,
        so a failure after its request went out may follow a posted message."""
        try:
            return method(**kwargs)
        except SlackApiError as exc:
            error = _error(exc)
            text = self._redact(f"Slack refused {target}: {error}")
            if error in FATAL:
                raise ChannelUnavailable(f"{text}: check SLACK_BOT_TOKEN and the app's scopes") from None
            if error in PERMANENT:
                raise RecipientRejected(text) from None
            if posts and error in MAYBE_DONE:
                raise MaybeDelivered(f"{text}: Slack says the post may have gone through; not resent unless "
                                     "asked (digest resend --uncertain)") from None
            raise DeliveryError(f"{text}; it stays pending") from None
        except (URLError, SlackClientError) as exc:  # before the request was fully sent: nothing was posted
            raise ChannelUnavailable(self._redact(f"Slack at {self.base_url}: cannot connect "
                                                  f"({type(exc).__name__}: {exc})")) from None
        except (OSError, HTTPException) as exc:  # while waiting for the answer (urllib does not wrap these)
            reason = self._redact(f"{type(exc).__name__}: {exc}")
            if posts:
                raise MaybeDelivered(f"Slack at {self.base_url} did not answer after a message to {target} was "
                                     f"sent ({reason}): it may have been posted; not resent unless asked "
                                     "(digest resend --uncertain)") from None
            raise ChannelUnavailable(f"Slack at {self.base_url}: no answer ({reason})") from None

    def push(self, message: Message, parts: Parts | None = None) -> str:
        """Post the parent, then each ``"thread": True`` payload as a reply (``thread_ts`` = the parent's
        ``ts``); return the first parent's ``ts`` once every payload was accepted.

        ``parts.resume`` skips the payloads a previous attempt already posted; ``parts.on_part`` is told
        after each accepted payload, so a crash or a rate limit mid-thread never posts the parent twice.
        """
        target, payloads = message.recipient, message.payload
        if not target or not payloads:
            raise RecipientRejected(f"reader '{message.reader.id}' has no Slack message to send")
        resume = parts.resume if parts else None
        point = SlackCheckpoint(**resume) if resume else SlackCheckpoint(channel="", ts="", done=0, first="")
        for index, payload in enumerate(payloads):
            if index < point.done:
                continue
            body = {k: v for k, v in payload.items() if k not in _DROPPED}
            body.update(unfurl_links=False, unfurl_media=False)
            if index > 0 and payload.get("thread"):
                self._call(target, self.client.chat_postMessage, posts=True, channel=point.channel,
                           thread_ts=point.ts, **body)
                point = replace(point, done=index + 1)
            else:
                channel = point.channel or self._destination(target)
                reply = self._call(target, self.client.chat_postMessage, posts=True, channel=channel, **body)
                point = SlackCheckpoint(channel=reply["channel"], ts=reply["ts"], done=index + 1,
                                        first=point.first or reply["ts"])
            if parts is not None:
                parts.on_part(asdict(point), point.first)
        return point.first

    def flush(self) -> None:
        """Every call is synchronous: nothing is buffered."""

    def close(self) -> None:
        """The WebClient holds no open connection between calls."""


def slack_outbox_file(message: Message) -> tuple[str, bytes]:
    """``<reader-id>.slack.json``: the ``chat.postMessage`` payloads Slack would get, parent first."""
    payloads = [
        {"channel": message.recipient, **{k: v for k, v in p.items() if k != "thread"},
         **({"thread_ts": "<ts of the first message>"} if p.get("thread") else {})}
        for p in message.payload
    ]
    return f"{message.reader.id}.slack.json", pretty(payloads).encode("utf-8")


_DM = SLACK_DM


def _mrkdwn_url(url: str) -> str:
    return slack_entities(url).replace("|", "%7C")


def slack_notice(reader, subject: str, text: str, context) -> list[dict]:  # see Medium.notice
    """The editors' notice as one message, its text escaped (:func:`~prdigest.kernel.text.slack_entities`): it can
    neither ping nor link."""
    return [{"text": slack_entities(text), "unfurl_links": False, "unfurl_media": False}]


def slack_composer(rendering, context):  # see prdigest.deliver.media.Medium.composer
    """Every reader of a variant gets the same payloads (the channel adds the destination); a reader reached
    by direct message also gets their own unsubscribe and preferences links, in a context block at the end.
    A channel gets none: anyone in it could unsubscribe everyone else."""
    def compose(reader, message_id=None):
        links = context.links_for(reader, "slack") if _DM.fullmatch(reader.slack or "") else None
        payloads = rendering.payload
        if not links or not links.unsubscribe or not payloads or len(payloads[-1].get("blocks", ())) >= 50:
            return payloads
        words = messages(context.edition.language, "links")
        shown = [f"<{_mrkdwn_url(url)}|{words[kind]}>" for kind, url in (("unsubscribe", links.unsubscribe),
                                                            ("preferences", links.preferences)) if url]
        block = {"type": "context", "elements": [{"type": "mrkdwn", "text": " · ".join(shown)}]}
        last = {**payloads[-1], "blocks": [*payloads[-1].get("blocks", ()), block]}
        return [*payloads[:-1], last]
    return compose
