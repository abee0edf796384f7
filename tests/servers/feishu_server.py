"""A local Feishu/Lark custom bot webhook for tests: ``POST /open-apis/bot/v2/hook/<token>`` on 127.0.0.1.

It answers as Feishu does (HTTP 200 with ``{"code", "msg", "data"}`` and an ``X-Tt-Logid`` header) and checks
what Feishu checks: the token (19001), the body's size (over 20 KB: 9499), its JSON and card shape (9499),
the signature when the bot has a secret (``timestamp`` within an hour, ``sign`` = base64 HMAC-SHA256 keyed
by ``"{timestamp}\\n{secret}"`` over nothing: 19021), the custom keyword (19024), the IP allow-list (19022),
and the rate limit of one bot (5 requests a second, 100 a minute: 11232). Faults can be scripted: a rate
limit (code 11232 or HTTP 429), HTTP 5xx, a connection reset after the body was read (the card was
posted), and a late answer (posted at once, answered after a delay).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.servers import LoopbackServer

MAX_BODY = 20 * 1024
HOOK = "/open-apis/bot/v2/hook/"
LIMITED = "frequency limited psm[lark.oapi.app_platform_runtime]"


@dataclass
class Bot:
    """One group's custom bot as Feishu keeps it."""

    group: str
    token: str
    secret: str | None = None
    keyword: str | None = None
    allowed_ip: bool = True
    #: Accepted request bodies, in order (what the group sees).
    posts: list[dict] = field(default_factory=list)
    sent_at: deque = field(default_factory=deque)


@dataclass
class Call:
    """One request as received: the bot's group, its size, the answer's HTTP status and code."""

    group: str | None
    size: int
    status: int
    code: int | None


class FeishuServer(LoopbackServer):
    """Use as a context manager; :meth:`add_bot` returns the webhook URL of a new group bot."""

    def __init__(self, *, per_second: int = 5, per_minute: int = 100) -> None:
        self.per_second, self.per_minute = per_second, per_minute
        self.bots: dict[str, Bot] = {}
        self.calls: list[Call] = []
        self._faults: deque[tuple[str, object]] = deque()
        self._lock = threading.Lock()
        self._logid = 0
        #: Called with each request's bot before anything else (e.g. to kill the sender mid-thread); when it
        #: returns True the request is dropped unread: nothing posted, the connection closed without an answer.
        self.before: Callable[[Bot], bool] | None = None

    # -- set-up and scripting ------------------------------------------------------------------------
    def add_bot(self, group: str, *, secret: str | None = None, keyword: str | None = None,
                allowed_ip: bool = True) -> str:
        token = hashlib.sha256(group.encode()).hexdigest()[:32]
        self.bots[token] = Bot(group, token, secret, keyword, allowed_ip)
        return self.url + HOOK + token

    def fault(self, kind: str, times: int = 1, value: object = None) -> None:
        """The next ``times`` requests (to any bot) get: ``ratelimit`` (code 11232), ``429``, ``5xx``
        (``value``: the status), ``reset`` (read, posted, connection closed without an answer), ``late``
        (posted, answered ``value`` seconds later), or ``ok`` (answered normally: lets requests through
        before the next fault)."""
        with self._lock:
            self._faults.extend([(kind, value)] * times)

    def bot(self, group: str) -> Bot:
        return next(b for b in self.bots.values() if b.group == group)

    def posts(self, group: str) -> list[dict]:
        return self.bot(group).posts

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    # -- the webhook -----------------------------------------------------------------------------------
    def make_httpd(self) -> ThreadingHTTPServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.handle(self, raw)

            def log_message(self, *args: object) -> None:
                pass

        return ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def handle(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        token = handler.path[len(HOOK):] if handler.path.startswith(HOOK) else ""
        bot = self.bots.get(token)
        if bot is not None and self.before is not None and self.before(bot):
            handler.close_connection = True
            return None
        with self._lock:
            fault = self._faults.popleft() if self._faults else ("ok", None)
        kind, value = fault
        if kind == "429":
            return self._answer(handler, bot, len(raw), 429, 11232, "too many requests")
        if kind == "5xx":
            return self._answer(handler, bot, len(raw), int(value or 500), None, "internal error")
        if kind == "ratelimit":
            return self._answer(handler, bot, len(raw), 200, 11232, LIMITED)
        code, msg, body = self._check(bot, raw)
        if code == 0 and bot is not None and body is not None:
            with self._lock:
                bot.posts.append(body)
        if kind == "reset":
            with self._lock:
                self.calls.append(Call(bot.group if bot else None, len(raw), 0, None))
            handler.close_connection = True
            handler.connection.shutdown(socket.SHUT_RDWR)
            return None
        if kind == "late":
            time.sleep(float(value or 1))
        return self._answer(handler, bot, len(raw), 200, code, msg)

    def _check(self, bot: Bot | None, raw: bytes) -> tuple[int, str, dict | None]:
        if bot is None:
            return 19001, "param invalid: incoming webhook access token invalid", None
        if len(raw) > MAX_BODY:
            return 9499, "Bad Request", None
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return 9499, "Bad Request", None
        if not bot.allowed_ip:
            return 19022, "Ip Not Allowed", None
        if bot.secret is not None:
            stamp, given = str(body.get("timestamp", "")), body.get("sign")
            key = f"{stamp}\n{bot.secret}".encode()
            want = base64.b64encode(hmac.new(key, b"", hashlib.sha256).digest()).decode()
            if not stamp.isdigit() or abs(time.time() - int(stamp)) > 3600 or given != want:
                return 19021, "sign match fail or timestamp is not within one hour from current time", None
        if body.get("msg_type") not in ("text", "post", "image", "share_chat", "interactive"):
            return 9499, "Bad Request", None
        if body["msg_type"] == "interactive" and not isinstance((body.get("card") or {}).get("elements"), list):
            return 9499, "Bad Request", None
        if bot.keyword is not None and bot.keyword not in json.dumps(body, ensure_ascii=False):
            return 19024, "Key Words Not Found", None
        now = time.monotonic()
        with self._lock:
            while bot.sent_at and now - bot.sent_at[0] >= 60:
                bot.sent_at.popleft()
            if len(bot.sent_at) >= self.per_minute or sum(now - t < 1 for t in bot.sent_at) >= self.per_second:
                return 11232, LIMITED, None
            bot.sent_at.append(now)
        return 0, "success", body

    def _answer(self, handler: BaseHTTPRequestHandler, bot: Bot | None, size: int, status: int, code: int | None,
                msg: str) -> None:
        with self._lock:
            self._logid += 1
            logid = f"2026120100000{self._logid:05d}"
            self.calls.append(Call(bot.group if bot else None, size, status, code))
        payload = (json.dumps({"code": code, "msg": msg, "data": {}}) if code is not None else msg).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json" if code is not None else "text/plain")
            handler.send_header("Content-Length", str(len(payload)))
            handler.send_header("X-Tt-Logid", logid)
            handler.end_headers()
            handler.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting (a "late" fault)
            handler.close_connection = True
