"""URLs in prose: defanged in every medium unless on an allowed link host, and flagged for the editor."""

from __future__ import annotations

import html
import json

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.kernel.links import (
    ascii_host,
    defang,
    flag_foreign_links,
    foreign_urls,
    host_of,
    is_allowed,
    resolved_path,
)
from prdigest.kernel.models import Story
from prdigest.readers.file import Reader
from prdigest.review import review_markdown
from renderers.email import render_email
from renderers.escape import pr_url
from renderers.feishu import render_feishu
from renderers.site import build_site
from renderers.slack import render_slack
from renderers.text import render_text
from tests.factories import edition, entry


@pytest.mark.parametrize(("text", "shown"), [
    ("see https://evil.example/login?x=1.", "see hxxps://evil[.]example/login?x=1."),
    ("http://evil.example", "hxxp://evil[.]example"),
    ("HTTPS://EVIL.EXAMPLE:8443/a", "hxxps://EVIL[.]EXAMPLE[:]8443/a"),
    ("https://github.com@evil.example/x", "hxxps://github[.]com[@]evil[.]example/x"),    # user info: evil host
    ("https://github.com.evil.example/", "hxxps://github[.]com[.]evil[.]example/"),     # look-alike host
    ("javascript://x%0aalert(1)", "javascript[:]//x%0aalert(1)"),
    ("www.evil.example/a, then", "www[.]evil[.]example/a, then"),
    ("文档见 https://evil.example/中文（说明）", "文档见 hxxps://evil[.]example/中文（说明）"),
    ("kept: https://github.com/vllm-project/vllm/pull/1", "kept: https://github.com/vllm-project/vllm/pull/1"),
    ("no url in a.b.c or e.g. vllm.config", "no url in a.b.c or e.g. vllm.config"),
])
def test_urls_off_the_link_hosts_are_defanged_and_others_kept(text: str, shown: str) -> None:
    assert defang(text) == shown


def test_an_enterprise_host_is_allowed_only_when_named() -> None:
    url = "https://ghe.corp.example/org/repo/pull/3"
    assert foreign_urls(url) == [url] and foreign_urls(url, ("github.com", "ghe.corp.example")) == []
    assert not is_allowed("http://evil.example") and is_allowed("https://github.com/o/r/pull/1")


def test_entries_linking_elsewhere_are_flagged_for_the_editor_and_others_left_alone() -> None:
    bad = entry(1, ["docs"]).model_copy(update={"rationale": "Read https://evil.example/a and https://two.example/b."})
    fine = entry(2, ["docs"]).model_copy(update={"focus": ["See https://github.com/vllm-project/vllm/pull/9"]})
    flagged, same = flag_foreign_links([bad, fine])
    assert flagged.needs_editing and "evil.example, two.example" in flagged.warnings[-1]
    assert same is fine and not same.needs_editing


EVIL = "https://evil.example/phish"
DEFANGED = "hxxps://evil[.]example/phish"


def _hostile_edition():
    hostile = entry(7, ["kernels"], "deep-read", title=f"Fix {EVIL}").model_copy(update={
        "headline": f"Headline {EVIL}", "rationale": f"Why: {EVIL}.", "focus": [f"Focus {EVIL}"],
        "followups": [f"Follow {EVIL}"]})
    ed = edition([hostile], language="en")
    variants, _ = plan_variants(ed, [Reader(id="r", name="R", email="r@example.com")])
    return ed, variants[0]


def test_email_html_and_text_show_foreign_urls_defanged() -> None:
    ed, variant = _hostile_edition()
    email = render_email(ed, variant)
    for part in (email.html, email.text, render_text(ed, variant)):
        assert "evil.example" not in part and DEFANGED in part
    assert 'href="https://evil' not in email.html


def test_slack_payloads_show_foreign_urls_defanged() -> None:
    ed, variant = _hostile_edition()
    raw = json.dumps(render_slack(ed, variant), ensure_ascii=False)
    assert "evil.example" not in raw and "hxxps://evil[.]example/phish" in raw


def test_review_markdown_shows_foreign_urls_defanged_and_links_only_allowed_hosts() -> None:
    ed, _ = _hostile_edition()
    foreign_pr = entry(8, ["docs"]).model_copy(update={"url": "https://evil.example/o/r/pull/8"})
    text = review_markdown(ed.model_copy(update={"entries": [*ed.entries, foreign_pr]}))
    assert "evil.example" not in text and r"hxxps://evil\[.\]example/phish" in text
    assert "(https://evil" not in text and "<https://evil" not in text
    assert "<https://github.com/vllm-project/vllm/pull/7>" in text


