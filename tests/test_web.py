"""``digest web`` over real HTTP (uvicorn on a free port, an httpx client): one-click unsubscribe, forged and
foreign tokens, the preferences form with and without its CSRF field, then the next edition (EditionPipeline
into a temp dir) honouring what the readers chose. The links come from the messages the first edition wrote."""

from __future__ import annotations

import email
import json
import re
from email import policy
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest

from flows.media import default_media
from flows.web.app import create_app
from flows.web.ratelimit import RateLimiter
from prdigest.kernel.config import Settings
from prdigest.kernel.models import Verdict
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from prdigest.readers.selfservice import LinkSigner, Preferences, ReaderChoices, ReaderRef
from prdigest.state.store import open_store
from tests.web_support import LiveApp

SECRET = "web-test-secret-0123456789-abcdef"
PUBLIC = "https://digest.example.com/reader"  # what nginx serves; the tests talk to uvicorn directly
REPO = "vllm-project/vllm"
READERS = """\
readers:
  - id: lin
    name: "Lin <script>alert(1)</script> & co"
    email: lin@example.com
    slack: U0123ABCD
  - id: kernels-team
    name: Kernels team
    email: kernels@example.com
    subsystems: [kernels, moe, attention, quantization]
    min_verdict: skim
  - id: amd
    name: AMD platform
    email: amd@example.com
    subsystems: [rocm]
"""


#: Two editions from the sample week: its first three days, then the rest (the next edition).
WINDOWS = {"one": ("2026-11-16", "2026-11-19"), "two": ("2026-11-19", "2026-11-23")}


def run_edition(root: Path, out: str) -> Path:
    """The edition ``out`` (see WINDOWS) into ``root/out`` with outbox delivery; its outbox folder."""
    settings = Settings(state=root / "state.sqlite", web_url=PUBLIC, web_secret=SECRET)
    since, until = WINDOWS[out]
    options = RunOptions(out=str(root / out), readers=str(root / "readers.yaml"), since=since, until=until)
    services = build_services(options, settings, default_media(), site=None)
    try:
        EditionPipeline(services).run()
    finally:
        services.close()
    return root / out / "outbox"


