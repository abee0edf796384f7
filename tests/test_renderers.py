"""Email (real MJML), Slack (real slack_sdk models) and plain text rendered from realistic editions."""

from __future__ import annotations

import json
from dataclasses import replace
from html.parser import HTMLParser

import pytest
from markupsafe import Markup
from slack_sdk.models.blocks import Block

from prdigest.connect.variants import Filter, Variant, ordered
from prdigest.kernel.errors import RenderError
from prdigest.kernel.models import SUBSYSTEMS, Edition, Entry, Verdict
from renderers import THREAD_KEY, RenderProblem, render_email, render_slack, render_text
from renderers.email import BUDGET, _fragments, _mjml, compile_isolating
from renderers.escape import display_width, html_prose
from renderers.text import view
from tests.factories import WEEK, edition, entry

GMAIL_CLIP = 102_000


# --- realistic editions from the sample week ------------------------------------------------------------

def sample_entries(records: list[dict], n: int) -> list[Entry]:
    """``n`` entries drafted from the sample week (cycled, with fresh PR numbers past the first 58)."""
    entries = []
    for i in range(n):
        r = records[i % len(records)]
        number = r["number"] + 100_000 * (i // len(records))
        lines = [line.strip() for line in r["body"].splitlines() if line.strip()]
        entries.append(Entry(
            number=number, url=f"https://github.com/vllm-project/vllm/pull/{number}", title=r["title"],
            author=r["author"], merged_at=r["merged_at"], subsystems=r["gold"]["subsystems"],
            verdict=Verdict(r["gold"]["verdict"]), headline=r["title"],
            rationale=r["gold"]["why"] + "\n\n" + " ".join(lines[:4]),
            focus=lines[4:7], followups=lines[7:8], additions=r["additions"], deletions=r["deletions"],
            files_changed=len(r["files"]), status="approved",
        ))
    return entries


def sample_edition(records: list[dict], n: int, language: str = "zh-CN",
                   flt: Filter = Filter()) -> tuple[Edition, Variant]:
    entries = sample_entries(records, n)
    ed = edition(entries, language)
    return ed, Variant(flt, ordered([e for e in entries if flt.selects(e)]))


def huge_edition(n: int = 150) -> tuple[Edition, Variant]:
    """PRs at GitHub's limits: 3,000 files, every subsystem, long text everywhere."""
    entries = [
        entry(n_, list(SUBSYSTEMS), ["deep-read", "skim", "skip"][n_ % 3],
              title="T" * 300 + " & <x>" * 50).model_copy(update={
                  "headline": "标题 & <b>" * 60, "rationale": "原因 & *x* " * 2_000,
                  "focus": ["看 `a_b` & <c> " * 100] * 8, "followups": ["跟进 & " * 300] * 8,
                  "files_changed": 3_000, "additions": 1_500_000, "deletions": 900_000,
                  "author": "a" * 100})
        for n_ in range(1, n + 1)
    ]
    return edition(entries), Variant(Filter(), ordered(entries))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.hrefs: list[str] = []
        self.seen: set[str] = set()

    VOID = {"meta", "br", "img", "hr", "link", "input"}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.seen.add(tag)
        self.hrefs += [v or "" for k, v in attrs if k == "href"]
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()


def parse(html: str) -> _Tags:
    tags = _Tags()
    tags.feed(html)
    tags.close()
    return tags


# --- email ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_email_is_well_formed_html_without_mjml_or_external_fonts(sample_records, language) -> None:
    ed, var = sample_edition(sample_records, 12, language)
    email = render_email(ed, var)
    tags = parse(email.html)
    assert tags.errors == [] and tags.stack == []  # every element closed, properly nested
    assert "<mj-" not in email.html
    assert f'<html lang="{language}"' in email.html
    assert f"<title>{email.subject}</title>" in email.html
    assert '<meta name="color-scheme" content="light dark"' in email.html
    assert "prefers-color-scheme:dark" in email.html
    assert "googleapis" not in email.html and "<link" not in email.html
    assert email.preheader and email.preheader in email.html
    assert email.compact is False and email.problems == []


@pytest.mark.parametrize("n", [12, 58, 150])
@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_every_pr_appears_exactly_once_in_every_medium(sample_records, n, language) -> None:
    ed, var = sample_edition(sample_records, n, language)
    email = render_email(ed, var)
    slack = json.dumps(render_slack(ed, var), ensure_ascii=False)
    text = render_text(ed, var)
    hrefs = parse(email.html).hrefs
    for e in var.entries:
        assert hrefs.count(e.url) == 1, e.number
        assert email.text.count(e.url) == 1 and text.count(e.url) == 1, e.number
        assert slack.count(f"<{e.url}|#{e.number}>") == 1, e.number
    assert len(hrefs) == len(var.entries)


def test_entries_are_grouped_by_verdict_in_the_variants_order(sample_records) -> None:
    ed, var = sample_edition(sample_records, 58)
    expected = [e.url for v in (Verdict.DEEP_READ, Verdict.SKIM, Verdict.SKIP)
                for e in var.entries if e.verdict is v]
    assert expected == [e.url for e in var.entries]  # ordered() already puts deep-read first
    assert parse(render_email(ed, var).html).hrefs == expected
    text = render_text(ed, var)
    assert sorted(expected, key=text.index) == expected
    slack = json.dumps(render_slack(ed, var))
    assert sorted(expected, key=slack.index) == expected


def test_a_150_entry_email_stays_under_gmails_clip_and_says_it_is_compact(sample_records) -> None:
    ed, var = sample_edition(sample_records, 150)
    email = render_email(ed, var)
    assert email.size <= BUDGET < GMAIL_CLIP
    assert email.compact is True
    assert "为避免邮件被截断" in email.html
    deep = [e for e in var.entries if e.verdict is Verdict.DEEP_READ]
    skip = [e for e in var.entries if e.verdict is Verdict.SKIP]
    first = view(deep[0], "zh-CN")
    assert first.rationale[0] in email.html.replace("&#39;", "'")  # the first deep read is in full
    assert view(skip[0], "zh-CN").rationale[0] not in email.html  # skips are one line each
    assert email.text.count("https://github.com/") == 150  # the text part is always complete


def test_a_small_email_shows_every_entry_in_full(sample_records) -> None:
    ed, var = sample_edition(sample_records, 12, "en")
    email = render_email(ed, var)
    assert email.compact is False and "clipped" not in email.html
    for e in var.entries:
        assert str(html_prose(view(e, "en").headline)) in email.html  # code spans as <code>


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_a_300_entry_email_keeps_every_entry_as_one_line(sample_records) -> None:
    ed, var = sample_edition(sample_records, 300)
    email = render_email(ed, var)
    assert email.compact is True
    assert len(parse(email.html).hrefs) == 300


@pytest.mark.parametrize("language,words", [
    ("zh-CN", ["PR 周报", "篇值得精读"]),
    ("en", ["PR digest", "deep reads"]),
])
def test_subject_names_repo_week_and_deep_read_count(sample_records, language, words) -> None:
    ed, var = sample_edition(sample_records, 58, language)
    deep = sum(e.verdict is Verdict.DEEP_READ for e in var.entries)
    subject = render_email(ed, var).subject
    assert "vllm-project/vllm" in subject and ed.week in subject and ed.week == "2026-W47"
    assert f"{deep} " in subject and all(w in subject for w in words)
    assert len(subject.splitlines()) == 1 and len(subject) <= 150


@pytest.mark.parametrize("language,labels", [
    ("zh-CN", ["重点看", "后续", "值得精读", "订阅：kernels"]),
    ("en", ["What to look at", "Follow-ups", "Deep read", "Following: kernels"]),
])
def test_ui_strings_follow_the_editions_language(sample_records, language, labels) -> None:
    flt = Filter(subsystems=frozenset({"kernels"}))
    ed, var = sample_edition(sample_records, 58, language, flt)
    email = render_email(ed, var)
    text = render_text(ed, var)
    slack_parent = json.dumps(render_slack(ed, var)[0], ensure_ascii=False)
    for label in labels:
        assert label in email.html and label in text
    assert flt.describe(language) in slack_parent


def test_an_entry_that_mjml_refuses_is_left_out_and_reported(sample_records) -> None:
    ed, var = sample_edition(sample_records, 6, "en")
    views = [view(e, "en") for e in var.entries]
    frags = _fragments(views, "en")
    broken = views[2].number
    frags[2] = replace(frags[2], full=Markup("<div>a < b</div>"))  # a bare "<": MJML cannot parse it

    def build(fs):
        return _mjml(ed, var, "subject", "preheader", fs, lambda e: True, [])

    html, kept, problems = compile_isolating(build, frags)
    assert [p.number for p in problems] == [broken] and "MJML" in problems[0].error
    assert (problems[0].medium, problems[0].variant) == ("email", "")  # render_email names its variant
    assert len(kept) == 5 and f"/pull/{broken}" not in html
    assert all(f"/pull/{v.number}" in html for v in views if v.number != broken)


def test_a_template_fault_is_a_render_error_not_a_silent_gap(sample_records) -> None:
    ed, var = sample_edition(sample_records, 3)
    frags = _fragments([view(e, "zh-CN") for e in var.entries], "zh-CN")
    with pytest.raises(RenderError, match="template"):
        compile_isolating(lambda fs: "<mjml><mj-body>", frags)


@pytest.mark.parametrize("language", ["en", "zh-CN"])
@pytest.mark.parametrize("n, budget", [(6, BUDGET), (58, BUDGET), (150, BUDGET), (58, 40_000), (58, 25_000),
                                       (150, 20_000)])
def test_an_email_assembled_from_its_compiled_entries_is_the_whole_document_compiled(
        sample_records, language, n, budget) -> None:
    # Each entry is compiled once per render step and the variant's document around marks in their place: the
    # bytes must be those of compiling the whole document, in full, compact, with some deep reads or none.
    from renderers.shared import sharing

    store: dict = {}
    for flt in (Filter(), Filter(subsystems=frozenset({"kernels", "core"})), Filter(min_verdict=Verdict.SKIM)):
        ed, var = sample_edition(sample_records, n, language, flt)
        kwargs = {"budget": budget, "site_url": "https://digest.example.com/", "reader_links": ("unsubscribe",)}
        with sharing(store):  # entries shared between the variants, as in a render step
            assembled = render_email(ed, var, **kwargs)
        whole = render_email(ed, var, whole=True, **kwargs)
        assert assembled.html == whole.html and assembled.compact == whole.compact
        assert not assembled.problems


def test_hostile_text_assembles_to_the_same_bytes_as_the_whole_compile() -> None:
    ed, var = huge_edition(40)
    for budget in (BUDGET, 400_000):
        assert render_email(ed, var, budget=budget).html == render_email(ed, var, budget=budget, whole=True).html


def test_render_problem_reads_as_one_line() -> None:
    assert str(RenderProblem(5, "email", "all", "boom")) == "PR #5 could not be rendered for email (all): boom"


# --- Slack -------------------------------------------------------------------------------------------------

def _check_slack_limits(payloads: list[dict]) -> None:
    assert payloads and THREAD_KEY not in payloads[0]
    for i, payload in enumerate(payloads):
        assert "channel" not in payload and payload["text"]
        assert payload["unfurl_links"] is False and payload["unfurl_media"] is False
        assert (payload.get(THREAD_KEY) is True) == (i > 0)
        assert 1 <= len(payload["blocks"]) <= 50
        for raw in payload["blocks"]:
            block = Block.parse(raw)
            assert block.to_dict() == raw  # slack_sdk validates lengths and counts here
            if raw["type"] == "section":
                assert len(raw["text"]["text"]) <= 3000 and raw["text"]["verbatim"] is True
            if raw["type"] == "header":
                assert raw["text"]["type"] == "plain_text" and len(raw["text"]["text"]) <= 150
            if raw["type"] == "context":
                assert len(raw["elements"]) <= 10
                assert all(len(el["text"]) <= 3000 for el in raw["elements"])


def test_slack_respects_limits_for_150_entries(sample_records) -> None:
    ed, var = sample_edition(sample_records, 150)
    payloads = render_slack(ed, var)
    _check_slack_limits(payloads)
    assert len(payloads) >= 1 + 150 * 2 // 50


@pytest.mark.slow  # among the slowest (pytest --durations)
def test_slack_respects_limits_for_3000_file_prs_with_text_at_every_limit() -> None:
    ed, var = huge_edition()
    payloads = render_slack(ed, var)
    _check_slack_limits(payloads)
    blob = json.dumps(payloads, ensure_ascii=False)
    assert all(f"/pull/{e.number}|#{e.number}>" in blob for e in var.entries)
    assert "3,000 个文件" in blob


def test_slack_parent_summarises_the_variant_and_threads_the_entries(sample_records) -> None:
    flt = Filter(subsystems=frozenset({"kernels", "moe"}), min_verdict=Verdict.SKIM)
    ed, var = sample_edition(sample_records, 58, "en", flt)
    payloads = render_slack(ed, var)
    parent = json.dumps(payloads[0], ensure_ascii=False)
    assert "vllm-project/vllm" in parent and "2026-W47" in parent and flt.describe("en") in parent
    for verdict in (Verdict.DEEP_READ, Verdict.SKIM):
        n = sum(e.verdict is verdict for e in var.entries)
        assert f"{verdict.label('en')} *{n}*" in parent
    assert "/pull/" not in parent  # entries live in the thread only
    headers = [b["text"]["text"] for p in payloads[1:] for b in p["blocks"] if b["type"] == "header"]
    assert headers[0].startswith("\U0001f7e2 Deep read")
    assert all(p["blocks"][0]["type"] == "header" for p in payloads[1:])  # each reply says what it holds


def test_a_group_spanning_messages_is_marked_continued() -> None:
    entries = [entry(n, ["kernels"], "deep-read") for n in range(1, 60)]
    payloads = render_slack(edition(entries, "en"), Variant(Filter(), entries))
    headers = [p["blocks"][0]["text"]["text"] for p in payloads[1:]]
    assert "(continued)" not in headers[0] and all("(continued)" in h for h in headers[1:])


# --- plain text ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("language", ["zh-CN", "en"])
def test_plain_text_wraps_at_78_columns_and_keeps_urls_whole(sample_records, language) -> None:
    ed, var = sample_edition(sample_records, 58, language)
    text = render_text(ed, var)
    for line in text.splitlines():
        if display_width(line) > 78:
            # only an unbreakable token may overflow (a URL, a long identifier), and then it is alone
            assert len(line.split()) <= 2 or any(display_width(w) > 40 for w in line.split()), line
    for e in var.entries:
        assert f"  {e.url}\n" in text


def test_plain_text_layout_reads_like_the_digest() -> None:
    e = entry(42, ["kernels", "moe"], "deep-read").model_copy(update={
        "headline": "MoE 对齐内核并行化", "rationale": "值得精读。看模板参数。", "focus": ["一", "二"],
        "followups": ["跑 benchmark"], "additions": 1200, "deletions": 30, "files_changed": 4})
    text = render_text(edition([e]), Variant(Filter(), [e]))
    assert "[值得精读] MoE 对齐内核并行化\n  #42 PR 42\n  https://github.com/vllm-project/vllm/pull/42\n" in text
    assert "@alice · +1,200 / −30 · 4 个文件 · kernels, moe" in text
    assert "  重点看：\n  1. 一\n  2. 二\n" in text and "  后续：\n  - 跑 benchmark\n" in text


def test_an_empty_variant_still_renders() -> None:
    ed = Edition(repo="vllm-project/vllm", since=WEEK, until=WEEK, generated_at=WEEK)
    var = Variant(Filter(), [])
    assert render_email(ed, var).compact is False
    assert len(render_slack(ed, var)) == 1
    assert "vllm-project/vllm" in render_text(ed, var)


@pytest.mark.parametrize(("api_url", "hosts"), [
    ("https://api.github.com", ("github.com",)),
    ("https://ghe.example.com/api/v3", ("github.com", "ghe.example.com")),
    ("http://127.0.0.1:8080", ("github.com", "127.0.0.1")),
])
def test_enterprise_pr_links_follow_the_github_url(api_url: str, hosts: tuple[str, ...]) -> None:
    from prdigest.connect.variants import plan_variants
    from prdigest.deliver.media import RenderContext, link_hosts_for
    from prdigest.readers.file import Reader
    from renderers.bundle import email_rendering, slack_rendering

    assert link_hosts_for(api_url) == hosts
    ghe = edition([entry(7, ["moe"]).model_copy(update={"url": "https://ghe.example.com/acme/widgets/pull/7"})])
    (variant,), _ = plan_variants(ghe, [Reader(id="a", name="A", email="a@example.com")])
    ghe_context = RenderContext(link_hosts_for("https://ghe.example.com/api/v3"))
    linked = email_rendering(ghe, variant, ghe_context)
    plain = email_rendering(ghe, variant, RenderContext())
    assert 'href="https://ghe.example.com/acme/widgets/pull/7"' in linked.payload.html
    assert 'href="https://ghe.example.com' not in plain.payload.html
    # Slack gets the same hosts through the same context.
    slack_linked = json.dumps(slack_rendering(ghe, variant, ghe_context).payload)
    slack_plain = json.dumps(slack_rendering(ghe, variant, RenderContext()).payload)
    assert "<https://ghe.example.com/acme/widgets/pull/7|#7>" in slack_linked and "<https://ghe" not in slack_plain


def test_the_email_body_follows_the_read_first_order_under_each_verdict() -> None:
    """The read-first list named #30, #10, #20 (best first) at the top; the body below showed them by subsystem
    and number (#10, #20, #30), so the first read was the last one met. HTML and text alike."""
    entries = [entry(n, ["kernels"], "deep-read") for n in (10, 20, 30, 40)] + [entry(50, ["docs"], "skim"),
                                                                              entry(60, ["docs"], "skim")]
    by = {e.number: e for e in entries}
    variant = Variant(Filter(), ordered(entries), read_first=[by[30], by[10], by[60], by[20]])
    email = render_email(edition(entries, "en"), variant)

    def body_order(text: str, marker: str) -> list[int]:
        found = {n: text.rfind(marker.format(n)) for n in by}  # the last mention: the entry, past the top list
        return sorted(by, key=lambda n: found[n])

    assert body_order(email.html, "/pull/{}\"") == [30, 10, 20, 40, 60, 50]
    assert body_order(email.text, "/pull/{}") == [30, 10, 20, 40, 60, 50]
    assert [e.number for e in variant.entries] == [10, 20, 30, 40, 50, 60]  # the variant itself is left as is