def test_the_pipeline_flags_entries_with_foreign_links_before_review(tmp_path) -> None:
    from flows.media import default_media
    from prdigest.kernel.config import load_settings
    from prdigest.kernel.window import Window
    from prdigest.pipeline.compose import RunOptions, build_services
    from prdigest.pipeline.edition import Collected, EditionPipeline
    from tests.factories import WEEK

    options = RunOptions(source="sample", out=str(tmp_path / "out"), state=str(tmp_path / "s.sqlite"))
    services = build_services(options, load_settings(state=options.state), default_media())
    ed, _ = _hostile_edition()
    draft = [e.model_copy(update={"status": "draft"}) for e in ed.entries] + [entry(8, ["docs"], status="draft")]
    window = Window(WEEK, ed.until)
    made = EditionPipeline(services).new_edition(Collected("vllm-project/vllm", window, []), draft)
    assert [e.needs_editing for e in made.entries] == [True, False]
    assert "evil.example" in made.entries[0].warnings[-1] and made.entries[0].flagged


REPO = "vllm-project/vllm"
#: (URL as written in a PR or a draft, how every medium shows it). Scheme-less domains and pages of an
#: allowed host that are not the repo's own PR, issue or commit are defanged; the repo's own stay.
LINK_TABLE = [
    ("github-security-check.com/verify", "github-security-check[.]com/verify"),
    ("www2.evil.example/x", "www2[.]evil[.]example/x"),
    ("evil-login.net", "evil-login[.]net"),
    ("https://github.com/login/device", "hxxps://github[.]com/login/device"),
    ("https://github.com/login/oauth/authorize?client_id=Iv1.abc&scope=repo",
     "hxxps://github[.]com/login/oauth/authorize?client_id=Iv1.abc&scope=repo"),
    ("github.com/login/device", "github[.]com/login/device"),
    ("https://github.com/evil/vllm/pull/12", "hxxps://github[.]com/evil/vllm/pull/12"),
    ("https://github.com/vllm-project/vllm/pull/41", "https://github.com/vllm-project/vllm/pull/41"),
    ("https://github.com/vllm-project/vllm/issues/77", "https://github.com/vllm-project/vllm/issues/77"),
    ("https://github.com/vllm-project/vllm/commit/0a1b2c3d", "https://github.com/vllm-project/vllm/commit/0a1b2c3d"),
    # Scheme-relative and colon-only schemes: an href, Slack and mail clients follow them too.
    ("//evil.example/x", "//evil[.]example/x"),
    ("//github.com/login/device", "//github[.]com/login/device"),
    ("mailto:security@evil.example?subject=token", "mailto[:]security[@]evil[.]example?subject=token"),
    ("javascript:alert(document.cookie)", "javascript[:]alert(document[.]cookie)"),
]
#: Text that must stay as it is: file names and module paths are no links.
KEPT_TEXT = ["setup.py", "vllm.config", "torch.nn.functional", "csrc/moe/topk.cu", "v0.6.3", "std::vector",
             "a/b//c.py", "// comment", "file: x"]


@pytest.mark.parametrize(("written", "shown"), LINK_TABLE)
def test_links_that_are_not_the_repos_own_pr_issue_or_commit_are_defanged(written: str, shown: str) -> None:
    assert defang(f"see {written} now", repo=REPO) == f"see {shown} now"


def test_file_names_and_module_paths_stay_text() -> None:
    text = " ".join(KEPT_TEXT)
    assert defang(text, repo=REPO) == text and foreign_urls(text, repo=REPO) == []


def _table_edition():
    prose = " · ".join(w for w, _ in LINK_TABLE)
    e = entry(7, ["kernels"], "deep-read", title=f"Fix {LINK_TABLE[0][0]}").model_copy(update={
        "headline": f"Head {LINK_TABLE[1][0]}", "rationale": f"Why: {prose}.", "focus": [f"Focus {prose}"],
        "followups": [f"Follow {prose}"]})
    ed = edition([e], language="en").model_copy(update={
        "lede": f"Lede {prose}", "stories": [Story(title=f"Story {LINK_TABLE[3][0]}", numbers=[7])]})
    variants, _ = plan_variants(ed, [Reader(id="r", name="R", email="r@example.com")])
    return ed, variants[0]


def _media(ed, variant) -> dict[str, str]:
    email = render_email(ed, variant)
    site = build_site([ed], site_url="https://digest.example.org/")
    return {"email html": email.html, "email text": email.text, "text": render_text(ed, variant),
            "slack": json.dumps(render_slack(ed, variant), ensure_ascii=False),
            # lark_md writes [ ] : @ as entities: hxxps&#58;//evil&#91;.&#93;example is the same defanged text
            "feishu": html.unescape(json.dumps(render_feishu(ed, variant), ensure_ascii=False)),
            "archive": "\n".join(b.decode("utf-8", "replace") for p, b in site.items()
                                  if p.endswith((".html", ".xml", ".json")))}


