"""The one model client: an OpenAI-compatible endpoint through the paced, deadline-bounded transport.

The drafter (:mod:`prdigest.draft.llm`) and the lede and read-first ranking (:mod:`prdigest.connect.lede`,
through :func:`openai_complete`) both talk to the endpoint through :func:`model_client`, so both follow the pace
the endpoint states (:mod:`prdigest.draft.pacing`) and both stop at a deadline while an answer trickles in
(:mod:`prdigest.draft.transport`): a slow-drip endpoint stalls neither the entries nor the lede.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

import openai

from prdigest.draft.pacing import EndpointPacer
from prdigest.draft.transport import PacedTransport, deadline
from prdigest.kernel.config import Settings

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

#: One request to the model: chat messages in, the answer's text out (``prdigest.connect.lede.Complete``).
Complete = Callable[[Sequence[dict[str, str]]], str]


def model_client(settings: Settings, pacer: EndpointPacer | None = None, *, max_retries: int = 3,
                 api_key: str | None = None) -> openai.OpenAI:
    """An OpenAI client for ``settings``' endpoint whose every request waits as ``pacer`` says (a new pacer when
    None) and stops at the calling thread's deadline. No network I/O here."""
    pacer = pacer or EndpointPacer(settings.llm_rpm)
    http_client = openai.DefaultHttpxClient(transport=PacedTransport(pacer, settings.llm_concurrency))
    key = api_key if api_key is not None else (
        settings.openai_api_key.get_secret_value() if settings.openai_api_key else "EMPTY")
    return openai.OpenAI(api_key=key, base_url=settings.llm_base_url, timeout=settings.llm_timeout,
                         max_retries=max_retries, http_client=http_client)


def openai_complete(settings: Settings) -> Complete:
    """The lede's and the read-first ranking's model (``prdigest.connect.lede.Complete``) over the configured
    endpoint, through :func:`model_client`; each call bounded by ``DIGEST_LLM_ENTRY_DEADLINE`` (one request each).
    The drafter kind hands it to the connect step (:mod:`prdigest.draft.registry`): connect has no client."""
    client = model_client(settings, max_retries=2)

    def complete(messages: Sequence[dict[str, str]]) -> str:
        # cast: Prompt.messages gives {"role": "system" | "user", "content": str}, the SDK's message shape
        with deadline(time.monotonic() + settings.llm_entry_deadline):
            answer = client.chat.completions.create(model=settings.model,
                                                    messages=cast("list[ChatCompletionMessageParam]", list(messages)),
                                                    temperature=0.2, max_tokens=400)
        return answer.choices[0].message.content or ""

    return complete
