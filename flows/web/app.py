"""``digest web`` as an ASGI app (Starlette): the HTTP face of ``prdigest.readers.selfservice``, nothing more.

Routes, relative to ``DIGEST_WEB_URL`` (the app never builds an absolute URL, so it works under any path
prefix a reverse proxy gives it):

- ``GET /u/TOKEN``: a page that asks to confirm (mail scanners fetch links: a GET never unsubscribes).
- ``POST /u/TOKEN`` with ``List-Unsubscribe=One-Click`` (RFC 8058; urlencoded or multipart, no cookie, no
  CSRF field): unsubscribes at once, ``200``. The confirmation page's button sends the same request.
- ``GET /p/TOKEN``: the preferences form; ``POST /p/TOKEN``: save, reset, unsubscribe or resubscribe, each
  only with the form's CSRF field (signed, bound to the token, two hours), then ``303`` back to the form.
- ``GET /healthz``: ``ok``.

A forged, altered or foreign token (or another spelling of a real one) gets ``403`` and changes nothing; a
reader an editor removed from the readers file gets ``410``; more than the rate limit per client address, or
per reader (forged tokens: per client), gets ``429``; a body over 32 KiB ``413``, more than
:data:`MAX_FIELDS` fields ``400``.
"""

from __future__ import annotations

import email.errors
import email.parser
import email.policy
import logging
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs, urlencode

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from flows.web.pages import CSP, Switch, message_page, preferences_page, strings, unsubscribe_page
from flows.web.ratelimit import RateLimiter
from prdigest.kernel.i18n import DEFAULT, language_name, languages
from prdigest.readers.selfservice import BadLink, LinkSigner, Preferences, ReaderChoices, ReaderRef
from prdigest.readers.selfservice.form import FormProblem, preferences_from_form, shared_link
from prdigest.readers.selfservice.tokens import Purpose
from prdigest.state.store import Store

log = logging.getLogger("prdigest.web")

#: Largest request body read: the preferences form of a repo with a hundred subsystems is ~4 KB.
MAX_BODY = 32_768
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),  # the token is in the URL: never hand it to another site
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
]
ACTIONS = ("save", "reset", "unsubscribe", "resubscribe")


class SecurityHeaders:
    """Adds :data:`SECURITY_HEADERS` to every HTTP response, error pages included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)
        await self.app(scope, receive, with_headers)


#: Most fields a form may have: the preferences form of a repo with a hundred subsystems has ~110.
MAX_FIELDS = 200
#: Most comment parentheses a form's header may carry (a browser sends none).
MAX_COMMENTS = 16


class BodyTooLarge(Exception):
    """A request body over :data:`MAX_BODY`."""


class BadForm(Exception):
    """A request body that is no form this app serves (too many fields)."""


async def _form(request: Request) -> dict[str, list[str]]:
    """The submitted fields: ``application/x-www-form-urlencoded``, or ``multipart/form-data`` (RFC 8058 allows
    both for the one-click POST). Starlette's own form parser needs python-multipart; these forms are tiny."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise BodyTooLarge()
    kind = request.headers.get("content-type", "")
    if kind.startswith("multipart/form-data"):
        try:
            return _multipart(kind, body)
        except (RecursionError, ValueError, LookupError, email.errors.MessageError):
            # The header parser recurses into nested comments ("name=x ((((...))))"): a bad form, not a 500.
            raise BadForm() from None
    try:
        return parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_FIELDS)
    except ValueError:  # more fields than max_num_fields
        raise BadForm() from None


def _multipart(kind: str, body: bytes) -> dict[str, list[str]]:
    """The fields of a ``multipart/form-data`` body; raises :class:`BadForm` for too many, or for headers nested
    past what a form needs (comments in parentheses: the parser recurses once per level)."""
    if kind.count("(") > MAX_COMMENTS:
        raise BadForm()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + kind.encode("latin-1") + b"\r\n\r\n" + body)
    fields: dict[str, list[str]] = {}
    parts = list(message.iter_parts()) if message.is_multipart() else []
    if len(parts) > MAX_FIELDS:
        raise BadForm()
    for part in parts:
        if str(part.get("content-disposition", "")).count("(") > MAX_COMMENTS:
            raise BadForm()
        name = part.get_param("name", header="content-disposition")
        if name:
            payload = part.get_payload(decode=True)  # bytes for a part that is not itself multipart
            text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else ""
            fields.setdefault(str(name), []).append(text)
    return fields