def test_every_medium_shows_the_link_table_defanged_and_keeps_the_repos_own_links() -> None:
    ed, variant = _table_edition()
    for medium, shown in _media(ed, variant).items():
        for written, defanged in LINK_TABLE:
            if written == defanged:
                assert written in shown, (medium, written)
                continue
            host = host_of(written) or written.split("://")[-1].split("/")[0]
            # The defanged form is shown (HTML escapes the query's &); the live host never is, as a link.
            assert defanged.split("?")[0] in shown, (medium, written)
            assert f"{host}/" not in shown.replace("github.com/vllm-project/vllm/", "") or host == "github.com", \
                (medium, written)
            assert f'href="{written}' not in shown and f"<{written}" not in shown, (medium, written)


def test_the_editor_is_warned_about_each_kind_of_link() -> None:
    for written, shown in LINK_TABLE:
        e = entry(1, ["docs"]).model_copy(update={"rationale": f"See {written}."})
        (flagged,) = flag_foreign_links([e], repo=REPO)
        assert flagged.needs_editing == (written != shown), written
        if written != shown:
            assert "not a PR, issue or commit of the repo" in flagged.warnings[-1]


# --- judged as a browser opens them: resolved paths, hosts as DNS sees them (issue 30) ---------------------

@pytest.mark.parametrize("url", [
    "https://github.com/vllm-project/vllm/pull/1/../../../login/device",
    "https://github.com/vllm-project/vllm/pull/1/%2e%2e/%2E%2E/%2e%2e/login/device",
    "https://github.com/vllm-project/vllm/pull/1/.%2e/.%2E/..%2f../login/device",
    "https://github.com/vllm-project/vllm/pull/1/..\\..\\..\\login/device",
    "https://github.com/other/repo/pull/1/../../../vllm-project/vllm/pull/2/../../../../login",
    "https://github.com/vllm-project/vllm/commit/abcdef1/../../../../settings/tokens",
])
def test_a_path_that_climbs_out_of_a_pr_is_the_page_it_lands_on(url: str) -> None:
    assert not is_allowed(url) and foreign_urls(url) == [url]
    assert defang(url).startswith("hxxps://github[.]com/")
    assert pr_url(url) is None


def test_dot_segments_that_stay_inside_the_repo_are_judged_by_where_they_land() -> None:
    assert is_allowed("https://github.com/vllm-project/vllm/pull/1/./files", repo="vllm-project/vllm")
    assert not is_allowed("https://github.com/vllm-project/vllm/pull/1/../../../x/y/pull/2",
                          repo="vllm-project/vllm")
    assert resolved_path("/o/r/pull/1/../../../../login/device") == "/login/device"
    assert resolved_path("/o/r/pull/1/../../../login/device") == "/o/login/device"
    assert resolved_path("/a/b/..") == "/a/" and resolved_path("/../a") == "/a"
    # an href is only ever the path itself: written with dot segments, it is not made a link
    assert pr_url("https://github.com/o/r/pull/1/./") is None and pr_url("https://github.com/o/r/pull/1")


@pytest.mark.parametrize(("text", "shown"), [
    # Cyrillic і (U+0456) in "github": another host, with or without a scheme, shown by its punycode
    ("https://g\u0456thub.com/vllm-project/vllm/pull/1", "hxxps://xn--gthub-n2e[.]com/vllm-project/vllm/pull/1"),
    ("see g\u0456thub.com/login/device now", "see xn--gthub-n2e[.]com/login/device now"),
    ("sign in at g\u0456thub.com", "sign in at xn--gthub-n2e[.]com"),
    # Greek ο (U+03BF) and a Latin look-alike of the whole name
    ("https://github.c\u03bfm/o/r/pull/1", "hxxps://github[.]xn--cm-jbc/o/r/pull/1"),
    # a Chinese sentence runs into the URL: still found, the sentence kept
    ("详见https://evil.example/x。", "详见hxxps://evil[.]example/x。"),
    ("参见evil.example/login", "参见evil[.]example/login"),
])
def test_look_alike_hosts_are_found_and_shown_as_what_they_are(text: str, shown: str) -> None:
    assert defang(text) == shown
    assert foreign_urls(text) and not any(is_allowed(u) for u in foreign_urls(text))


def test_a_look_alike_host_is_named_for_the_editor_by_its_punycode() -> None:
    bad = entry(3, ["docs"]).model_copy(update={"rationale": "Log in at https://g\u0456thub.com/login."})
    (flagged,) = flag_foreign_links([bad])
    assert flagged.needs_editing and "xn--gthub-n2e.com (written g\u0456thub.com)" in flagged.warnings[-1]
    assert ascii_host("g\u0456thub.com") == "xn--gthub-n2e.com" and ascii_host("github.com") == "github.com"


def test_non_ascii_and_fullwidth_hosts_are_never_live_links() -> None:
    for url in ("https://\uff47ithub.com/o/r/pull/1", "https://github\u3002com/o/r/pull/1",
                "https://g\u0456thub.com/o/r/pull/1"):
        assert not is_allowed(url) and pr_url(url) is None
