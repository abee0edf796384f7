"""Hostile PR text through every medium: nothing injected survives as markup, a ping, a link or a style."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.kernel.models import Entry
from renderers import THREAD_KEY, render_email, render_slack, render_text
from renderers.escape import clean, html_prose, mrkdwn, mrkdwn_prose, one_line, pr_url
from tests.factories import edition, entry

# --- the hostile table ------------------------------------------------------------------------------

HOSTILE: list[tuple[str, str]] = [
    ("script", "<script>alert(1)</script>"),
    ("img-onerror", "<img src=x onerror=alert(1)>"),
    ("mjml-breakout", "</mj-text><mj-raw><script>alert(1)</script></mj-raw><mj-text>"),
    ("attr-breakout", 'x" onmouseover="alert(1)" y=\''),
    ("channel", "<!channel> wake up"),
    ("here", "<!here>"),
    ("bare-here", "@here @channel @everyone"),
    ("user-ping", "<@U123> look"),
    ("subteam", "<!subteam^S1|@team>"),
    ("everyone", "<!everyone>"),
    ("slack-link", "<https://evil.example|click me>"),
    ("bold", "*bold* _italic_ ~strike~ `code` ```block```"),
    ("quote", "> quoted\n> more"),
    ("entity", "&amp; &lt;b&gt; &#x3C;script&#x3E;"),
    ("crlf", "Title\r\nBcc: victim@example.com\rX"),
    ("controls", "a\x00b\x07c\x1bd\x7fe\x85f"),
    ("surrogate", "lone \ud800 surrogate \udfff"),
    ("rtl", "abc\u202egnp.exe\u202c \u2066iso\u2069"),
    ("unicode-lines", "one\u2028two\u2029three\x1cfour"),
    ("chinese-emoji", "修复 MoE 对齐内核 🚀 中文标题"),
    ("javascript-url", "javascript:alert(1)"),
    ("empty", ""),
    ("huge", "<b>x</b> & " * 20_000),  # ~200 KB
]
FIELDS = ["title", "headline", "rationale", "focus", "followups", "author"]


def hostile_entry(field: str, value: str, number: int = 4242) -> Entry:
    extra: dict[str, object] = {}
    if field in ("focus", "followups"):
        extra[field] = [value, f"{value} again"]
    elif field != "title":
        extra[field] = value
    base = entry(number, ["kernels"], "deep-read", title=value if field == "title" else None)
    return base.model_copy(update=extra)


def variant_of(entries: list[Entry]) -> Variant:
    return Variant(Filter(), ordered(entries))


# --- inspecting output -------------------------------------------------------------------------------

class _Html(HTMLParser):
    """Every element, attribute and href in an HTML document (comments, e.g. Outlook's, are skipped)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str, str | None]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(tag, name, value) for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse_html(html: str) -> _Html:
    parser = _Html()
    parser.feed(html)
    parser.close()
    return parser


ALLOWED_TAGS = {"html", "head", "title", "meta", "style", "body", "div", "table", "tbody", "tr", "td",
                "p", "span", "a", "br", "ol", "ul", "li", "code", "xml", "noscript"}
GITHUB_PR = re.compile(r"^https://github\.com/[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*/pull/\d+$")
BAD_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def assert_safe_html(html: str) -> None:
    html.encode("utf-8")  # no lone surrogate survived
    assert "<mj-" not in html and "</mj-" not in html
    doc = parse_html(html)
    assert set(doc.tags) <= ALLOWED_TAGS, set(doc.tags) - ALLOWED_TAGS
    for tag, name, value in doc.attrs:
        assert not name.startswith("on"), (tag, name, value)
        assert name not in {"src", "srcset", "action", "formaction", "background", "ping"}, (tag, name)
        if name == "href":
            assert GITHUB_PR.match(value or ""), value
        assert "javascript:" not in (value or "").lower(), (tag, name, value)
    assert not BAD_CHARS.search(html.replace("\n", " "))


def slack_texts(payloads: list[dict]) -> list[tuple[str, str]]:
    """(type, text) of every text object in the payloads, plus each fallback ``text``."""
    found: list[tuple[str, str]] = []

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if node.get("type") in ("mrkdwn", "plain_text") and isinstance(node.get("text"), str):
                found.append((node["type"], node["text"]))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for payload in payloads:
        found.append(("fallback", payload["text"]))
        walk(payload["blocks"])
    return found


OUR_LINK = re.compile(r"<https://github\.com/[\w.-]+/[\w.-]+/pull/\d+\|#\d+>")
OUR_BOLD_LINE = re.compile(r"^\*[^*\n]+\*$", re.MULTILINE)
OUR_BOLD_COUNT = re.compile(r" \*\d+\*")
#: A Slack code span: its text is never formatted, and the checks above already found no <, > or bare &
#: in it, so it can neither ping nor link.
OUR_CODE = re.compile(r"`[^`\n]+`")


def assert_safe_slack(payloads: list[dict]) -> None:
    json.dumps(payloads, ensure_ascii=False).encode("utf-8")
    for payload in payloads:
        assert not {"link_names", "parse", "channel", "mrkdwn"} & payload.keys()
        assert payload["unfurl_links"] is False and payload["unfurl_media"] is False
    for kind, text in slack_texts(payloads):
        assert not BAD_CHARS.search(text.replace("\n", " ")), text[:200]
        if kind == "plain_text":
            continue  # headers: never parsed for mentions, links or formatting
        rest = OUR_LINK.sub("", text)
        assert "<" not in rest and ">" not in rest, rest[:300]  # no mention, ping or link of theirs
        assert not re.search(r"&(?!amp;|lt;|gt;)", rest), rest[:300]  # every & is an entity we wrote
        rest = OUR_BOLD_COUNT.sub("", OUR_BOLD_LINE.sub("", OUR_CODE.sub("", rest)))
        assert not re.search(r"[*~`]", rest), rest[:300]  # no formatting of theirs
        assert not re.search(r"(?<![^\W_])_|_(?![^\W_])", rest), rest[:300]


def assert_safe_text(text: str) -> None:
    text.encode("utf-8")
    assert not BAD_CHARS.search(text.replace("\n", " "))


# --- the table through every medium ------------------------------------------------------------------

@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("name,value", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_text_is_inert_in_every_medium(field: str, name: str, value: str) -> None:
    bad = hostile_entry(field, value)
    ok = entry(7, ["moe"], "skim")
    ed = edition([bad, ok])
    var = variant_of([bad, ok])

    email = render_email(ed, var)
    assert email.problems == []  # escaped text always compiles: nothing left out
    assert_safe_html(email.html)
    assert_safe_text(email.text)
    assert "\n" not in email.subject and "\r" not in email.subject and len(email.subject.splitlines()) == 1
    assert email.size < 102_000
    for number in (4242, 7):
        assert len(re.findall(rf"#{number}\b", email.html)) == 1
        assert len(re.findall(rf"#{number}\b", email.text)) == 1

    slack = render_slack(ed, var)
    assert_safe_slack(slack)
    blob = json.dumps(slack, ensure_ascii=False)
    for number in (4242, 7):
        assert blob.count(f"/pull/{number}|#{number}>") == 1

    assert_safe_text(render_text(ed, var))


@pytest.mark.parametrize("value", ["<script>alert(1)</script>", "<!channel>", "*bold*", "`code` *x*"])
def test_hostile_markup_is_shown_as_text_not_lost(value: str) -> None:
    ed = edition([hostile_entry("headline", value)])
    var = variant_of(ed.entries)
    email = render_email(ed, var)
    shown = value.replace("`code`", "code")  # a code span is shown as code (its text, in <code>)
    assert shown in "".join(parse_html(email.html).text)  # escaped, so the reader sees it literally
    assert value in render_text(ed, var)


# --- code spans: code in every medium, and still inert ----------------------------------------------------

CODE_CASES = [
    # (drafted text, the email's HTML, the Slack mrkdwn)
    ("Look at `vllm/v1/core/sched/scheduler.py` now", "Look at <code>vllm/v1/core/sched/scheduler.py</code> now",
     "Look at `vllm/v1/core/sched/scheduler.py` now"),
    ("`test_preemption.py` and __init__", "<code>test_preemption.py</code> and __init__",
     "`test_preemption.py` and \u02cd\u02cdinit\u02cd\u02cd"),
    ("`<!channel>` & `a*b*`", "<code>&lt;!channel&gt;</code> &amp; <code>a*b*</code>",
     "`&lt;!channel&gt;` &amp; `a*b*`"),
    ("one ` tick *x*", "one ` tick *x*", "one \u02cb tick \u2217x\u2217"),
    ("```block```", "``<code>block</code>``", "\u02cb\u02cb`block`\u02cb\u02cb"),
    ("改 `hf_text_config`（+111/−74）", "改 <code>hf_text_config</code>（+111/−74）", "改 `hf_text_config`（+111/−74）"),
]


@pytest.mark.parametrize(("text", "html", "slack"), CODE_CASES)
def test_code_spans_are_code_in_email_and_slack(text: str, html: str, slack: str) -> None:
    assert str(html_prose(text)) == html
    assert mrkdwn_prose(text) == slack


def test_headlines_and_bodies_show_code_in_every_medium() -> None:
    e = entry(5, ["kernels"], "deep-read").model_copy(update={
        "headline": "Look at `vllm/v1/core/sched/scheduler.py`", "rationale": "Moves `a_b` to `c_d`.",
        "focus": ["`test_preemption.py` covers it"], "followups": ["Port `x_y` too"]})
    ed = edition([e], language="en")
    var = variant_of([e])
    email = render_email(ed, var)
    for code in ("vllm/v1/core/sched/scheduler.py", "a_b", "c_d", "test_preemption.py", "x_y"):
        assert f"<code>{code}</code>" in email.html
    assert "`" not in "".join(parse_html(email.html).text)  # no raw backtick left in what readers see
    assert "`" not in email.preheader and "scheduler.py" in email.preheader
    slack = json.dumps(render_slack(ed, var), ensure_ascii=False)
    for code in ("vllm/v1/core/sched/scheduler.py", "a_b", "c_d", "test_preemption.py", "x_y"):
        assert f"`{code}`" in slack
    assert "\u02cb" not in slack  # no look-alike backticks
    text = render_text(ed, var)
    assert "`vllm/v1/core/sched/scheduler.py`" in text and "\\" not in text  # plain, no escapes


def test_javascript_url_never_becomes_a_link() -> None:
    bad = entry(9, ["kernels"], "deep-read").model_copy(update={"url": "javascript:alert(1)"})
    ed = edition([bad])
    var = variant_of([bad])
    email = render_email(ed, var)
    assert not [a for a in parse_html(email.html).attrs if a[1] == "href"]
    assert "#9" in email.html and "javascript" not in email.html
    assert "javascript" not in email.text
    slack = json.dumps(render_slack(ed, var))
    assert "javascript" not in slack and "#9" in slack and "<https" not in slack


def test_subject_stays_one_line_with_hostile_repo_and_entries() -> None:
    bad = hostile_entry("title", "x\r\nBcc: a@b.c")
    ed = edition([bad]).model_copy(update={"repo": "evil/\r\nBcc: x@y.z\u2028repo"})
    email = render_email(ed, variant_of([bad]))
    assert len(email.subject.splitlines()) == 1 and "\r" not in email.subject and "\n" not in email.subject
    assert len(email.subject) <= 150
    assert len(email.preheader.splitlines()) == 1


def test_huge_rationale_is_capped_everywhere() -> None:
    big = entry(5, ["kernels"], "deep-read").model_copy(update={"rationale": "长" * 200_000,
                                                                   "focus": ["f" * 50_000] * 20})
    ed = edition([big])
    var = variant_of([big])
    email = render_email(ed, var)
    assert email.size < 40_000 and len(email.text) < 40_000
    for payload in render_slack(ed, var):
        for block in payload["blocks"]:
            if block["type"] == "section":
                assert len(block["text"]["text"]) <= 3000


def test_chinese_and_emoji_survive_every_medium() -> None:
    e = hostile_entry("headline", "修复 MoE 对齐内核 🚀")
    ed = edition([e])
    var = variant_of([e])
    assert "修复 MoE 对齐内核 🚀" in render_email(ed, var).html
    assert "修复 MoE 对齐内核 🚀" in render_text(ed, var)
    assert "修复 MoE 对齐内核 🚀" in json.dumps(render_slack(ed, var), ensure_ascii=False)


def test_missing_author_and_empty_title_get_fallbacks() -> None:
    e = entry(11, ["docs"], "skip", title="").model_copy(update={"author": "", "headline": ""})
    ed = edition([e])
    var = variant_of([e])
    text = render_text(ed, var)
    assert "@ghost" in text and "（无标题）" in text
    assert "@ghost" in render_email(ed, var).html


def test_slack_replies_are_marked_for_threading() -> None:
    entries = [entry(n, ["kernels"], "skim") for n in range(1, 40)]
    payloads = render_slack(edition(entries), variant_of(entries))
    assert THREAD_KEY not in payloads[0]
    assert all(p[THREAD_KEY] is True for p in payloads[1:]) and len(payloads) >= 3


# --- the escape functions themselves -------------------------------------------------------------------

@pytest.mark.parametrize("raw,expected", [
    ("<!channel>", "&lt;!channel&gt;"),
    ("<@U123>", "&lt;@U123&gt;"),
    ("a & b", "a &amp; b"),
    ("&amp;", "&amp;amp;"),
    ("*bold*", "\u2217bold\u2217"),
    ("~s~", "\u223cs\u223c"),
    ("`c`", "\u02cbc\u02cb"),
    ("_it_", "\u02cdit\u02cd"),
    ("hf_text_config", "hf_text_config"),
    ("__init__", "\u02cd\u02cdinit\u02cd\u02cd"),
    ("> quote", "\u00ad&gt; quote"),
    ("a > b", "a &gt; b"),
    ("@here", "@here"),
    ("中文 🚀", "中文 🚀"),
])
def test_mrkdwn_escaping(raw: str, expected: str) -> None:
    assert mrkdwn(raw) == expected


@pytest.mark.parametrize("url,number,ok", [
    ("https://github.com/vllm-project/vllm/pull/123", 123, True),
    ("https://github.com/vllm-project/vllm/pull/123", None, True),
    ("https://github.com/vllm-project/vllm/pull/123", 124, False),
    ("http://github.com/vllm-project/vllm/pull/123", 123, False),
    ("javascript:alert(1)", None, False),
    ("JAVASCRIPT:alert(1)//https://github.com/a/b/pull/1", None, False),
    ("https://github.com.evil.com/a/b/pull/1", 1, False),
    ("https://evil.com/github.com/a/b/pull/1", 1, False),
    ("https://github.com/a/b/pull/1?x=1", 1, False),
    ("https://github.com/a/b/pull/1#frag", 1, False),
    ("https://github.com/a/b/issues/1", 1, False),
    ("https://user:pw@github.com/a/b/pull/1", 1, False),
    ("https://github.com:8443/a/b/pull/1", 1, False),
    ('https://github.com/a/b/pull/1" onmouseover="x', 1, False),
    ("https://github.com/a/b/pull/1|label", 1, False),
    ("https://gіthub.com/a/b/pull/1", 1, False),  # Cyrillic і
    ("//github.com/a/b/pull/1", 1, False),
    (" https://github.com/a/b/pull/1", 1, False),
    ("https://github.com/../b/pull/1", 1, False),
    ("https://github.example.com/a/b/pull/1", 1, False),
    ("", None, False),
])
def test_pr_url_accepts_only_github_pull_request_links(url: str, number: int | None, ok: bool) -> None:
    assert (pr_url(url, number) == url) is ok


def test_pr_url_accepts_an_enterprise_host_only_when_named() -> None:
    url = "https://github.example.com/a/b/pull/1"
    assert pr_url(url, 1, hosts=("github.com", "github.example.com")) == url
    e = entry(1, ["kernels"]).model_copy(update={"url": url})
    ed = edition([e])
    html = render_email(ed, variant_of([e]), link_hosts=("github.example.com",)).html
    assert f'href="{url}"' in html


def test_clean_and_one_line() -> None:
    assert clean("a\x00b\u202ec\ud800d\r\ne\rf") == "abcd\ne\nf"
    assert one_line("a\n b\u2028c\u2029d\te") == "a b c d e"  # every line break, even U+2028
    assert one_line("c\x85d") == "cd"  # C1 controls (NEL) are dropped by clean() first
    assert clean(None) == ""


def test_the_checkers_catch_what_they_look_for() -> None:
    from mjml import mjml2html

    raw = mjml2html("<mjml><mj-body><mj-raw><script>alert(1)</script></mj-raw></mj-body></mjml>", fonts={})
    for html in (raw, '<a href="javascript:alert(1)">x</a>', '<img src=x onerror="alert(1)">',
                 '<a href="https://evil.example/a/b/pull/1">x</a>'):
        with pytest.raises(AssertionError):
            assert_safe_html(html)
    for text in ("<!channel>", "<@U123>", "<https://evil.example|x>", "a *bold* b", "a `code", "```block```",
                 "`<!here>`", "a & b"):
        payload = {"text": "x", "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}],
                   "unfurl_links": False, "unfurl_media": False}
        with pytest.raises(AssertionError):
            assert_safe_slack([payload])