def create_app(store: Store, signer: LinkSigner, *, limiter: RateLimiter | None = None,
               clients: RateLimiter | None = None) -> Starlette:
    """The self-service app over ``store`` (migrated here), signing and checking with ``signer``.

    ``limiter``: requests per reader (and per client for tokens that do not verify); ``clients``: requests
    per client address, every request (behind a proxy, uvicorn's ``--proxy-headers`` gives the address)."""
    choices = ReaderChoices(store)
    limiter = limiter or RateLimiter()
    clients = clients or RateLimiter(per_minute=120, burst=60)

    def language(request: Request, default: str | None = None, form: dict[str, list[str]] | None = None) -> str:
        asked = ((form or {}).get("lang") or [""])[0] or request.query_params.get("lang")
        if asked in languages():
            return asked
        return default if default in languages() else DEFAULT

    def html(body: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(body, status_code=status)

    def switch(lang: str) -> Switch:
        """A link to the page in each other language a catalog exists for."""
        return [("?" + urlencode({"lang": other}), other, language_name(other))
                for other in languages() if other != lang]

    def guarded(purpose: Purpose, handler: Callable[[Request, str, ReaderRef, str], Awaitable[Response]]):
        async def endpoint(request: Request) -> Response:
            token = request.path_params["token"]
            lang = language(request)
            client = request.client.host if request.client else "-"
            ref: ReaderRef | None = None
            wait = clients.allow(client)
            if not wait:
                try:
                    ref = signer.reader(token, purpose)  # only the one spelling signing makes
                except BadLink:
                    wait = limiter.allow(f"unverified from {client}")
                else:
                    wait = limiter.allow(f"reader {ref.repo} {ref.reader}")
            if wait:
                return Response(message_page(lang, "too_many"), status_code=429, media_type="text/html",
                                headers={"Retry-After": str(max(1, round(wait)))})
            if ref is None:
                return html(message_page(lang, "bad_link", "bad_link_explain"), 403)
            profile_lang = await run_in_threadpool(lambda: choices.listing(ref.repo).language)
            if await run_in_threadpool(choices.profile, ref.repo, ref.reader) is None:
                return html(message_page(language(request, profile_lang), "gone", "gone_explain"), 410)
            try:
                return await handler(request, token, ref, profile_lang)
            except BodyTooLarge:
                return html(message_page(lang, "bad_request"), 413)
            except BadForm:
                return html(message_page(lang, "bad_request"), 400)
        return endpoint

    async def unsubscribe(request: Request, token: str, ref: ReaderRef, default_lang: str) -> Response:
        prefs_token = signer.token(ref, "preferences")  # the same medium: a shared channel's link stays one
        if request.method == "POST":
            form = await _form(request)
            lang = language(request, default_lang, form)
            if form.get("List-Unsubscribe") != ["One-Click"]:
                return html(message_page(lang, "bad_request"), 400)
            # The medium the link came in (an e-mail's stops the e-mail, not the reader's shared Slack channel).
            await run_in_threadpool(choices.set_unsubscribed, ref.repo, ref.reader, True, ref.medium)
            log.info("%s unsubscribed from %s%s (one-click)", ref.reader, ref.repo,
                     f" by {ref.medium}" if ref.medium else "")
            done = strings(lang)["unsub_done"].format(repo=ref.repo)
        else:
            lang = language(request, default_lang)
            choice = await run_in_threadpool(choices.choice, ref.repo, ref.reader)
            unsubscribed = choice.unsubscribed or ref.medium in choice.unsubscribed_media
            done = strings(lang)["unsub_already"].format(repo=ref.repo) if unsubscribed else None
        prefs_url = f"../p/{prefs_token}?" + urlencode({"lang": lang})
        return html(unsubscribe_page(lang, ref.repo, action=token, prefs_url=prefs_url, done=done,
                                     switch=switch(lang)))

    async def preferences(request: Request, token: str, ref: ReaderRef, default_lang: str) -> Response:
        profile = await run_in_threadpool(choices.profile, ref.repo, ref.reader)
        listing = await run_in_threadpool(choices.listing, ref.repo)
        form = await _form(request) if request.method == "POST" else {}
        lang = language(request, default_lang, form)
        if profile is None:  # left the readers file since ``guarded`` looked
            return html(message_page(lang, "gone", "gone_explain"), 410)
        ui = strings(lang)

        async def page(status: int = 200, notice: str | None = None, kind: str = "ok") -> Response:
            choice = await run_in_threadpool(choices.choice, ref.repo, ref.reader)
            return html(preferences_page(lang, ref.repo, profile, choice, listing, action=token,
                                         csrf=signer.csrf(token), notice=notice, notice_kind=kind,
                                         switch=switch(lang), medium=ref.medium), status)

        if request.method == "GET":
            done = request.query_params.get("done")
            notices = {"save": ui["saved"], "reset": ui["reset_done"], "resubscribe": ui["resubscribed"],
                       "unsubscribe": ui["unsub_done"].format(repo=ref.repo)}
            return await page(notice=notices.get(done or ""))
        if not signer.check_csrf(token, (form.get("csrf") or [""])[0]):
            return await page(403, ui["stale_form"], "bad")
        action = (form.get("action") or ["save"])[0]
        if action not in ACTIONS or (action in ("unsubscribe", "resubscribe") and shared_link(profile, ref.medium)):
            # A link everyone in a shared channel or group holds never unsubscribes the reader.
            return await page(400, ui["bad_request"], "bad")
        if action == "save":
            try:
                prefs = preferences_from_form(form, profile, listing, ref.medium)
            except FormProblem as problem:
                return await page(400, ui.get(problem.key, ui["bad_request"]), "bad")
            await run_in_threadpool(choices.set_preferences, ref.repo, ref.reader, prefs)
        elif action == "reset":
            await run_in_threadpool(choices.set_preferences, ref.repo, ref.reader, Preferences())
        else:
            await run_in_threadpool(choices.set_unsubscribed, ref.repo, ref.reader, action == "unsubscribe")
        log.info("%s of %s: %s", ref.reader, ref.repo, action)
        return RedirectResponse(f"{token}?" + urlencode({"done": action, "lang": lang}), status_code=303)

    async def healthz(request: Request) -> Response:
        return PlainTextResponse("ok")

    async def not_found(request: Request, exc: Exception) -> Response:  # Starlette's handler type takes any error
        lang = language(request)
        status = exc.status_code if isinstance(exc, HTTPException) else 404
        return html(message_page(lang, "bad_link", "bad_link_explain"), status)

    routes = [Route("/u/{token}", guarded("unsubscribe", unsubscribe), methods=["GET", "POST"]),
              Route("/p/{token}", guarded("preferences", preferences), methods=["GET", "POST"]),
              Route("/healthz", healthz)]
    app = Starlette(routes=routes, exception_handlers={404: not_found, 405: not_found})
    app.add_middleware(SecurityHeaders)
    return app
