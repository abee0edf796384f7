"""Text safety (prdigest/kernel/text.py), one implementation each, with a table of hostile inputs per function; and
the media's escapers agreeing with it on what a code span is."""

from __future__ import annotations

import pytest

from prdigest.kernel.text import (
    CODE_SPAN,
    clean,
    code_spans,
    for_terminal,
    one_line,
    redact_url,
    slack_entities,
    slug,
    truncate,
)
from prdigest.review.markdown import md
from renderers.escape import html_prose, mrkdwn, mrkdwn_prose

NUL, ESC, DEL, NEL, CSI = "\x00", "\x1b", "\x7f", "\x85", "\x9b"


@pytest.mark.parametrize(("text", "expected"), [
    (None, ""),
    ("", ""),
    ("plain text", "plain text"),
    ("中文 ok 😀", "中文 ok 😀"),                               # wide and astral characters are kept
    (f"a{NUL}b{ESC}[31mc{DEL}d{NEL}e{CSI}f", "ab[31mcdef"),    # C0, DEL, C1 (ESC sequences lose their ESC)
    ("tab\tand\nLF", "tab\tand\nLF"),                          # tab and LF are kept
    ("CRLF\r\nand CR\ralone", "CRLF\nand CR\nalone"),          # a lone CR would overwrite a terminal line
    ("a\u202eb\u2066c\u2069d\u202ae", "abcde"),                 # bidi overrides and isolates (Trojan Source)
    ("a\u200eb\u200fc\u061cd", "abcd"),                         # bidi marks
    ("\ufeffBOM\ufffe\uffff", "BOM"),                           # BOM and non-characters
    ("lone\ud800surrogate\udfff", "lonesurrogate"),             # would make str.encode raise
    ("\x0bvertical\x0cform", "verticalform"),
    (42, "42"),
])
def test_clean_drops_what_no_medium_can_show(text: object, expected: str) -> None:
    assert clean(text) == expected
    assert clean(clean(text)) == clean(text)  # idempotent: every layer may clean again
    clean(text).encode("utf-8")  # never raises


@pytest.mark.parametrize(("text", "expected"), [
    ("a\nb\r\nc\rd", "a b c d"),
    ("line\u2028separator\u2029para", "line separator para"),
    ("NEL\x85is a control", "NELis a control"),                # C1: dropped before folding
    ("  lots   of\t\tspace  ", "lots of space"),
    ("x\x1c\x1d\x1ey", "xy"),                                   # file/group/record separators are controls
    ("<b>\x00</b>", "<b></b>"),                                 # markup is left to the medium's escaper
])
def test_one_line_folds_every_line_break(text: str, expected: str) -> None:
    assert one_line(text) == expected


@pytest.mark.parametrize(("text", "limit", "expected"), [
    ("short", 10, "short"),
    ("exactly ten", 11, "exactly ten"),
    ("a long sentence here", 10, "a long se…"),
    ("trailing   spaces   cut", 12, "trailing…"),
    ("anything", 0, ""),
    ("anything", -5, ""),
    ("中文中文中文", 4, "中文中…"),
    ("abc", 1, "…"),
])
def test_truncate_never_exceeds_its_limit(text: str, limit: int, expected: str) -> None:
    assert truncate(text, limit) == expected and len(truncate(text, limit)) <= max(limit, 0)


@pytest.mark.parametrize(("text", "pieces"), [
    ("no code", [("no code", False)]),
    ("call `foo()` now", [("call ", False), ("foo()", True), (" now", False)]),
    ("`a` and `b`", [("a", True), (" and ", False), ("b", True)]),
    ("``", [("``", False)]),                                    # empty: not a span
    ("`one\ntwo`", [("`one\ntwo`", False)]),                    # never across a line
    ("`unclosed", [("`unclosed", False)]),
    ("`" + "x" * 201 + "`", [("`" + "x" * 201 + "`", False)]),  # too long to be code: plain text
    ("`<!channel>`", [("<!channel>", True)]),                   # the content is still untrusted
    ("``double``", [("`", False), ("double", True), ("`", False)]),  # as every medium reads it
])
def test_code_spans_split_text_as_every_medium_reads_it(text: str, pieces: list[tuple[str, bool]]) -> None:
    assert list(code_spans(text)) == pieces
    assert "".join(f"`{p}`" if code else p for p, code in code_spans(text)) == text


