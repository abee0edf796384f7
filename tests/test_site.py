"""The archive site: every page's structure, escaping and links; Atom feeds; the search index; publishing
from the state store (two editions, one site); links from email, Slack and text that resolve to entries."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import timedelta
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

import pytest

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.kernel.errors import ConfigError
from prdigest.kernel.models import Edition, EntryStatus
from prdigest.publish.site import write_site
from prdigest.state.store import open_store
from renderers import render_email, render_slack, render_text
from renderers.site import build_site, edition_dir, permalink, site_base
from renderers.site.links import window_slug
from tests.factories import WEEK, edition, entry, publish_site
from tests.test_escaping import FIELDS, HOSTILE, hostile_entry

SITE = "https://digest.example.com/vllm/"
ATOM = "{http://www.w3.org/2005/Atom}"
GITHUB_PR = re.compile(r"^https://github\.com/[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*/pull/\d+$")


def week(n: int, entries, language: str = "en") -> Edition:
    base = edition(entries, language=language)
    return base.model_copy(update={"since": WEEK + timedelta(weeks=n), "until": WEEK + timedelta(weeks=n + 1),
                                   "approver": "Ann", "approved_at": WEEK + timedelta(weeks=n + 1, hours=9)})


def two_weeks() -> list[Edition]:
    """Newest first, as the history returns them."""
    older = week(0, [entry(101, ["kernels"], "deep-read"), entry(102, ["docs"], "skip"),
                     entry(103, ["moe", "kernels"]), entry(104, ["docs"], status="rejected")])
    newer = week(1, [entry(201, ["scheduler-core"], "deep-read"), entry(202, ["kernels"])])
    return [newer, older]


# --- reading pages --------------------------------------------------------------------------------

class Page(HTMLParser):
    """Tags, attributes, ids, headings, landmarks and links (with their text) of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.ids: set[str] = set()
        self.headings: list[int] = []
        self.links: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._link: list[str] | None = None
        self._href = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, k, v) for k, v in attrs]
        a = dict(attrs)
        if a.get("id"):
            assert a["id"] not in self.ids, f"duplicate id {a['id']}"
            self.ids.add(a["id"])
        if re.fullmatch(r"h[1-6]", tag):
            self.headings.append(int(tag[1]))
        if tag == "a" and "href" in a:
            self._link, self._href = [], a["href"] or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.links.append((self._href, " ".join("".join(self._link).split())))
            self._link = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._link is not None:
            self._link.append(data)


def parse(html: bytes) -> Page:
    page = Page()
    page.feed(html.decode("utf-8"))
    page.close()
    return page


SITE_TAGS = {"html", "head", "meta", "title", "link", "script", "body", "a", "header", "div", "nav", "ul", "ol",
             "li", "form", "label", "input", "button", "main", "footer", "p", "h1", "h2", "h3", "h4", "span",
             "section", "article", "code", "table", "caption", "thead", "tbody", "tr", "th", "td", "noscript"}
BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def assert_page_is_safe_and_accessible(path: str, html: bytes) -> Page:
    text = html.decode("utf-8")
    assert not BAD_CHARS.search(text.replace("\n", " ")), path
    page = parse(html)
    assert set(page.tags) <= SITE_TAGS, (path, set(page.tags) - SITE_TAGS)
    for tag, name, value in page.attrs:
        assert not name.startswith("on") and name not in {"style", "srcdoc", "formaction", "background"}, (path, tag, name)
        if name in ("href", "src", "action"):
            v = value or ""
            assert "javascript:" not in v.lower(), (path, v)
            if urlsplit(v).scheme or v.startswith("//"):  # only PR links leave the site, never a script or style
                assert tag == "a" and GITHUB_PR.match(v), (path, tag, v)
    # CSP: no inline script or style can run, nothing loads from another host.
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;', text), path
    assert "<style" not in text and re.findall(r"<script(?![^>]*\bsrc=)", text) == [], path
    # Accessibility: language, landmarks, one h1, no skipped heading level, link text that says something.
    assert re.match(r'<!doctype html>\n<html lang="(en|zh-CN)">', text), path
    for landmark in ("header", "nav", "main", "footer"):
        assert landmark in page.tags, (path, landmark)
    assert page.headings.count(1) == 1 and page.headings[0] == 1, (path, page.headings)
    for before, after in zip(page.headings, page.headings[1:]):
        assert after <= before + 1, (path, page.headings)
    for href, label in page.links:
        assert label and label not in {"here", "link", "click here", "#"}, (path, href, label)
    return page


