"""The preferences page in headless Chromium with JavaScript off, as a reader on a phone and on a desktop:
light and dark at 375 and 1200 px (screenshots in the test's folder, and in docs/ with
UPDATE_DOCS_SCREENSHOTS=1); nothing wider than the phone; a reader ticks a box, saves, and the change is stored."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from flows.web.app import create_app
from flows.web.ratelimit import RateLimiter
from prdigest.classify.subsystems import classifier_for
from prdigest.kernel.config import Settings
from prdigest.readers.file import Reader
from prdigest.readers.selfservice import LinkSigner, ReaderChoices, ReaderRef
from prdigest.state.store import open_store
from tests.conftest import ROOT
from tests.review_support import CHROMIUM, CHROMIUM_ARGS, browser_missing
from tests.web_support import LiveApp

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")]

SECRET = "browser-secret-0123456789-abcdef"
REPO = "vllm-project/vllm"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """digest web over a state store whose roster holds one reader with e-mail and a Slack DM."""
    root = tmp_path_factory.mktemp("web-browser")
    store = open_store(Settings(state=root / "state.sqlite").state)
    reader = Reader(id="lin", name="Lin Wei", email="lin@example.com", slack="U0123ABCD",
                    subsystems=("kernels", "moe"), exclude=("docs",))
    vocabulary = classifier_for(REPO, None).vocabulary
    ReaderChoices(store).record_roster(REPO, [reader], vocabulary, "zh-CN")
    signer = LinkSigner(SECRET)
    # Generous: every parametrized page load spends the same token's allowance.
    with LiveApp(create_app(store, signer, limiter=RateLimiter(per_minute=600, burst=100))) as live:
        yield root, store, f"{live.url}/p/{signer.token(ReaderRef(REPO, 'lin'), 'preferences')}"
    store.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.mark.parametrize("width", [375, 1200])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("lang", ["zh-CN", "en"])
def test_the_preferences_page_fits_phone_and_desktop_in_both_schemes(served, browser, width: int, scheme: str,
                                                                      lang: str) -> None:
    root, _, url = served
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                  java_script_enabled=False)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)  # e.g. a CSP refusal
    page.goto(f"{url}?lang={lang}")
    assert page.locator("input[name=subsystems]").count() > 10
    assert page.evaluate("document.documentElement.scrollWidth") <= width  # no sideways scrolling
    save = page.locator("button[value=save]")
    assert save.bounding_box()["height"] >= 44  # a finger-sized target
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (background == "rgb(13, 17, 23)") == (scheme == "dark")
    assert not errors, errors
    name = f"web-preferences-{lang}-{width}-{scheme}.png"
    page.screenshot(path=str(root / name), full_page=True)
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1" and lang == "zh-CN":
        page.screenshot(path=str(ROOT / "docs" / f"web-preferences-{width}-{scheme}.png"), full_page=True)
    context.close()


def test_a_reader_saves_the_form_without_javascript(served, browser) -> None:
    _, store, url = served
    context = browser.new_context(viewport={"width": 375, "height": 800}, java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{url}?lang=en")
    page.check("input[name=subsystems][value=rocm]")
    page.uncheck("input[name=media][value=slack]")
    page.check("input[name=min_verdict][value=deep-read]")
    with page.expect_navigation(wait_until="load"):  # the POST, then its 303 back to the form
        page.click("button[value=save]")
    assert "done=save" in page.url and "Saved" in page.content()
    prefs = ReaderChoices(store).choice(REPO, "lin").preferences
    assert set(prefs.subsystems) == {"kernels", "moe", "rocm"} and prefs.media == ("email",)
    assert prefs.min_verdict.value == "deep-read"
    with page.expect_navigation(wait_until="load"):  # the POST, then its 303 back to the form
        page.click("button[value=unsubscribe]")
    assert ReaderChoices(store).choice(REPO, "lin").unsubscribed
    with page.expect_navigation(wait_until="load"):  # the POST, then its 303 back to the form
        page.click("button[value=resubscribe]")
    assert not ReaderChoices(store).choice(REPO, "lin").unsubscribed
    context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_email_footer_shows_the_readers_own_links(browser, tmp_path: Path, scheme: str) -> None:
    """The footer a reader sees at 375 px: both links visible, each pointing at that reader's own URL."""
    from prdigest.connect.variants import plan_variants
    from prdigest.readers.selfservice import ReaderLinks
    from renderers.email import render_email
    from tests.delivery_support import sample_edition

    edition = sample_edition()
    variant = plan_variants(edition, [Reader(id="lin", name="Lin", email="lin@example.com")])[0][0]
    rendered = render_email(edition, variant, reader_links=("unsubscribe", "preferences"))
    links = ReaderLinks("https://digest.example.com/reader/u/T1?a=1&b=2", "https://digest.example.com/reader/p/T2")
    (tmp_path / "email.html").write_text(links.fill(rendered.html, for_html=True), encoding="utf-8")
    context = browser.new_context(viewport={"width": 375, "height": 800}, color_scheme=scheme)
    page = context.new_page()
    page.goto((tmp_path / "email.html").as_uri())
    anchors = page.locator(".foot a")
    assert [anchors.nth(i).get_attribute("href") for i in range(anchors.count())] == [links.unsubscribe,
                                                                                     links.preferences]
    assert all(anchors.nth(i).is_visible() for i in range(2))
    assert anchors.nth(0).inner_text() == "退订"
    page.locator(".foot").first.screenshot(path=str(tmp_path / f"footer-{scheme}.png"))
    context.close()
