"""A reader uses the archive in a real browser (headless Chromium via Playwright, served over HTTP as a
static host would): index → edition → search a headline's word → the hit's permalink lands on that entry →
dark mode. Screenshots at 600 and 375 px go to docs/ when UPDATE_DOCS_SCREENSHOTS=1."""

from __future__ import annotations

import os
import re

import pytest

from benchmarks.archive import synthesise
from prdigest.state.store import open_store
from tests.conftest import ROOT
from tests.factories import publish_site
from tests.review_support import CHROMIUM, CHROMIUM_ARGS, browser_missing
from tests.servers.static_site import StaticSite

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(browser_missing() is not None, reason=browser_missing() or "")]

DOCS = ROOT / "docs"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory):
    """Three weekly editions of the sample week (58 entries each), published one run after another."""
    out = tmp_path_factory.mktemp("archive")
    with open_store(out / "state.sqlite") as store:
        for ed in reversed(synthesise(3, 58)):
            publish_site(store, out, "https://digest.example.com/vllm/", edition=ed)
    with StaticSite(out / "site") as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def test_a_reader_browses_searches_lands_on_a_permalink_and_switches_to_dark_mode(site, browser) -> None:
    context = browser.new_context(viewport={"width": 1000, "height": 900}, color_scheme="light")
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(site.url) else None)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    page.goto(site.url + "index.html")
    assert page.get_by_role("heading", level=1).inner_text() == "vllm-project/vllm PR digest archive"
    editions = page.locator("ol.editions h3 a")
    assert editions.count() == 3 and editions.first.inner_text() == "vllm-project/vllm 2026-W47"

    editions.nth(1).click()
    page.wait_for_url(re.compile(r"/editions/vllm-project/vllm/2026-W46/index\.html$"))
    first = page.locator("article.entry").first
    headline = first.locator("h3").inner_text()
    word = max(re.findall(r"[A-Za-z][A-Za-z0-9_]{5,}", headline), key=len)

    page.get_by_label(re.compile("Search every edition")).fill(word)
    page.get_by_label(re.compile("Search every edition")).press("Enter")
    page.wait_for_url(re.compile(r"/search\.html\?q="))
    hits = page.locator("#results li.hit")
    hits.first.wait_for()
    status = page.locator("#search-status").inner_text()
    found = int(re.match(r"(\d+) ", status).group(1))
    assert status.startswith(f"{found} entry found" if found == 1 else f"{found} entries found")  # agrees with n
    assert all(word.lower() in hits.nth(i).inner_text().lower() for i in range(min(hits.count(), 10)))

    link = hits.first.locator("a")
    target = re.search(r"#(pr-\d+)$", link.get_attribute("href")).group(1)
    link.click()
    page.wait_for_url(re.compile(rf"#{target}$"))
    entry = page.locator(f"#{target}")
    assert entry.evaluate("e => e.matches(':target')")
    assert entry.is_visible() and entry.locator("h3").inner_text()
    box = entry.bounding_box()
    assert box is not None and 0 <= box["y"] < 900  # scrolled to it
    assert entry.get_by_role("link", name=re.compile(r"^Permalink to #\d+$")).count() == 1

    light = page.evaluate("getComputedStyle(document.body).backgroundColor")
    toggle = page.get_by_role("button", name="Dark mode")
    assert toggle.get_attribute("aria-pressed") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-pressed") == "true"
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    dark = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert light == "rgb(243, 244, 246)" and dark == "rgb(13, 17, 23)"
    page.reload()  # the choice is remembered
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"

    assert outside == [] and errors == []
    context.close()


def test_the_system_dark_setting_is_followed_without_the_toggle(site, browser) -> None:
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    page.goto(site.url + "index.html")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(13, 17, 23)"
    assert page.get_by_role("button", name="Dark mode").get_attribute("aria-pressed") == "true"
    context.close()


@pytest.mark.parametrize("width", [600, 375])
def test_pages_fit_narrow_screens_without_horizontal_scrolling(site, browser, width: int) -> None:
    context = browser.new_context(viewport={"width": width, "height": 1100}, color_scheme="light")
    page = context.new_page()
    for path in ["index.html", "editions/vllm-project/vllm/2026-W47/index.html", "subsystems/index.html",
                 "subsystems/kernels.html", "search.html?q=cache"]:
        page.goto(site.url + path)
        if "search" in path:
            page.locator("#results li").first.wait_for()
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (path, overflow)
    page.goto(site.url + "editions/vllm-project/vllm/2026-W47/index.html")
    if os.environ.get("UPDATE_DOCS_SCREENSHOTS") == "1":
        page.screenshot(path=str(DOCS / f"archive-{width}.png"))
    context.close()


def test_search_finds_an_entry_by_pr_number_and_entries_by_author(site, browser) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(site.url + "editions/vllm-project/vllm/2026-W46/index.html")
    article = page.locator("article.entry").nth(3)
    number = article.get_attribute("id").removeprefix("pr-")
    author = re.search(r"@(\S+)", article.locator("p.meta").first.inner_text()).group(1)

    page.goto(f"{site.url}search.html?q=%23{number}")
    hits = page.locator("#results li.hit")
    hits.first.wait_for()
    assert hits.count() == 1 and hits.first.locator("a").get_attribute("href").endswith(f"#pr-{number}")
    assert page.locator("#search-status").inner_text() == "1 entry found"  # not "1 entries"

    page.fill("#q", f"@{author}")
    # The author's PR is in each of the three editions (the #number query above showed one hit).
    hits.nth(2).wait_for()  # (wait_for_function would need eval, which the page's CSP forbids)
    texts = hits.all_inner_texts()
    assert all(f"@{author}" in t for t in texts), texts
    assert f"q=%40{author}" in page.url or f"q=@{author}" in page.url  # the query is in the address, to share
    context.close()