@pytest.mark.parametrize("text", ["use `torch.compile` *now*", "`<script>` & `a_b_c`", "x `y` z `" + "w" * 300 + "`"])
def test_every_medium_sees_the_same_code_spans(text: str) -> None:
    spans = [m.group(1) for m in CODE_SPAN.finditer(text)]
    assert str(html_prose(text)).count("<code>") == len(spans)
    slack = mrkdwn_prose(text)
    assert slack.count("`") == 2 * len(spans)
    assert md(text).count("`") - md(text).count("\\`") == 2 * len(spans)


@pytest.mark.parametrize(("text", "expected"), [
    ("<!channel> & <@U123|boss>", "&lt;!channel&gt; &amp; &lt;@U123|boss&gt;"),
    ("<https://evil.example|click>", "&lt;https://evil.example|click&gt;"),
    ("&amp;", "&amp;amp;"),                                     # already-escaped text is shown as written
    (f"ping{NUL}\u202e", "ping"),
])
def test_slack_entities_leave_no_ping_or_link(text: str, expected: str) -> None:
    assert slack_entities(text) == expected
    assert "<" not in mrkdwn(text) and "<" not in mrkdwn_prose(text)


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:s3cret@ghe.example.com/api/v3", "https://ghe.example.com/api/v3"),
    ("http://key:s3cret@127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ("http://s3cret@[::1]:9000/v1?x=1", "http://[::1]:9000/v1?x=1"),  # a token as the user name
    ("https://api.github.com", "https://api.github.com"),
    ("postgresql://digest:s3cret@db:5432/pr", "postgresql://digest:***@db:5432/pr"),
    ("postgresql://digest@db/pr", "postgresql://digest@db/pr"),     # a role name alone is no secret
    ("postgresql://u:p%40ss@h/db?PASSWORD=s3cret", "postgresql://u:***@h/db?PASSWORD=***"),
    ("https://h/v1?password=s3cret&x=1", "https://h/v1?password=***&x=1"),
    ("http://u:s3cret@[::1/broken", "http://[::1/broken"),          # unparsable for urlsplit: still dropped
    ("postgresql://u:pa#ss?@h/db", "postgresql://u:***@h/db"),        # libpq's rule: up to the last '@'
    ("postgresql://u@h/db?sslpassword=s3cret", "postgresql://u@h/db?sslpassword=***"),
    ("https://h/users/@me", "https://h/users/@me"),                 # an '@' in the path is no user info
])
def test_redact_url_never_shows_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown and "s3cret" not in redact_url(url)


@pytest.mark.parametrize(("text", "kwargs", "expected"), [
    ("vllm-project/vllm", {}, "vllm-project-vllm"),
    ("vllm-project/vllm-2026-W47", {"lower": False}, "vllm-project-vllm-2026-W47"),
    ("vllm-project/vllm 2026-W47", {"lower": False}, "vllm-project-vllm-2026-W47"),  # a name gives its key
    ("  Lin Wei (editor) ", {}, "lin-wei-editor"),
    ("李雷", {}, ""),                                     # nothing ASCII left: callers fall back
    ("a" * 50 + "-b", {"limit": 50}, "a" * 50),            # cut, and no hyphen left dangling at the end
    ("x/../../etc", {}, "x-etc"),                         # never a path
    ("a\x00b\u202ec", {}, "a-b-c"),
])
def test_slug_keeps_ascii_letters_digits_and_hyphens(text: str, kwargs: dict, expected: str) -> None:
    assert slug(text, **kwargs) == expected


def test_for_terminal_is_clean() -> None:
    assert for_terminal("done\rFAKE\x1b[2J\r\n\ud800ok\u202e") == "done\nFAKE[2J\nok"
