"""The OpenAI drafter: one chat completion per PR with a JSON-schema response format, against OpenAI or
any OpenAI-compatible server (vLLM ``serve``) at ``--llm-base-url``.

Contract of :meth:`OpenAIDrafter.draft`: it always returns a :class:`DraftEntry` for the PR and never
raises for anything the model or the network does. Either the entry is a validated LLM draft
(``drafter = "openai:<model>"``, grounding-checked, cached) or it is the offline draft marked
needs-editing with the reason in ``warnings`` (``drafter = "offline-fallback"``, not cached, so the next
run tries again). Invalid output (not JSON, wrong fields, cut off by the length limit, a refusal or a
content filter) gets one repair attempt first. Transient HTTP failures (timeouts, connection errors,
408/409/429/5xx) are retried by the SDK, honouring ``Retry-After``/``retry-after-ms`` up to 120 s. Requests
are paced only as the endpoint's rate-limit headers and 429s say (:mod:`~prdigest.draft.pacing`), and each
entry, retries and repair included, has a deadline (and the run one for all of them): past it the entry
is the marked offline draft (:mod:`~prdigest.draft.transport`).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import openai
from openai.types.chat import ChatCompletionMessageParam
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from prdigest.draft import grounding
from prdigest.draft.budget import TokenCounter, default_counter
from prdigest.draft.cache import DraftCache, draft_key
from prdigest.draft.cost import cost_usd  # noqa: F401  (re-exported for callers)
from prdigest.draft.endpoint import model_client
from prdigest.draft.offline import OfflineDrafter
from prdigest.draft.pacing import EndpointPacer
from prdigest.draft.packing import DraftContext, coverage_line, pack
from prdigest.draft.transport import DeadlineExceeded, deadline
from prdigest.draft.usage import usage_markdown  # noqa: F401  (re-exported for callers)
from prdigest.kernel.config import Settings
from prdigest.kernel.errors import ConfigError, problems
from prdigest.kernel.hostile import hostile_span
from prdigest.kernel.models import DraftEntry, Language, PullRequest, Verdict
from prdigest.kernel.prompts import Prompt, load_prompt
from prdigest.kernel.prtext.restate import restated
from prdigest.kernel.storage import Store
from prdigest.kernel.surrogates import scrub, scrub_data
from prdigest.kernel.text import redact_url

log = logging.getLogger(__name__)

#: Transport retries per call, on top of the first attempt (the SDK's own retry loop).
MAX_RETRIES = 3
#: Output ceiling per call: an entry is ~300-600 tokens; more means the model is rambling.
MAX_OUTPUT_TOKENS = 1200


class EntryDraft(BaseModel):
    """One digest entry for one merged pull request."""

    # The class docstring and field descriptions are sent to the model inside the JSON schema, so they
    # speak to it. Deliberately no ``number``: which PR an answer belongs to is decided by us, never by
    # the text. Constraints beyond types live in validators, not in the schema, because the strict-mode
    # keywords OpenAI and vLLM's guided-decoding backends accept differ.
    model_config = ConfigDict(extra="forbid")

    headline: str = Field(description="Names the change itself: mechanism or component and its effect.")
    verdict: Literal["deep-read", "skim", "skip"] = Field(
        description="deep-read: design worth studying; skim: useful to know, mechanical or small; skip: trivial.")
    rationale: str = Field(description="Why this verdict, and for whom; one to three sentences.")
    focus: list[str] = Field(description="Up to five concrete points to look at, citing exact names in backticks.")
    followups: list[str] = Field(description="Up to three concrete follow-ups; empty when there are none.")
    audience: str = Field(description="Who should read it, as a short phrase.")

    @field_validator("headline", "rationale")
    @classmethod
    def _prose(cls, value: str, info: ValidationInfo) -> str:
        value = " ".join(value.split())
        if not value:
            raise ValueError("must not be empty")
        limit = 200 if info.field_name == "headline" else 1500
        if len(value) > limit:
            raise ValueError(f"has {len(value)} characters; a digest {info.field_name} has at most {limit}")
        return value

    @field_validator("focus", "followups")
    @classmethod
    def _points(cls, value: list[str]) -> list[str]:
        points = [" ".join(p.split()) for p in value if p.strip()]
        if len(points) > 8:
            raise ValueError(f"has {len(points)} items; at most 5 are wanted")
        return points[:5]


class InvalidOutput(Exception):
    """The model answered, but not with a usable entry (internal: triggers repair, then fallback)."""

    def __init__(self, reason: str, raw: str, *, truncated: bool = False) -> None:
        super().__init__(reason)
        self.raw, self.truncated = raw, truncated


@dataclass
class _Spent:
    tokens_in: int = 0
    tokens_out: int = 0
    calls: int = 0
    notes: list[str] = field(default_factory=list)


class OpenAIDrafter:
    """Drafts entries with a chat model; see the module docstring for the contract."""

    def __init__(self, client: openai.OpenAI, model: str, *, timeout: float = 60.0, input_budget: int = 12_000,
                 cache: DraftCache | None = None, counter: TokenCounter | None = None,
                 entry_prompt: Prompt | None = None, repair_prompt: Prompt | None = None,
                 fallback: Any = None, temperature: float = 0.2, pacer: EndpointPacer | None = None,
                 entry_deadline: float | None = None, run_deadline: float | None = None) -> None:
        self.client, self.model, self.timeout, self.input_budget = client, model, timeout, input_budget
        #: The pace the endpoint set (its figures: waits, 429s); None when the client was built elsewhere.
        self.pacer = pacer
        # Seconds for one entry (every call, retry and repair) and for all of the run's entries, counted
        # from the first draft; past either, the entry is the offline draft, marked.
        self.entry_deadline, self.run_deadline = entry_deadline, run_deadline
        self._run_end: float | None = None
        self._started = threading.Lock()
        self.name = f"openai:{model}"
        self.cache = cache
        self.counter = counter or default_counter()
        self.entry_prompt = entry_prompt or load_prompt("entry")
        self.repair_prompt = repair_prompt or load_prompt("repair")
        self.prompt_version = f"{self.entry_prompt.version}+{self.repair_prompt.version}"
        self.temperature = temperature
        self._fallback = fallback
        self._schema = json.dumps(EntryDraft.model_json_schema(), separators=(",", ":"))

    @classmethod
    def from_settings(cls, settings: Settings, *, conn: Store,
                      pacer: EndpointPacer | None = None, fallback: Any = None,
                      cache: Callable[[Store], DraftCache] = DraftCache) -> "OpenAIDrafter":
        """A drafter built from settings: client, the endpoint's pace on every HTTP request, cache in the state store.

        ``conn`` is the run's state store (the composition root's). ``cache`` builds the draft cache over it
        (``digest eval`` records hits). No network I/O
        here; call :meth:`check` before drafting.
        """
        if settings.openai_api_key is None or not settings.openai_api_key.get_secret_value().strip():
            raise ConfigError("--drafter openai needs OPENAI_API_KEY (for a vLLM server started without "
                              "--api-key, any value such as EMPTY will do)")
        pacer = pacer or EndpointPacer(settings.llm_rpm)
        client = model_client(settings, pacer, max_retries=MAX_RETRIES,
                              api_key=settings.openai_api_key.get_secret_value())
        drafter = cls(client, settings.model, timeout=settings.llm_timeout, input_budget=settings.llm_input_budget,
                      cache=cache(conn), fallback=fallback, pacer=pacer, entry_deadline=settings.llm_entry_deadline,
                      run_deadline=settings.llm_run_deadline)
        return drafter

    def close(self) -> None:
        """Close the HTTP client (the state store is the run's: its owner closes it)."""
        self.client.close()

    @property
    def endpoint(self) -> str:
        """The model's base URL, without credentials."""
        return redact_url(str(self.client.base_url))

    # preflight ----------------------------------------------------------------------------------
    def check(self) -> None:
        """Stop with one :class:`ConfigError` line unless the endpoint answers, accepts the key and serves the model."""
        base = self.endpoint
        try:
            ids = [m.id for m in self.client.with_options(max_retries=1, timeout=min(10.0, self.timeout)).models.list()]
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            raise ConfigError(f"LLM endpoint {base} rejected the API key (HTTP {exc.status_code}): "
                              "check OPENAI_API_KEY") from None
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            cause = exc.__cause__ or exc
            raise ConfigError(f"LLM endpoint {base} is unreachable ({type(cause).__name__}): check --llm-base-url "
                              "or DIGEST_LLM_BASE_URL / OPENAI_BASE_URL") from None
        except openai.NotFoundError:
            raise ConfigError(f"LLM endpoint {base} has no /models (HTTP 404): --llm-base-url should be the API "
                              "root, usually ending in /v1") from None
        except openai.APIStatusError as exc:
            raise ConfigError(f"LLM endpoint {base} answered HTTP {exc.status_code} to GET /models: "
                              "check --llm-base-url and the server's health") from None
        if self.model not in ids:
            shown = ", ".join(sorted(ids)[:8]) + (", …" if len(ids) > 8 else "") or "none"
            raise ConfigError(f"model '{self.model}' is not served by {base} (it serves: {shown}): "
                              "set --model or DIGEST_MODEL")

    # drafting -----------------------------------------------------------------------------------
    def key(self, pr: PullRequest, subsystems: list[str], language: Language,
            context: DraftContext | None = None) -> str:
        """The draft cache key of ``pr`` (and what it is given besides: facts, relations) for this drafter."""
        return draft_key(pr, subsystems, prompt_version=self.prompt_version, model=self.model,
                         language=language, budget=self.input_budget,
                         context=context.fingerprint() if context is not None else "")

    def draft(self, pr: PullRequest, subsystems: list[str], language: Language,
              context: DraftContext | None = None) -> DraftEntry:
        """A validated LLM draft of ``pr``, from the cache when nothing changed, else a marked fallback."""
        key = self.key(pr, subsystems, language, context)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            # This run spent nothing on it: the edition's tokens and cost count this run only.
            return hit.model_copy(update={"number": pr.number, "tokens_in": 0, "tokens_out": 0})

        spent = _Spent()
        end, late = self._deadline()
        if late:
            return self._fall_back(pr, subsystems, language, spent, late, context)
        packed = pack(pr, self.input_budget, context, counter=self.counter)
        values = {"language": language, "pr": packed, "subsystems": subsystems}
        messages = self.entry_prompt.messages(values)
        try:
            with deadline(end):
                try:
                    parsed = self._call(messages, spent, end)
                except InvalidOutput as first:
                    log.info("PR #%s: invalid LLM output (%s); one repair attempt", pr.number, first)
                    spent.notes.append(f"first answer invalid: {first}")
                    parsed = self._call(self._repair_messages(messages, first, language), spent, end)
        except InvalidOutput as second:
            return self._fall_back(pr, subsystems, language, spent,
                                   f"LLM output invalid after one repair: {second}", context)
        except DeadlineExceeded:
            return self._fall_back(pr, subsystems, language, spent, self._deadline_reason(), context)
        except openai.APIError as exc:
            if isinstance(exc.__cause__, DeadlineExceeded):  # SDKs before 3 wrap it (after their retries)
                return self._fall_back(pr, subsystems, language, spent, self._deadline_reason(), context)
            return self._fall_back(pr, subsystems, language, spent, f"LLM call failed: {_describe(exc)}", context)

        verdict = Verdict(parsed.verdict)
        draft = DraftEntry(
            number=pr.number, headline=parsed.headline, verdict=verdict,
            # Readers see the verdict's own words first, whatever the model opened with.
            rationale=restated(parsed.rationale, verdict, language), focus=parsed.focus, followups=parsed.followups,
            audience=parsed.audience, drafter=self.name, tokens_in=spent.tokens_in, tokens_out=spent.tokens_out,
            warnings=[f"repaired: {n}" for n in spent.notes],
        )
        draft = grounding.check(draft, pr, packed.text)
        if hostile := _suspicious(draft):
            # Renderers escape every medium anyway; this is for the editor: the model may have obeyed the PR.
            draft = draft.model_copy(update={"needs_editing": True, "warnings": [
                *draft.warnings, f"output contains markup, a mass mention or injected instructions: {hostile!r}"]})
        if packed.truncated:
            draft.warnings.append(f"PR data cut to the {self.input_budget}-token input budget: "
                                  f"{', '.join(packed.truncated)}")
        if packed.low_coverage:
            draft.warnings.append(f"the model saw less than a third of the changed lines "
                                  f"({coverage_line(packed.coverage)}): check the entry against the diff")
        if self.cache is not None:
            self.cache.put(key, draft, model=self.model, language=language, prompt_version=self.prompt_version)
        return draft

    def _deadline(self) -> tuple[float | None, str]:
        """This entry's end (a ``time.monotonic()`` instant, None for none), or why it has no time left."""
        now = time.monotonic()
        with self._started:
            if self._run_end is None and self.run_deadline is not None:
                self._run_end = now + self.run_deadline
        ends = [e for e in (self._run_end, None if self.entry_deadline is None else now + self.entry_deadline)
                if e is not None]
        if self._run_end is not None and now >= self._run_end:
            return None, f"the run's {self.run_deadline:.0f} s deadline for LLM drafting had passed"
        return (min(ends) if ends else None), ""

    def _deadline_reason(self) -> str:
        if self._run_end is not None and time.monotonic() >= self._run_end:
            return f"LLM drafting did not finish within the run's {self.run_deadline:.0f} s deadline"
        return f"LLM call did not finish within the entry's {self.entry_deadline:.0f} s deadline"

    def _call(self, messages: list[dict[str, str]], spent: _Spent, end: float | None = None) -> EntryDraft:
        """One chat completion (with the SDK's transport retries), parsed as :class:`EntryDraft`; each read
        waits no longer than the time left before ``end``."""
        timeout = self.timeout if end is None else max(0.01, min(self.timeout, end - time.monotonic()))
        raw = self.client.chat.completions.with_raw_response.parse(
            # cast: Prompt.messages gives {"role": "system" | "user", "content": str}, the SDK's message shape
            model=self.model, messages=cast("list[ChatCompletionMessageParam]", messages),
            response_format=EntryDraft, temperature=self.temperature,
            max_completion_tokens=MAX_OUTPUT_TOKENS, timeout=timeout,
        )
        spent.calls += 1
        body = _json_or_empty(raw.text)
        usage = body.get("usage") or {}
        content = _content(body)
        spent.tokens_in += int(usage.get("prompt_tokens") or self._estimate(messages))
        spent.tokens_out += int(usage.get("completion_tokens") or self.counter.count(content))
        try:
            completion = raw.parse()
        except openai.LengthFinishReasonError:
            raise InvalidOutput("the answer was cut off by the length limit", content, truncated=True) from None
        except openai.ContentFilterFinishReasonError:
            raise InvalidOutput("the answer was stopped by the content filter", content) from None
        except ValidationError as exc:
            draft = _with_lone_surrogates(content)
            if draft is None:
                raise InvalidOutput(_validation_summary(exc), content) from None
            return draft
        message = completion.choices[0].message
        if message.parsed is None:
            raise InvalidOutput(f"the model refused: {(message.refusal or 'no content')[:200]}", content)
        return message.parsed

    def _repair_messages(self, messages: list[dict[str, str]], failure: InvalidOutput,
                         language: Language) -> list[dict[str, str]]:
        context = {"language": language, "error": str(failure), "truncated": failure.truncated,
                   "schema": self._schema}
        system = messages[0]["content"] + "\n\n" + self.repair_prompt.render("system", context)
        return [
            {"role": "system", "content": system},
            messages[1],
            {"role": "assistant", "content": failure.raw[:4000] or "(empty answer)"},
            {"role": "user", "content": self.repair_prompt.render("user", context)},
        ]

    def _fall_back(self, pr: PullRequest, subsystems: list[str], language: Language, spent: _Spent,
                   reason: str, context: DraftContext | None = None) -> DraftEntry:
        log.warning("PR #%s: %s; using the offline draft", pr.number, reason)
        if self._fallback is None:
            self._fallback = OfflineDrafter()
        offline = self._fallback.draft(pr, subsystems, language, context)
        return offline.model_copy(update={
            "drafter": "offline-fallback", "needs_editing": True,
            "warnings": [*offline.warnings, *spent.notes, reason],
            "tokens_in": spent.tokens_in, "tokens_out": spent.tokens_out,
        })

    def _estimate(self, messages: list[dict[str, str]]) -> int:
        return sum(self.counter.count(m["content"]) + 4 for m in messages)


def _suspicious(draft: DraftEntry) -> str | None:
    """The first piece of markup, mass mention, injection phrase or piped download in the draft's text, if any
    (:func:`prdigest.kernel.hostile.hostile_span`: the checks a lede passes too)."""
    for text in (draft.headline, draft.rationale, *draft.focus, *draft.followups, draft.audience):
        if (span := hostile_span(text)) is not None:
            return span
    return None


def _with_lone_surrogates(content: str) -> "EntryDraft | None":
    """The entry in ``content`` when only a lone-surrogate escape (``\\ud800``) made the SDK's strict JSON parser
    refuse it: read by ``json`` (which keeps it), each made U+FFFD; None when it is not a valid entry anyway."""
    if "\\ud" not in content.lower() and scrub(content) == content:
        return None
    try:
        return EntryDraft.model_validate(scrub_data(json.loads(content)))
    except (ValueError, ValidationError):
        return None


def _json_or_empty(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _content(body: dict[str, Any]) -> str:
    try:
        return body["choices"][0]["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""


def _validation_summary(exc: ValidationError) -> str:
    errors = problems(exc, empty="(answer)")
    parts = [f"{field}: {message}" for field, message in errors[:3]]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "not a valid entry: " + "; ".join(parts) + more


def _describe(exc: openai.APIError) -> str:
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code} after retries"
    if isinstance(exc, openai.APIConnectionError):
        return f"connection error ({type(exc.__cause__ or exc).__name__})"
    return type(exc).__name__
