"""A local Slack Web API for tests: the methods pr-digest calls, on 127.0.0.1, in a thread.

``auth.test``, ``chat.postMessage`` (by channel ID or ``#name``; ``channel_not_found`` for unknown
channels; ``invalid_blocks`` above 50 blocks; 429 with ``Retry-After`` on demand), ``conversations.open``
(a DM channel per user ID). Every request is recorded (method, parsed body, headers). ``answer_late``
makes the next calls of a method take effect at once but answer only after a delay (a client timeout
after the message was posted).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

from tests.servers import LoopbackServer

MAX_BLOCKS = 50


@dataclass
class Call:
    """One request as the server received it."""

    method: str
    body: dict
    headers: dict[str, str]
    status: int


class SlackServer(LoopbackServer):
    """Use as a context manager; ``url`` is the base URL to give ``WebClient`` (ends in ``/api/``)."""

    def __init__(self, token: str = "xoxb-test-t0ken-123", *, channels: dict[str, str] | None = None,
                 users: tuple[str, ...] = ("U0TESTUSER1", "U0TESTUSER2")) -> None:
        self.token = token
        #: name (without #) -> ID
        self.channels = dict(channels or {"vllm-kernels": "C0KERNELS1", "digest-all": "C0DIGESTAL"})
        self.users = set(users)
        self.calls: list[Call] = []
        self.messages: list[dict] = []  # accepted chat.postMessage bodies, with the resolved channel and ts
        self._ratelimits: Counter[str] = Counter()
        self._retry_after = 1
        self._failures: dict[str, list[str | None]] = {}
        self._http_failures: Counter[str] = Counter()
        self._late: dict[str, list[float]] = {}
        self._ts = 1_764_000_000_000_100
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None

    # -- scripting ---------------------------------------------------------------------------------
    def rate_limit(self, method: str = "chat.postMessage", times: int = 1, retry_after: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with 429 and ``Retry-After``."""
        with self._lock:
            self._ratelimits[method] += times
            self._retry_after = retry_after

    def fail_next(self, method: str, error: str, times: int = 1, after: int = 0) -> None:
        """Let the next ``after`` calls of ``method`` through, then answer ``times`` calls with
        ``{"ok": false, "error": error}``."""
        with self._lock:
            self._failures.setdefault(method, []).extend([None] * after + [error] * times)

    def fail_http(self, method: str = "chat.postMessage", times: int = 1) -> None:
        """Answer the next ``times`` calls of ``method`` with HTTP 500 (before they take effect)."""
        with self._lock:
            self._http_failures[method] += times

    def answer_late(self, method: str, seconds: float, times: int = 1) -> None:
        """The next ``times`` calls of ``method`` take effect at once, and are answered ``seconds`` later."""
        with self._lock:
            self._late.setdefault(method, []).extend([seconds] * times)

    # -- inspection --------------------------------------------------------------------------------
    def posts(self, channel_id: str | None = None) -> list[dict]:
        return [m for m in self.messages if channel_id is None or m["channel"] == channel_id]

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/api/"

    # -- the API -----------------------------------------------------------------------------------
    def _dispatch(self, method: str, body: dict, headers: dict[str, str]) -> tuple[int, dict, dict]:
        with self._lock:
            if self._ratelimits[method] > 0:
                self._ratelimits[method] -= 1
                return 429, {"Retry-After": str(self._retry_after)}, {"ok": False, "error": "ratelimited"}
            if self._http_failures[method] > 0:
                self._http_failures[method] -= 1
                return 500, {}, {"ok": False}
            if headers.get("authorization") != f"Bearer {self.token}":
                return 200, {}, {"ok": False, "error": "invalid_auth"}
            if self._failures.get(method):
                error = self._failures[method].pop(0)
                if error is not None:
                    return 200, {}, {"ok": False, "error": error}
            if method == "auth.test":
                return 200, {}, {"ok": True, "url": "https://test.slack.com/", "team": "Test", "user": "digest",
                                 "team_id": "T0TEST", "user_id": "U0DIGEST", "bot_id": "B0DIGEST"}
            if method == "conversations.open":
                users = str(body.get("users", ""))
                if users not in self.users:
                    return 200, {}, {"ok": False, "error": "user_not_found"}
                return 200, {}, {"ok": True, "channel": {"id": "D" + users[1:]}}
            if method == "chat.postMessage":
                return self._post(body)
            return 404, {}, {"ok": False, "error": "unknown_method"}

    def _post(self, body: dict) -> tuple[int, dict, dict]:
        target = str(body.get("channel", ""))
        if target.startswith("#"):
            channel = self.channels.get(target[1:])
        elif target in self.channels.values() or (target.startswith("D") and "U" + target[1:] in self.users):
            channel = target
        else:
            channel = None
        if channel is None:
            return 200, {}, {"ok": False, "error": "channel_not_found"}
        blocks = body.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if blocks is not None and (not isinstance(blocks, list) or len(blocks) > MAX_BLOCKS):
            return 200, {}, {"ok": False, "error": "invalid_blocks"}
        if not body.get("text") and not blocks:
            return 200, {}, {"ok": False, "error": "no_text"}
        thread_ts = body.get("thread_ts")
        if thread_ts and not any(m["ts"] == thread_ts and m["channel"] == channel for m in self.messages):
            return 200, {}, {"ok": False, "error": "thread_not_found"}
        self._ts += 100
        ts = f"{self._ts // 1_000_000}.{self._ts % 1_000_000:06d}"
        self.messages.append({**body, "channel": channel, "ts": ts, "requested_channel": target})
        return 200, {}, {"ok": True, "channel": channel, "ts": ts, "message": {"text": body.get("text", ""),
                                                                            "ts": ts}}

    # -- lifecycle ---------------------------------------------------------------------------------
    def make_httpd(self) -> ThreadingHTTPServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # http.server's naming
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode("utf-8")
                if (self.headers.get("Content-Type") or "").startswith("application/json"):
                    body = json.loads(raw or "{}")
                else:
                    body = {k: v[-1] for k, v in parse_qs(raw).items()}
                headers = {k.lower(): v for k, v in self.headers.items()}
                method = self.path.removeprefix("/api/").split("?")[0]
                status, extra, reply = owner._dispatch(method, body, headers)
                owner.calls.append(Call(method, body, headers, status))
                with owner._lock:
                    late = owner._late.get(method)
                    delay = late.pop(0) if late else 0.0
                if delay:
                    time.sleep(delay)  # the call took effect; only the answer is late
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                """Quiet."""

        return ThreadingHTTPServer(("127.0.0.1", 0), Handler)
