"""Feishu/Lark: a group's custom bot webhook, signed when the bot has a secret; a digest as cards in order.

Lark is the same API on another host (``open.larksuite.com`` instead of ``open.feishu.cn``): the webhook URL
names the host. A reader names a group (``feishu: kernels-group``); its URL and secret come from
``DIGEST_FEISHU_<NAME>_URL`` / ``_SECRET`` or the ``feishu-bots`` Prefect Secret block, never from the
readers file. There is no official Feishu SDK in our stack: requests go through httpx.

Answers are read by their ``code`` (``StatusCode`` in old answers): 0 is accepted; 11232 (or HTTP 429) is a
rate limit and an HTTP 5xx is not accepted, both retried with backoff; a signature (19021), IP (19022) or
keyword (19024) refusal, or any other code, fails the row with its reason. A request that may have reached
Feishu without an answer (a reset or a timeout after the body went out) is :class:`MaybeDelivered`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from prdigest.deliver import Message, Parts
from prdigest.deliver.failure import MaybeDelivered, RecipientRejected, redact

# The request's size limits and encoding live beside the channel, for the card renderer (re-exported here).
from prdigest.deliver.feishu_limits import CARD_BUDGET, MAX_BODY, SIGN_RESERVE, body_bytes, encode  # noqa: F401
from prdigest.kernel.config import FeishuBot, Settings, feishu_variable
from prdigest.kernel.errors import ConfigError, DeliveryError
from prdigest.kernel.jsontext import pretty
from prdigest.readers.file import Reader

log = logging.getLogger(__name__)

RATE_LIMITED = 11232
#: Refusals that name what to fix; any other non-zero code fails the row with Feishu's own message.
REFUSED = {
    19021: "the signature does not match or its timestamp is over an hour off: check {secret} and the clock",
    19022: "this machine's IP address is not in the bot's allow-list",
    19024: "the card lacks the bot's custom keyword: remove the keyword rule or use signing instead",
    19001: "the webhook is not valid (a deleted bot or a mistyped token): check {url}",
    9499: "Feishu could not read the request (bad JSON, or over 20 KB)",
}


def sign(secret: str, timestamp: int) -> str:
    """Feishu's signature: base64 of HMAC-SHA256 keyed by ``"{timestamp}\\n{secret}"`` over an empty message."""
    key = f"{timestamp}\n{secret}".encode("utf-8")
    return base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode("ascii")


def address_problem(reader: Reader, group: str, settings: Settings) -> str | None:
    """Why ``reader``'s group cannot be delivered to with these settings (no webhook URL), or None."""
    bot = settings.feishu_bots.get(group)
    if bot is None or bot.url is None:
        return (f"reader '{reader.id}' names Feishu group '{group}', but {feishu_variable(group)} is not set (nor "
                "the 'feishu-bots' Secret block): give the group's custom bot webhook URL")
    return None