def resolve(files: dict[str, bytes], source: str, href: str) -> tuple[str, str]:
    """The site file and fragment a relative ``href`` on page ``source`` points to."""
    target, fragment = urldefrag(href)
    base = source.rsplit("/", 1)[0] + "/" if "/" in source else ""
    parts: list[str] = []
    for seg in (base + unquote(target)).split("/"):
        if seg == "..":
            parts.pop()
        elif seg not in ("", "."):
            parts.append(seg)
    path = "/".join(parts)
    if target == "":
        path = source
    elif target.endswith("/") or path + "/index.html" in files:
        path = (path + "/index.html").lstrip("/")
    return path, fragment


# --- the tests -----------------------------------------------------------------------------------------

def test_the_site_has_an_index_a_page_per_edition_subsystem_pages_feeds_search_and_assets() -> None:
    eds = two_weeks()
    files = build_site(eds, site_url=SITE)
    for path in ["index.html", "search.html", "search-index.json", "feed.xml", "subsystems/index.html",
                 "subsystems/kernels.html", "subsystems/kernels.xml", "subsystems/scheduler-core.xml",
                 "editions/vllm-project/vllm/2026-W47/index.html", "editions/vllm-project/vllm/2026-W48/index.html",
                 "assets/site.css", "assets/site.js", "assets/theme.js"]:
        assert path in files, path
    index = files["index.html"].decode()
    assert index.index("2026-W48") < index.index("2026-W47")  # newest first
    # Counts per verdict and per subsystem of each edition (the rejected #104 is not counted).
    older = index[index.index("2026-W47</a>"):]
    assert "Deep read 1" in older and "Skim 1" in older and "Skip 1" in older
    assert re.search(r'kernels <span class="n">2</span>', older) and re.search(r'docs <span class="n">1</span>', older)


def test_every_page_is_escaped_accessible_and_requests_nothing_from_other_hosts() -> None:
    files = build_site(two_weeks(), site_url=SITE)
    pages = [p for p in files if p.endswith(".html")]
    assert len(pages) >= 8
    for path in pages:
        assert_page_is_safe_and_accessible(path, files[path])


def test_an_edition_page_shows_every_published_entry_grouped_as_in_the_email_with_a_self_link() -> None:
    older = two_weeks()[1]
    files = build_site([older], site_url=SITE)
    html = files["editions/vllm-project/vllm/2026-W47/index.html"]
    page = parse(html)
    assert {f"pr-{n}" for n in (101, 102, 103)} <= page.ids and "pr-104" not in page.ids
    for n in (101, 102, 103):
        assert (f"#pr-{n}", f"Permalink to #{n}") in page.links
        assert (f"https://github.com/vllm-project/vllm/pull/{n}", f"#{n} PR {n}") in page.links
    text = html.decode()
    # The email's order: deep-read, skim, skip groups; within a group by first subsystem then number.
    email_order = [e.number for e in ordered(older.published)]
    assert [int(n) for n in re.findall(r'<article class="entry[^"]*" id="pr-(\d+)"', text)] == email_order
    assert text.index('id="g-deep-read"') < text.index('id="g-skim"') < text.index('id="g-skip"')


def test_every_link_between_pages_resolves_to_an_existing_file_and_id() -> None:
    files = build_site(two_weeks(), site_url=SITE)
    ids = {p: parse(b).ids for p, b in files.items() if p.endswith(".html")}
    checked = 0
    for source in ids:
        page = parse(files[source])
        hrefs = [h for h, _ in page.links] + [v for t, k, v in page.attrs if k in ("src", "action") or
                                               (t == "link" and k == "href")]
        for href in hrefs:
            if urlsplit(href or "").scheme:
                continue
            path, fragment = resolve(files, source, href or "")
            assert path in files, (source, href, path)
            if fragment:
                assert fragment in ids[path], (source, href)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("field", FIELDS)
