"""The model client's HTTP transport: each request paced as the endpoint says (:mod:`~prdigest.draft.pacing`)
and bounded, body included, by the deadline of the entry it drafts.

The SDK's timeout is per read: a server that drips one byte every few seconds never trips it, and one PR
stalled the draft step for ever. Here a request whose entry's deadline passes (before it is sent, while it
waits for its turn, or while its answer trickles in) ends with :class:`DeadlineExceeded`, which the SDK
passes through without retrying (it is an ``openai.OpenAIError``). SDKs before openai 3 wrap it in an
``APIConnectionError`` after their retries, each of which ends at once (a few seconds of backoff past the
deadline).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import openai

from prdigest.draft.pacing import EndpointPacer

#: The HTTP library the installed SDK is built on (``httpx`` up to openai 2, ``httpx2`` after): its client is
#: what ``openai.DefaultHttpxClient`` subclasses, and the transport must be that library's.
http: Any = sys.modules[next(c for c in openai.DefaultHttpxClient.__mro__ if c.__name__ == "Client").__module__
                        .split(".")[0]]

#: The ``time.monotonic()`` instant the current thread's entry must be done by; None: no deadline.
_DEADLINE: ContextVar[float | None] = ContextVar("llm_deadline", default=None)
#: Bytes of a request per token, for the endpoint's token budget (an estimate: the count is the server's).
BYTES_PER_TOKEN = 4


class DeadlineExceeded(openai.APITimeoutError):
    """The deadline of the entry being drafted passed during a model request (not retried)."""


@contextmanager
def deadline(at: float | None) -> Iterator[None]:
    """Bound every model request made in this block (this thread) by the ``time.monotonic()`` instant ``at``."""
    token = _DEADLINE.set(at)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


class _Bounded(http.SyncByteStream):
    """An answer's body that stops at the deadline instead of waiting for the next byte that trickles in."""

    def __init__(self, inner: http.SyncByteStream, request: http.Request, at: float) -> None:
        self._inner, self._request, self._at = inner, request, at

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            if time.monotonic() > self._at:
                self.close()
                raise DeadlineExceeded(request=self._request)
            yield chunk

    def close(self) -> None:
        self._inner.close()


class PacedTransport(http.BaseTransport):
    """HTTP for the model client: waits as ``pacer`` says, learns from every answer, stops at the deadline."""

    def __init__(self, pacer: EndpointPacer, connections: int = 100) -> None:
        self.pacer = pacer
        self._inner = http.HTTPTransport(limits=http.Limits(max_connections=max(100, connections),
                                                                max_keepalive_connections=max(20, connections)))

    def handle_request(self, request: http.Request) -> http.Response:
        at = _DEADLINE.get()
        if at is not None and time.monotonic() >= at:
            raise DeadlineExceeded(request=request)
        size = len(request.content) if request.method == "POST" else 0
        try:
            ticket = self.pacer.acquire(size / BYTES_PER_TOKEN, until=at)
        except TimeoutError:
            raise DeadlineExceeded(request=request) from None
        response = self._inner.handle_request(request)
        self.pacer.observe(response.status_code, response.headers, ticket)
        if at is not None and isinstance(response.stream, http.SyncByteStream):
            response.stream = _Bounded(response.stream, request, at)
        return response

    def close(self) -> None:
        self._inner.close()