class _Redact(logging.Filter):
    """Keeps webhook tokens and secrets out of httpx's and httpcore's logs: httpx logs every request's URL at
    INFO, and a custom bot's URL is its credential."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if any(s in text for s in self.secrets):
            record.msg, record.args = redact(text, self.secrets), None
        return True


@dataclass(frozen=True)
class FeishuCheckpoint:
    """How far one group's cards got: how many were accepted, the first one's id, and how many there were."""

    done: int
    first: str
    total: int = 0


class _Pacer:
    """Keeps one bot under Feishu's limits (5 requests a second, 100 a minute) by waiting before a send.

    A request is counted from when its answer came back: Feishu received it at some moment before that,
    so its own count never sees more than the limit in any window."""

    def __init__(self, per_second: int, per_minute: int, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.per_second, self.per_minute = per_second, per_minute
        self.clock, self.sleep = clock, sleep
        self.sent: deque[float] = deque()

    def wait(self) -> None:
        while True:
            now = self.clock()
            while self.sent and now - self.sent[0] >= 60:
                self.sent.popleft()
            recent = [t for t in self.sent if now - t < 1]
            if len(self.sent) >= self.per_minute:
                self.sleep(60 - (now - self.sent[0]) + 0.01)
            elif len(recent) >= self.per_second:
                self.sleep(1 - (now - recent[0]) + 0.01)
            else:
                return

    def record(self) -> None:
        self.sent.append(self.clock())


class FeishuChannel:
    """Posts each group's cards to its bot, in order; ``push`` returns the first card's id (Feishu's
    ``X-Tt-Logid`` for the request, or ``<group>#1``) once every card was accepted."""

    name = "feishu"

    def __init__(self, bots: dict[str, FeishuBot], *, timeout: float = 15.0, per_second: int = 5,
                 per_minute: int = 100, retries: int = 4, backoff: float = 2.0,
                 clock: Callable[[], float] = time.time) -> None:
        self.bots = bots
        self.retries, self.backoff, self.clock = retries, backoff, clock
        self._pace = (per_second, per_minute)
        self._pacers: dict[str, _Pacer] = {}
        # A URL's token (its last path segment) is redacted wherever it appears, the whole URL too.
        urls = [b.url.get_secret_value() for b in bots.values() if b.url]
        self._secrets = tuple(sorted({*urls, *(u.rstrip("/").rsplit("/", 1)[-1] for u in urls),
                                      *(b.secret.get_secret_value() for b in bots.values() if b.secret)} - {""},
                                     key=len, reverse=True))
        for name in ("httpx", "httpcore"):
            logger = logging.getLogger(name)
            if self._secrets and not any(isinstance(f, _Redact) and f.secrets == self._secrets for f in logger.filters):
                logger.addFilter(_Redact(self._secrets))
        self.timeout = timeout
        self._client: httpx.Client | None = None  # opened by the first send, closed by close()

    @classmethod
    def from_settings(cls, settings: Settings) -> "FeishuChannel":
        """The group bots the settings name (no I/O)."""
        return cls(dict(settings.feishu_bots))

    def check(self) -> None:
        """Preflight without sending: a webhook has no test call, so only the URLs' shape is checked."""
        for group, bot in self.bots.items():
            url = bot.url.get_secret_value() if bot.url else ""
            parts = urlsplit(url)
            if parts.scheme not in ("https", "http") or not parts.hostname:
                raise ConfigError(f"{feishu_variable(group)} is not an http(s) URL: give the custom bot's webhook "
                                  "(https://open.feishu.cn/open-apis/bot/v2/hook/…, or open.larksuite.com for Lark)")

    def _where(self, group: str) -> str:
        bot = self.bots.get(group)
        host = urlsplit(bot.url.get_secret_value()).hostname if bot and bot.url else "?"
        return f"Feishu group '{group}' (at {host})"

    def push(self, message: Message, parts: Parts | None = None) -> str:
        """Post the cards in order, signing each when the group has a secret; resume after the cards a
        previous attempt got accepted (``parts``), telling ``parts.on_part`` after each one."""
        group, cards = message.recipient, message.payload
        bot = self.bots.get(group)
        if bot is None or bot.url is None:
            raise RecipientRejected(f"reader '{message.reader.id}': no webhook URL for Feishu group '{group}' "
                                    f"({feishu_variable(group)})")
        if not cards:
            raise RecipientRejected(f"reader '{message.reader.id}' has no Feishu card to send")
        point = FeishuCheckpoint(**parts.resume) if parts and parts.resume else FeishuCheckpoint(0, "", len(cards))
        if point.done and point.total != len(cards):
            # Resuming a different rendering would skip or repeat entries: an operator must look.
            raise RecipientRejected(f"reader '{message.reader.id}': {point.done} of {point.total} cards reached "
                                    f"Feishu group '{group}' earlier, but the edition now renders as {len(cards)} "
                                    "(a different --site-url or readers file?): not resumed")
        for index, body in enumerate(cards):
            if index < point.done:
                continue
            logid = self._post(group, bot, body, index, len(cards))
            point = FeishuCheckpoint(index + 1, point.first or logid or f"{group}#1", len(cards))
            if parts is not None:
                parts.on_part(asdict(point), point.first)
        return point.first

    def _post(self, group: str, bot: FeishuBot, card: dict[str, Any], index: int, total: int) -> str | None:
        """One card, retried on a rate limit or a 5xx; returns Feishu's log id for it."""
        assert bot.url is not None
        which = f"card {index + 1}/{total} to {self._where(group)}"
        # Feishu limits each bot: two group names for one webhook share its pace.
        pacer = self._pacers.setdefault(bot.url.get_secret_value(), _Pacer(*self._pace))
        for attempt in range(self.retries + 1):
            body = dict(card)
            if bot.secret is not None:
                stamp = int(self.clock())
                body = {"timestamp": str(stamp), "sign": sign(bot.secret.get_secret_value(), stamp), **card}
            data = encode(body)
            if len(data) > MAX_BODY:
                raise RecipientRejected(f"{which}: {len(data):,} bytes, over Feishu's 20 KB ({MAX_BODY:,} B; "
                                        "a renderer bug)")
            pacer.wait()
            try:
                reply = self._send(bot.url.get_secret_value(), data, which)
            finally:
                pacer.record()
            retry = self._outcome(reply, which, group)
            if retry is None:
                return reply.headers.get("X-Tt-Logid")
            if attempt == self.retries:
                raise DeliveryError(f"{which}: {retry} after {self.retries + 1} tries; it stays pending")
            wait = min(self.backoff * 2 ** attempt, 60.0)
            log.warning("%s: %s, retrying in %.1f s", which, retry, wait)
            time.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, url: str, data: bytes, which: str) -> httpx.Response:
        if self._client is None:
            self._client = httpx.Client(timeout=self.timeout, follow_redirects=False,
                                        headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            return self._client.post(url, content=data)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.WriteError,
                httpx.WriteTimeout, httpx.UnsupportedProtocol) as exc:
            # The request never reached Feishu whole: it cannot have been posted.
            raise DeliveryError(self._redact(f"{which}: cannot connect ({type(exc).__name__}: {exc}); "
                                             "it stays pending")) from None
        except httpx.TransportError as exc:
            raise MaybeDelivered(self._redact(
                f"{which}: no answer after the card was sent ({type(exc).__name__}: {exc}): it may have been "
                "posted; not resent unless asked (digest resend --uncertain)")) from None

    def _outcome(self, reply: httpx.Response, which: str, group: str) -> str | None:
        """None when Feishu accepted the card; the reason to retry; or raises for a refusal."""
        if reply.status_code == 429:
            return "rate limited (HTTP 429)"
        if reply.status_code >= 500:
            return f"HTTP {reply.status_code}"
        try:
            answer = reply.json()
            code = int(answer.get("code", answer.get("StatusCode", -1)))
            text = str(answer.get("msg", answer.get("StatusMessage", "")))[:200]
        except (ValueError, TypeError, AttributeError):
            if reply.is_success:
                raise MaybeDelivered(f"{which}: HTTP {reply.status_code} with an answer that is not Feishu's JSON: "
                                     "it may have been posted; not resent unless asked") from None
            raise RecipientRejected(f"{which}: HTTP {reply.status_code} without Feishu's JSON answer") from None
        if code == 0:
            return None
        if code == RATE_LIMITED:
            return f"rate limited (code {code})"
        hint = REFUSED.get(code, "").format(secret=feishu_variable(group, "SECRET"), url=feishu_variable(group))
        reason = f"{which}: refused with code {code} ({text})" + (f": {hint}" if hint else "")
        raise RecipientRejected(self._redact(reason))

    def _redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def flush(self) -> None:
        """Every request is synchronous: nothing is buffered."""

    def close(self) -> None:
        """Close the HTTP connection pool (safe twice; a later send opens a new one)."""
        client, self._client = self._client, None
        if client is not None:
            client.close()


def feishu_outbox_file(message: Message) -> tuple[str, bytes]:
    """``<reader-id>.feishu.json``: the request bodies the group's bot would get (unsigned), in order."""
    data = {"group": message.recipient, "requests": message.payload}
    return f"{message.reader.id}.feishu.json", pretty(data).encode("utf-8")


def feishu_composer(rendering, context):  # see prdigest.deliver.media.Medium.composer
    """Every reader of a variant gets the same cards (the channel adds the signature)."""
    return lambda reader, message_id=None: rendering.payload