def test_hostile_pr_text_is_escaped_on_every_page_and_in_every_feed(field: str) -> None:
    # One edition per field holding the whole hostile table (one entry per row): 6 builds, not 138.
    hostile = [hostile_entry(field, value, 4000 + i) for i, (_, value) in enumerate(HOSTILE)]
    ed = week(0, [*hostile, entry(7, ["kernels"])])
    files = build_site([ed], site_url=SITE)
    for path, data in files.items():
        if path.endswith(".html"):
            page = assert_page_is_safe_and_accessible(path, data)
            assert page.tags.count("script") == 2 and page.tags.count("img") == 0, path
        elif path.endswith(".xml"):
            feed = ET.fromstring(data)  # well-formed XML whatever the text
            for content in feed.iter(f"{ATOM}content"):
                inner = parse(b"<div>" + (content.text or "").encode() + b"</div>")
                assert set(inner.tags) <= {"div", "h3", "ul", "ol", "li", "a", "p", "strong", "code"}, inner.tags
                assert not [a for a in inner.attrs if a[1].startswith("on") or a[1] == "style"]
                for _, k, v in inner.attrs:
                    if k == "href":
                        assert (v or "").startswith(SITE) or GITHUB_PR.match(v or ""), v
    page = parse(files["editions/vllm-project/vllm/2026-W47/index.html"])
    assert {f"pr-{4000 + i}" for i in range(len(HOSTILE))} <= page.ids  # nothing dropped
    if field in ("title", "headline"):
        assert "<script>alert(1)</script>" in "".join(page.text)  # shown as text, not run
    index = json.loads(files["search-index.json"])
    assert len(index["entries"]) == len(HOSTILE) + 1  # JSON: the script inserts it with textContent


def test_atom_feeds_have_the_required_elements_stable_ids_and_absolute_links_under_the_site_url() -> None:
    eds = two_weeks()
    files = build_site(eds, site_url=SITE)
    feeds = [p for p in files if p.endswith(".xml")]
    assert "feed.xml" in feeds and "subsystems/kernels.xml" in feeds
    for path in feeds:
        feed = ET.fromstring(files[path])
        assert feed.tag == f"{ATOM}feed"
        for required in ("id", "title", "updated", "author"):
            assert feed.find(f"{ATOM}{required}") is not None, (path, required)
        self_link = feed.find(f"{ATOM}link[@rel='self']")
        assert self_link is not None and self_link.get("href") == SITE + path
        entries = feed.findall(f"{ATOM}entry")
        assert entries, path
        for item in entries:
            for required in ("id", "title", "updated"):
                assert (item.findtext(f"{ATOM}{required}") or "").strip(), (path, required)
            assert re.fullmatch(r"urn:uuid:[0-9a-f-]{36}", item.findtext(f"{ATOM}id"))
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", item.findtext(f"{ATOM}updated"))
            href = item.find(f"{ATOM}link[@rel='alternate']").get("href")
            assert href.startswith(SITE + "editions/vllm-project/vllm/"), href
            # The link lands on a real page (and entry).
            path_in_site, fragment = urldefrag(href[len(SITE):])
            page = files[path_in_site + "index.html"]
            assert not fragment or f'id="{fragment}"' in page.decode()
        ids = [i.findtext(f"{ATOM}id") for i in entries]
        assert len(set(ids)) == len(ids)
    digest = ET.fromstring(files["feed.xml"])
    assert [e.findtext(f"{ATOM}title") for e in digest.findall(f"{ATOM}entry")] == [
        "vllm-project/vllm 2026-W48", "vllm-project/vllm 2026-W47"]
    kernels = ET.fromstring(files["subsystems/kernels.xml"])
    assert len(kernels.findall(f"{ATOM}entry")) == 3  # #202, #101, #103
    # Ids do not change when the archive is rebuilt with more editions or moves to another URL.
    moved = build_site(eds[1:], site_url="https://elsewhere.example.org/")
    old_ids = {e.findtext(f"{ATOM}id") for e in ET.fromstring(moved["subsystems/kernels.xml"]).findall(f"{ATOM}entry")}
    assert old_ids <= {e.findtext(f"{ATOM}id") for e in kernels.findall(f"{ATOM}entry")}


