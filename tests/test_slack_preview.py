"""The Slack payloads looked at as a channel shows them: rendered to HTML and screenshot in Chromium."""

from __future__ import annotations

import re
import shutil
import struct
from pathlib import Path

import pytest

from prdigest.connect.variants import plan_variants
from prdigest.readers.file import Reader
from renderers import render_slack
from tests.delivery_support import sample_edition
from tests.slack_preview import mrkdwn_html, preview

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


@pytest.mark.parametrize(("mrkdwn", "html"), [
    ("*Look at `a_b.py`*", "<b>Look at <code>a_b.py</code></b>"),
    ("`&lt;!channel&gt;` &amp; x", "<code>&lt;!channel&gt;</code> &amp; x"),
    ("<https://github.com/o/r/pull/1|#1> title", '<a href="https://github.com/o/r/pull/1">#1</a> title'),
    ("hf_text_config _it_ ~s~", "hf_text_config <i>it</i> <s>s</s>"),
    ("\u2217x\u2217 \u02cby\u02cb", "\u2217x\u2217 \u02cby\u02cb"),  # look-alikes stay text
])
def test_the_preview_reads_mrkdwn_like_slack(mrkdwn: str, html: str) -> None:
    assert mrkdwn_html(mrkdwn) == html


def _sample_payloads(language: str = "zh-CN") -> list[dict]:
    edition = sample_edition().model_copy(update={"language": language})
    variants, _ = plan_variants(edition, [Reader(id="lin", name="Lin", slack="#vllm-digest")])
    return render_slack(edition, variants[0])


def test_the_sample_week_shows_code_spans_and_no_look_alike_backticks() -> None:
    page = preview(_sample_payloads())
    codes = re.findall(r"<code>([^<]+)</code>", page)
    assert len(codes) >= 20 and any(c.endswith(".py") for c in codes)
    assert "\u02cb" not in page  # every backtick the drafter wrote became code
    assert not re.search(r"<a href=\"(?!https://github\.com/vllm-project/vllm/pull/\d+\")", page)


@pytest.mark.browser
@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed")
def test_the_sample_week_in_slack_screenshot(tmp_path: Path) -> None:
    from prdigest.publish.screenshot import screenshot

    page = tmp_path / "slack.html"
    page.write_text(preview(_sample_payloads()[:2]), encoding="utf-8")
    ARTIFACTS.mkdir(exist_ok=True)
    png = screenshot(page, ARTIFACTS / "slack-preview.png", width=640, height=1600)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24])[0] == 640
    assert len(data) > 20_000  # a page of text, not a blank one