def links_in(eml: Path) -> tuple[str, str]:
    """The (unsubscribe, preferences) tokens of a message: from List-Unsubscribe and the text footer."""
    msg = email.message_from_bytes(eml.read_bytes(), policy=policy.default)
    unsubscribe = msg["List-Unsubscribe"].strip("<>")
    assert unsubscribe.startswith(PUBLIC + "/u/") and msg["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    preferences = re.search(re.escape(PUBLIC) + r"/p/([\w.-]+)", text).group(1)
    assert unsubscribe in text and unsubscribe in html and f"/p/{preferences}" in html
    return unsubscribe.rsplit("/u/", 1)[1], preferences


def entries_of(eml: Path) -> int:
    subject = email.message_from_bytes(eml.read_bytes(), policy=policy.default)["Subject"]
    found = re.search(r"共 (\d+) 个 PR|of (\d+) PRs?$", subject)
    return int(found.group(1) or found.group(2))


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    """The first edition sent (outbox), and digest web serving the same state store."""
    root = tmp_path_factory.mktemp("web")
    (root / "readers.yaml").write_text(READERS, encoding="utf-8")
    outbox = run_edition(root, "one")
    store = open_store(root / "state.sqlite")
    with LiveApp(create_app(store, LinkSigner(SECRET), limiter=RateLimiter(per_minute=30, burst=40),
                            clients=RateLimiter(per_minute=6000, burst=1000))) as live:
        with httpx.Client(base_url=live.url, timeout=30, follow_redirects=False) as client:
            yield root, outbox, store, client
    store.close()


def choice(store, reader: str):
    return ReaderChoices(store).choice(REPO, reader)


def csrf_of(page: str) -> str:
    return re.search(r'name="csrf" value="([^"]+)"', page).group(1)


def test_get_confirms_and_a_one_click_post_unsubscribes(world) -> None:
    _, outbox, store, client = world
    token, _ = links_in(outbox / "amd.eml")
    page = client.get(f"/u/{token}")
    assert page.status_code == 200 and 'name="List-Unsubscribe" value="One-Click"' in page.text
    assert not choice(store, "amd").any_unsubscribed  # a GET (a mail scanner's prefetch) changes nothing
    # RFC 8058: exactly what a mailbox provider sends, no cookie, no CSRF field.
    done = client.post(f"/u/{token}", content=b"List-Unsubscribe=One-Click",
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert done.status_code == 200 and not client.cookies
    assert choice(store, "amd").any_unsubscribed
    ReaderChoices(store).set_unsubscribed(REPO, "amd", False)
    # The multipart form of the same request works too; a POST without the one-click body does nothing.
    assert client.post(f"/u/{token}", files={"List-Unsubscribe": (None, "One-Click")}).status_code == 200
    assert choice(store, "amd").any_unsubscribed
    ReaderChoices(store).set_unsubscribed(REPO, "amd", False)
    assert client.post(f"/u/{token}", data={"unsubscribe": "yes"}).status_code == 400
    assert not choice(store, "amd").any_unsubscribed


@pytest.mark.parametrize("tamper", ["forged", "altered", "other secret", "spliced", "wrong purpose"])
def test_forged_altered_or_foreign_tokens_are_refused_and_change_nothing(world, tamper: str) -> None:
    _, outbox, store, client = world
    lin_unsub, lin_prefs = links_in(outbox / "lin.eml")
    kern_unsub, _ = links_in(outbox / "kernels-team.eml")
    token = {
        "forged": "WyJ2bGxtLXByb2plY3QvdmxsbSIsImxpbiJd.bm90LWEtc2lnbmF0dXJl",
        "altered": lin_unsub[:-3] + ("AAA" if not lin_unsub.endswith("AAA") else "BBB"),
        "other secret": LinkSigner("another-secret-0123456789-abcdefgh").token(ReaderRef(REPO, "lin"), "unsubscribe"),
        "spliced": kern_unsub.split(".")[0] + "." + lin_unsub.split(".")[1],  # B's payload, A's signature
        "wrong purpose": lin_prefs,  # a preferences token on the unsubscribe URL
    }[tamper]
    before = ReaderChoices(store).all_choices()
    for response in (client.get(f"/u/{token}"), client.post(f"/u/{token}", data={"List-Unsubscribe": "One-Click"}),
                     client.post(f"/p/{token}", data={"action": "unsubscribe"})):
        assert response.status_code == 403, (tamper, response.status_code)
    assert ReaderChoices(store).all_choices() == before


def test_one_readers_form_cannot_change_another_reader(world) -> None:
    _, outbox, store, client = world
    _, lin_prefs = links_in(outbox / "lin.eml")
    _, kern_prefs = links_in(outbox / "kernels-team.eml")
    lin_csrf = csrf_of(client.get(f"/p/{lin_prefs}").text)
    before = ReaderChoices(store).all_choices()
    # Lin's form field on the kernels team's URL, and Lin's unsubscribe token on the preferences URL.
    forged = client.post(f"/p/{kern_prefs}", data={"csrf": lin_csrf, "action": "unsubscribe"})
    assert forged.status_code == 403
    lin_unsub, _ = links_in(outbox / "lin.eml")
    assert client.get(f"/p/{lin_unsub}").status_code == 403
    assert ReaderChoices(store).all_choices() == before


def test_preferences_need_the_csrf_field_and_escape_what_they_show(world) -> None:
    _, outbox, store, client = world
    _, token = links_in(outbox / "lin.eml")
    page = client.get(f"/p/{token}", params={"lang": "en"})
    assert page.status_code == 200
    assert "Lin &lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in page.text and "<script>" not in page.text
    assert 'value="rocm"' in page.text and 'name="media" value="slack"' in page.text
    headers = page.headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"] and "script-src" not in headers[
        "content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["referrer-policy"] == "no-referrer"
    assert "set-cookie" not in headers
    before = choice(store, "lin")
    missing = client.post(f"/p/{token}", data={"subsystems": "rocm", "min_verdict": "skip", "media": "email"})
    wrong = client.post(f"/p/{token}", data={"subsystems": "rocm", "min_verdict": "skip", "media": "email",
                                             "csrf": "x" * 40})
    assert missing.status_code == wrong.status_code == 403
    assert choice(store, "lin") == before
    zh = client.get(f"/p/{token}")  # the edition's language by default
    assert 'lang="zh-CN"' in zh.text and "订阅偏好" in zh.text


def test_a_form_that_would_leave_no_medium_is_refused(world) -> None:
    _, outbox, store, client = world
    _, token = links_in(outbox / "lin.eml")
    csrf = csrf_of(client.get(f"/p/{token}").text)
    before = choice(store, "lin")
    refused = client.post(f"/p/{token}", data={"csrf": csrf, "action": "save", "min_verdict": "skip"})
    assert refused.status_code == 400 and choice(store, "lin") == before
    unknown = client.post(f"/p/{token}", data={"csrf": csrf, "action": "save", "min_verdict": "skip",
                                               "media": "email", "subsystems": "../../etc"})
    assert unknown.status_code == 400 and choice(store, "lin") == before
    for budget in ("99", "0", "-1", "two"):
        too_many = client.post(f"/p/{token}", data={"csrf": csrf, "action": "save", "min_verdict": "skip",
                                                    "media": "email", "budget": budget})
        assert too_many.status_code == 400 and choice(store, "lin") == before, budget


def test_forged_tokens_over_the_rate_limit_get_429(world) -> None:
    _, outbox, _, client = world
    codes = [client.get("/u/not-a-token").status_code for _ in range(80)]
    assert codes[0] == 403 and codes[-1] == 429
    limited = client.get("/u/not-a-token")
    assert int(limited.headers["retry-after"]) >= 1
    # Tokens that do not verify count per client, whatever they say: another forged one is limited too ...
    assert client.get("/u/another-token").status_code == 429
    # ... while a real reader's link counts on that reader alone.
    token, _ = links_in(outbox / "amd.eml")
    assert client.get(f"/u/{token}").status_code == 200


def _app(tmp_path: Path, **limits):
    """digest web over a fresh state store whose roster is lin and amd."""
    from prdigest.classify.subsystems import classifier_for
    from prdigest.readers.file import Reader

    store = open_store(tmp_path / "state.sqlite")
    readers = [Reader(id="lin", name="Lin", email="lin@example.com"), Reader(id="amd", name="AMD", email="a@x.io")]
    ReaderChoices(store).record_roster(REPO, readers, classifier_for(REPO, None).vocabulary, "en")
    return store, create_app(store, LinkSigner(SECRET), **limits)


def test_other_spellings_of_a_token_neither_work_nor_escape_its_limit(tmp_path: Path) -> None:
    """The audit sent 59 spellings of one token and each was counted apart (issue 30)."""
    from tests.test_selfservice import _spellings

    store, app = _app(tmp_path, limiter=RateLimiter(per_minute=1, burst=3),
                      clients=RateLimiter(per_minute=6000, burst=1000))
    token = LinkSigner(SECRET).token(ReaderRef(REPO, "lin"), "unsubscribe")
    with LiveApp(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        spelled = [client.get(f"/u/{other}").status_code for other in _spellings(token)]
        assert 200 not in spelled and set(spelled) <= {403, 429}
        real = [client.get(f"/u/{token}").status_code for _ in range(5)]
    store.close()
    assert real == [200, 200, 200, 429, 429]


def test_a_flood_of_forged_tokens_does_not_reset_a_readers_limit(tmp_path: Path) -> None:
    """Forged tokens used to be keys of the same table as real ones, so enough of them pushed a reader's
    bucket out and gave the reader a fresh burst (issue 30)."""
    store, app = _app(tmp_path, limiter=RateLimiter(per_minute=1, burst=2, max_keys=20),
                      clients=RateLimiter(per_minute=6000, burst=1000))
    token = LinkSigner(SECRET).token(ReaderRef(REPO, "lin"), "unsubscribe")
    with LiveApp(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        first = [client.get(f"/u/{token}").status_code for _ in range(3)]
        flood = {client.get(f"/u/forged-{i}").status_code for i in range(40)}
        after = client.get(f"/u/{token}").status_code
    store.close()
    assert first == [200, 200, 429] and flood <= {403, 429} and after == 429


def test_one_client_over_its_limit_gets_429_for_every_reader(tmp_path: Path) -> None:
    store, app = _app(tmp_path, limiter=RateLimiter(per_minute=600, burst=100),
                      clients=RateLimiter(per_minute=1, burst=4))
    signer = LinkSigner(SECRET)
    tokens = [signer.token(ReaderRef(REPO, r), "unsubscribe") for r in ("lin", "amd", "lin", "amd", "lin")]
    with LiveApp(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        codes = [client.get(f"/u/{t}").status_code for t in tokens]
    store.close()
    assert codes == [200, 200, 200, 200, 429]


@pytest.mark.parametrize("how", ["urlencoded", "multipart"])
def test_a_form_with_too_many_fields_is_a_clean_400(tmp_path: Path, how: str) -> None:
    """201 fields used to raise inside parse_qs: a 500 with a traceback (issue 30)."""
    store, app = _app(tmp_path)
    signer = LinkSigner(SECRET)
    unsub = signer.token(ReaderRef(REPO, "lin"), "unsubscribe")
    prefs = signer.token(ReaderRef(REPO, "lin"), "preferences")
    fields = [("subsystems", f"s{i}") for i in range(201)]
    with LiveApp(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        csrf = csrf_of(client.get(f"/p/{prefs}").text)
        if how == "urlencoded":
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            sent = [client.post(f"/p/{prefs}", content=urlencode([("csrf", csrf), ("action", "save"), *fields]),
                                headers=form),
                    client.post(f"/u/{unsub}", content=urlencode([("List-Unsubscribe", "One-Click"), *fields]),
                                headers=form)]
        else:
            sent = [client.post(f"/p/{prefs}", files=[("csrf", (None, csrf)), *((k, (None, v)) for k, v in fields)]),
                    client.post(f"/u/{unsub}", files=[("List-Unsubscribe", (None, "One-Click")),
                                                      *((k, (None, v)) for k, v in fields)])]
        assert [r.status_code for r in sent] == [400, 400]
        assert all("Traceback" not in r.text and "<html" in r.text.lower() for r in sent)
        assert not ReaderChoices(store).choice(REPO, "lin").any_unsubscribed
    store.close()


def test_the_rate_limit_refills_per_token() -> None:
    now = [0.0]
    limiter = RateLimiter(per_minute=6, burst=2, clock=lambda: now[0])
    assert [limiter.allow("a"), limiter.allow("a")] == [0, 0]
    assert limiter.allow("a") == pytest.approx(10.0) and limiter.allow("b") == 0
    now[0] = 10.0
    assert limiter.allow("a") == 0


def test_readers_choose_and_the_next_edition_honours_them(world) -> None:
    """Last in the module: the kernels team unsubscribes with one click; Lin narrows to ROCm, deep reads and
    skims, e-mail only; then amd resubscribes from the preferences page. The next edition follows each."""
    root, outbox, store, client = world
    assert (outbox / "lin.slack.json").exists()
    slack = json.loads((outbox / "lin.slack.json").read_text(encoding="utf-8"))
    assert "/u/" in json.dumps(slack[-1]["blocks"][-1])  # a Slack DM carries the reader's own links too
    kern_unsub, _ = links_in(outbox / "kernels-team.eml")
    assert client.post(f"/u/{kern_unsub}", content=b"List-Unsubscribe=One-Click",
                       headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 200
    _, lin_prefs = links_in(outbox / "lin.eml")
    csrf = csrf_of(client.get(f"/p/{lin_prefs}").text)
    saved = client.post(f"/p/{lin_prefs}", data={"csrf": csrf, "action": "save", "subsystems": ["rocm", "kernels"],
                                                 "min_verdict": "skim", "media": "email", "budget": "3",
                                                 "lang": "en"})
    assert saved.status_code == 303 and saved.headers["location"].startswith(f"{lin_prefs}?done=save")
    shown = client.get(f"/p/{lin_prefs}", params={"done": "save", "lang": "en"}).text
    assert "Saved" in shown and re.search(r'value="rocm" checked', shown)
    assert choice(store, "lin").preferences == Preferences(subsystems=("kernels", "rocm"), min_verdict=Verdict.SKIM,
                                                           media=("email",), budget=3)
    assert 'name="budget" min="1" max="20" inputmode="numeric" value="3"' in shown
    _, amd_prefs = links_in(outbox / "amd.eml")
    ReaderChoices(store).set_unsubscribed(REPO, "amd", True)
    csrf = csrf_of(client.get(f"/p/{amd_prefs}").text)
    assert client.post(f"/p/{amd_prefs}", data={"csrf": csrf, "action": "resubscribe"}).status_code == 303
    assert not choice(store, "amd").any_unsubscribed

    after = run_edition(root, "two")
    assert not list(after.glob("kernels-team.*"))  # unsubscribed: no message at all
    assert (after / "lin.eml").exists() and not (after / "lin.slack.json").exists()
    assert (after / "amd.eml").exists()
    digest = json.loads((root / "two" / "digest.json").read_text(encoding="utf-8"))
    published = [e for e in digest["entries"] if e["status"] in ("approved", "edited")]
    # Without her choices Lin (every subsystem, every verdict) would get every published entry.
    assert 0 < entries_of(after / "lin.eml") < len(published)
    lin_variant = next(v for v in digest["variants"] if "lin" in v["readers"])
    assert 0 < len(lin_variant["read_first"]) <= 3
    # The kernels team's filter selects entries of this edition too: they are left out, not idle.
    kernels = {"kernels", "moe", "attention", "quantization"}
    assert any(set(e["subsystems"]) & kernels and e["verdict"] != "skip" for e in published)
    assert all("kernels-team" not in v["readers"] for v in digest["variants"])


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_digest_web_refuses_to_start_without_its_url_or_secret(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from flows.cli import app

    runner = CliRunner()
    state = str(tmp_path / "s.sqlite")
    no_url = runner.invoke(app, ["web", "--state", state])
    no_secret = runner.invoke(app, ["web", "--state", state], env={"DIGEST_WEB_URL": PUBLIC})
    assert no_url.exit_code == no_secret.exit_code == 2
    assert "DIGEST_WEB_URL" in no_url.output and "DIGEST_WEB_SECRET is not" in no_secret.output


def test_digest_web_serves_and_logs_no_token(world, tmp_path: Path) -> None:
    """The command as an operator runs it: a process on a port; a reader's change is logged by reader and
    repo, never with the token that made it."""
    import os
    import subprocess
    import sys
    import time

    root, outbox, store, _ = world
    port = _free_port()
    env = {**os.environ, "DIGEST_WEB_URL": PUBLIC, "DIGEST_WEB_SECRET": SECRET,
           "DIGEST_STATE": str(root / "state.sqlite")}
    proc = subprocess.Popen([sys.executable, "-m", "flows.cli", "web", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2).text == "ok":
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "digest web did not start"
            time.sleep(0.2)
        _, token = links_in(outbox / "amd.eml")
        page = httpx.get(f"http://127.0.0.1:{port}/p/{token}", timeout=10)
        csrf = csrf_of(page.text)
        saved = httpx.post(f"http://127.0.0.1:{port}/p/{token}", timeout=10,
                           data={"csrf": csrf, "action": "reset"})
        assert saved.status_code == 303
    finally:
        proc.terminate()
        output = proc.communicate(timeout=30)[0]
    assert "amd of vllm-project/vllm: reset" in output
    assert token not in output and SECRET not in output


@pytest.mark.slow
def test_digest_web_over_a_shared_postgresql_state(pg_url: str) -> None:
    """A team's setup: the workers and digest web share PostgreSQL. The roster a run recorded there is what
    digest web knows; a one-click unsubscribe and a saved form land there for the next run to read."""
    from prdigest.classify.subsystems import classifier_for
    from prdigest.readers.file import Reader

    signer = LinkSigner(SECRET)
    lin = Reader(id="lin", name="Lin", email="lin@example.com", slack="U0123ABCD")
    with open_store(pg_url) as store:
        ReaderChoices(store).record_roster(REPO, [lin], classifier_for(REPO, None).vocabulary, "en")
        with LiveApp(create_app(store, signer)) as live, httpx.Client(base_url=live.url, timeout=30) as client:
            unsub = signer.token(ReaderRef(REPO, "lin"), "unsubscribe")
            prefs = signer.token(ReaderRef(REPO, "lin"), "preferences")
            assert client.post(f"/u/{unsub}", data={"List-Unsubscribe": "One-Click"}).status_code == 200
            csrf = csrf_of(client.get(f"/p/{prefs}").text)
            assert client.post(f"/p/{prefs}", data={"csrf": csrf, "action": "save", "min_verdict": "deep-read",
                                                     "media": "email", "budget": "2"}).status_code == 303
            gone = signer.token(ReaderRef(REPO, "someone-else"), "preferences")
            assert client.get(f"/p/{gone}").status_code == 410  # signed, but not on the readers list
    with open_store(pg_url) as store:  # what the next run reads, from another connection
        stored = ReaderChoices(store).choice(REPO, "lin")
    assert stored.unsubscribed
    assert stored.preferences == Preferences(min_verdict=Verdict.DEEP_READ, media=("email",), budget=2)


@pytest.mark.parametrize("where", ["request", "part"])
def test_a_multipart_form_with_nested_header_comments_is_a_clean_400(tmp_path: Path, where: str) -> None:
    """Failed before the fix: the e-mail header parser recursed once per nested '(' and the RecursionError was a
    500 (the one-click POST and the preferences form both read multipart bodies)."""
    store, app = _app(tmp_path)
    unsub = LinkSigner(SECRET).token(ReaderRef(REPO, "lin"), "unsubscribe")
    nested = "(" * 2000 + ")" * 2000
    kind = "multipart/form-data; boundary=XX" + (f" {nested}" if where == "request" else "")
    disposition = 'form-data; name="List-Unsubscribe"' + (f" {nested}" if where == "part" else "")
    body = f"--XX\r\nContent-Disposition: {disposition}\r\n\r\nOne-Click\r\n--XX--\r\n".encode()
    with LiveApp(app) as live, httpx.Client(base_url=live.url, timeout=30) as client:
        sent = client.post(f"/u/{unsub}", content=body, headers={"Content-Type": kind})
        plain = client.post(f"/u/{unsub}", content=b"--XX\r\nContent-Disposition: form-data; "
                            b'name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--XX--\r\n',
                            headers={"Content-Type": "multipart/form-data; boundary=XX"})
    assert sent.status_code == 400 and "Traceback" not in sent.text and "<html" in sent.text.lower()
    assert plain.status_code == 200  # the same form without the comments still unsubscribes
    assert ReaderChoices(store).choice(REPO, "lin").any_unsubscribed
    store.close()