def test_without_a_site_url_feed_links_are_relative_to_the_feed() -> None:
    files = build_site(two_weeks())
    feed = ET.fromstring(files["subsystems/kernels.xml"])
    href = feed.find(f"{ATOM}entry/{ATOM}link").get("href")
    assert href.startswith("../editions/vllm-project/vllm/2026-W48/#pr-")


def test_the_search_index_holds_headlines_titles_numbers_and_authors_of_every_edition() -> None:
    files = build_site(two_weeks(), site_url=SITE)
    index = json.loads(files["search-index.json"])
    assert [name for _, name in index["editions"]] == ["vllm-project/vllm 2026-W48", "vllm-project/vllm 2026-W47"]
    rows = {e[1]: e for e in index["entries"]}
    assert set(rows) == {201, 202, 101, 102, 103}
    ed, number, verdict, headline, title, author = rows[101]
    assert (headline, title, author) == ("Headline 101", "PR 101", "alice")
    assert index["verdicts"][verdict][0] == "deep-read"
    assert index["editions"][ed][0] + "index.html" in files


def test_two_editions_published_one_after_another_from_one_state_database_make_one_site(tmp_path: Path) -> None:
    newer, older = two_weeks()
    with open_store(tmp_path / "state.sqlite") as store:
        first = publish_site(store, tmp_path / "out1", SITE, edition=older)
        assert first.editions == 1
        second = publish_site(store, tmp_path / "out2", SITE, edition=newer)  # another run's output folder
        assert second.editions == 2
        again = publish_site(store, tmp_path / "out2", SITE, edition=newer)  # the same run again: no duplicate
        assert again.editions == 2
    # The flow may pass where the store is (``--state``) instead of an open store.
    assert publish_site(tmp_path / "state.sqlite", tmp_path / "out3", SITE).editions == 2
    site = tmp_path / "out2" / "site"
    assert (site / "editions/vllm-project/vllm/2026-W47/index.html").is_file()
    assert (site / "editions/vllm-project/vllm/2026-W48/index.html").is_file()
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.count('<li class="card">') == 2


def test_links_from_the_email_slack_and_text_resolve_to_entries_of_the_site() -> None:
    newer, older = two_weeks()
    files = build_site([newer, older], site_url=SITE)
    variant = Variant(Filter(), ordered(older.published))
    email = render_email(older, variant, site_url=SITE)
    hrefs = re.findall(r'href="([^"]+)"', email.html)
    ours = [h for h in hrefs if h.startswith(SITE)]
    assert len(ours) == len(older.published) + 1  # view in browser + one permalink per entry
    texts = re.findall(r"https://digest\.example\.com/\S+", email.text)
    slack = json.dumps(render_slack(older, variant, site_url=SITE))
    slack_links = re.findall(r"<(https://digest\.example\.com/[^|>]+)\|", slack)
    assert set(texts) == set(ours) == set(slack_links)
    for link in ours:
        path, fragment = urldefrag(link[len(SITE):])
        page = parse(files[path + "index.html"])
        assert not fragment or fragment in page.ids
    assert permalink(site_base(SITE), older, 101) in ours


def test_the_compact_email_links_each_one_line_entry_to_its_full_entry_in_the_archive() -> None:
    ed = week(0, [entry(n, ["models"], "skim").model_copy(update={"rationale": "word " * 400})
                  for n in range(1, 61)])
    email = render_email(ed, Variant(Filter(), ordered(ed.published)), site_url=SITE)
    assert email.compact
    for n in (1, 30, 60):
        assert f'<a href="{SITE}editions/vllm-project/vllm/2026-W47/#pr-{n}">Headline {n}</a>' in email.html


@pytest.mark.parametrize("url", ["javascript:alert(1)", "ftp://x.example/", "https://x.example/?q=1",
                                 "https://x.example/#top", 'https://x.example/"onload', "https://x.example/a b",
                                 "https://user:pw@x.example/", "/relative/only", "https://x.example/|<!channel>"])
def test_a_site_url_that_cannot_be_a_safe_link_is_refused_naming_the_setting(url: str) -> None:
    with pytest.raises(ConfigError, match="DIGEST_SITE_URL"):
        site_base(url)
    with pytest.raises(ConfigError):
        render_text(week(0, [entry(1, ["kernels"])]), Variant(Filter(), []), site_url=url)


def test_edition_folders_follow_the_exact_window_and_never_leave_the_site() -> None:
    ed = week(0, [entry(1, ["kernels"])])
    assert edition_dir(ed) == "editions/vllm-project/vllm/2026-W47/"
    assert window_slug(WEEK, WEEK + timedelta(days=1)) == "2026-11-16--2026-11-17"
    assert window_slug(WEEK + timedelta(hours=12), WEEK + timedelta(days=7, hours=12)) == \
        "2026-11-16T1200Z--2026-11-23T1200Z"
    hostile = ed.model_copy(update={"repo": "../../etc/passwd"})
    assert edition_dir(hostile).startswith("editions/-/-etc-passwd/") or ".." not in edition_dir(hostile)
    assert ".." not in edition_dir(ed.model_copy(update={"repo": "../.."}))


def test_a_bad_site_url_stops_publishing_before_anything_is_recorded(tmp_path: Path) -> None:
    with open_store(tmp_path / "state.sqlite") as store:
        with pytest.raises(ConfigError, match="site URL"):
            publish_site(store, tmp_path, "javascript:alert(1)", edition=two_weeks()[0])
        with pytest.raises(ConfigError, match="no edition"):  # nothing was recorded: nothing to publish
            publish_site(store, tmp_path, SITE)
    assert not (tmp_path / "site" / "editions").exists()


def test_writing_refuses_a_path_outside_the_site_folder(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="outside"):
        write_site({"../escaped.html": b"x"}, tmp_path / "site")
    with pytest.raises(ConfigError, match="outside"):
        write_site({"/etc/x": b"x"}, tmp_path / "site")
    assert not (tmp_path / "escaped.html").exists()
    write_site({"a/b.html": b"1"}, tmp_path / "site")
    assert (tmp_path / "site" / "a" / "b.html").read_bytes() == b"1"


def test_chinese_editions_get_a_chinese_site() -> None:
    zh = week(0, [entry(1, ["kernels"], "deep-read")], language="zh-CN")
    files = build_site([zh], site_url=SITE)
    page = files["editions/vllm-project/vllm/2026-W47/index.html"].decode()
    assert '<html lang="zh-CN">' in page and "值得精读" in page and "#1 的存档链接" in page
    assert_page_is_safe_and_accessible("zh", files["index.html"])


def test_subsystems_are_labelled_as_the_repo_vocabulary_says_but_linked_by_name() -> None:
    from dataclasses import replace

    from prdigest.classify.subsystems import classifier_for

    vocabulary = replace(classifier_for("vllm-project/vllm").vocabulary, shows="labels")
    label = vocabulary.label("kernels", "zh-CN")
    assert label != "kernels"
    zh = week(0, [entry(1, ["kernels"], "deep-read")], language="zh-CN")
    files = build_site([zh], site_url=SITE, vocabularies={zh.repo: vocabulary})
    page = parse(files["editions/vllm-project/vllm/2026-W47/index.html"])
    assert ("../../../../subsystems/kernels.html", label) in page.links
    assert "subsystems/kernels.html" in files and "subsystems/kernels.xml" in files
    assert f"<h1>{label}</h1>" in files["subsystems/kernels.html"].decode()


def test_an_entry_retracted_when_an_edition_is_published_again_leaves_every_page_and_feed(tmp_path: Path) -> None:
    ed = week(0, [entry(1, ["kernels"], "deep-read"), entry(2, ["lora"], "skim"), entry(3, ["kernels"])])
    with open_store(tmp_path / "state.sqlite") as store:
        publish_site(store, tmp_path, SITE, edition=ed)
        site = tmp_path / "site"
        before = {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}
        assert any(b"#2" in data or b"pr-2" in data for name, data in before.items() if "lora" in name)
        # The editor rejects #2 (the only lora entry) and the edition is published again.
        again = ed.model_copy(update={"entries": [e.model_copy(update={"status": EntryStatus.REJECTED}) if e.number == 2 else e
                                                  for e in ed.entries]})
        publish_site(store, tmp_path, SITE, edition=again)
    after = {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert not [name for name in after if "lora" in name]  # its subsystem page and feed are gone, not stale
    for name, data in after.items():
        assert b"pr-2" not in data and b"/pull/2" not in data and b"PR 2" not in data, name
    assert any(b"pr-1" in data for data in after.values())
