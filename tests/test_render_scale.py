"""Rendering at scale (issue 30): a variant is rendered only on the media its readers use, variants are
rendered once and delivered one after another (one variant's renderings made at a time), and plain-text
wrapping is linear in the text."""

from __future__ import annotations

import json
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

from flows.media import default_media
from prdigest.deliver.media import MediaRegistry, Medium
from prdigest.kernel.config import load_settings
from prdigest.pipeline.compose import RunOptions, build_services
from prdigest.pipeline.edition import EditionPipeline
from renderers.text import _TOKEN, WIDTH, wrap

READERS = """\
readers:
  - id: a-chat-docs
    name: Docs channel
    slack: "#docs"
    subsystems: [docs]
  - id: b-mail-kernels
    name: Kernels by mail
    email: kernels@example.com
    subsystems: [kernels]
  - id: c-chat-docs
    name: Docs channel two
    slack: "#docs-two"
    subsystems: [docs]
  - id: d-both-kernels
    name: Kernels, both ways
    email: both@example.com
    slack: "#kernels"
    subsystems: [kernels]
  - id: e-mail-all
    name: Everything by mail
    email: all@example.com
"""


class Counted:
    """The shipped media, each render and each composer made recorded as (medium, variant key)."""

    def __init__(self) -> None:
        self.renders: list[tuple[str, str]] = []
        self.composers: list[tuple[str, str]] = []

    def medium(self, medium: Medium) -> Medium:
        def render(edition, variant, context):
            self.renders.append((medium.name, variant.key))
            return medium.render(edition, variant, context)

        def composer(rendering, context):
            self.composers.append((medium.name, rendering.variant))
            return medium.composer(rendering, context)

        return replace(medium, render=render, composer=composer)


def _run(tmp_path: Path, counted: Counted):
    (tmp_path / "readers.yaml").write_text(READERS, encoding="utf-8")
    options = RunOptions(source="sample", out=str(tmp_path / "out"), language="en",
                         readers=str(tmp_path / "readers.yaml"), state=str(tmp_path / "state.sqlite"))
    media = MediaRegistry([counted.medium(m) for m in default_media(options.deliver)])
    pipeline = EditionPipeline(build_services(options, load_settings(**options.settings_overrides()), media))
    try:
        return pipeline.run()
    finally:
        pipeline.services.close()


def test_a_variant_whose_readers_use_only_slack_renders_no_email_and_each_variant_is_made_once(
        tmp_path: Path) -> None:
    counted = Counted()
    summary = _run(tmp_path, counted)
    assert summary.variants == {"docs": ["a-chat-docs", "c-chat-docs"], "kernels": ["b-mail-kernels", "d-both-kernels"],
                                "all": ["e-mail-all"]}
    # Rendered on the media its readers use, once each: docs only on Slack, all only by e-mail, no Feishu.
    assert sorted(counted.renders) == [("email", "all"), ("email", "kernels"), ("slack", "docs"),
                                       ("slack", "kernels")]
    out = tmp_path / "out"
    assert sorted(p.name for p in (out / "email").iterdir()) == ["all.html", "all.txt", "kernels.html", "kernels.txt"]
    assert sorted(p.name for p in (out / "slack").iterdir()) == ["docs.json", "kernels.json"]
    assert not (out / "feishu").exists()
    assert sorted(p.name for p in (out / "outbox").iterdir()) == [
        "a-chat-docs.slack.json", "b-mail-kernels.eml", "c-chat-docs.slack.json", "d-both-kernels.eml",
        "d-both-kernels.slack.json", "e-mail-all.eml"]
    # The readers' ids alternate between variants, yet each variant's composers were made once: its messages
    # went out together, its renderings unpacked once and dropped before the next variant's.
    assert Counter(counted.composers) == Counter(set(counted.composers))
    assert sorted(counted.composers) == sorted(counted.renders)
    order = [variant for _, variant in counted.composers]
    assert order == sorted(order, key=order.index)  # one variant after another, never back
    # The record keeps every variant as rendered, with its readers.
    digest = json.loads((out / "digest.json").read_text(encoding="utf-8"))
    assert {v["key"]: v["readers"] for v in digest["variants"]} == summary.variants
    assert len(summary.sent) == 6 and not summary.failed and not summary.problems


class Operations:
    """What one wrap did, counted by the interpreter's profiler (no timing: the count is the same on a loaded
    machine): every call, Python or builtin; the joins (a line made); the widths measured (``display_width``)."""

    def __init__(self, text: str) -> None:
        self.calls = self.joins = self.measured = 0

        def count(frame, event: str, arg) -> None:  # sys.setprofile's hook
            if event == "call":
                self.calls += 1
                self.measured += frame.f_code.co_name == "display_width"
            elif event == "c_call":
                self.calls += 1
                self.joins += getattr(arg, "__name__", "") == "join"

        sys.setprofile(count)
        try:
            self.lines = wrap(text)
        finally:
            sys.setprofile(None)


def test_wrapping_is_linear_in_the_text() -> None:
    # A run of punctuation that must not start a line never breaks: one line that grows token by token (it took
    # 12 times as long for 4 times the text when each token copied the line so far). Counted, not timed: a timing
    # ratio failed the suite at load 11 (40.1x against a 24x limit). Linear: 8x the text is 8x the calls, each
    # character measured once, each line joined once.
    mixed = "这是一段中文，夹着 English words 和 https://github.com/o/r/pull/1 链接。" * 500
    for text in ("。" * 20_000, mixed):
        small, large = Operations(text), Operations(text * 8)
        assert large.calls <= 8.5 * small.calls, f"8x the text made {large.calls / small.calls:.1f}x the calls"
        for ops, wrapped in ((small, text), (large, text * 8)):
            tokens = sum(not t.isspace() for t in _TOKEN.findall(wrapped))
            assert ops.measured <= tokens + len(ops.lines) + 1  # each token measured once, never the line so far
            assert ops.joins == len(ops.lines)  # each line joined once, never per token
    lines = wrap(mixed)
    assert max(len(line) for line in lines) <= WIDTH and "".join(lines).replace(" ", "") == mixed.replace(" ", "")


def test_a_variants_messages_share_one_flattened_body_and_keep_their_bytes() -> None:
    from email import policy

    from flows.media import EMAIL
    from prdigest.connect.variants import Filter, Variant, ordered
    from prdigest.deliver.email_message import message_bytes
    from prdigest.deliver.media import ComposeContext, RenderContext
    from prdigest.readers.file import Reader
    from tests.factories import edition, entry

    entries = [entry(100 + i, ["kernels"], "deep-read") for i in range(5)]
    ed = edition(entries, language="zh-CN")
    rendering = EMAIL.render(ed, Variant(Filter(), ordered(entries)), RenderContext())
    compose = EMAIL.composer(rendering, ComposeContext(edition=ed, sender="digest <digest@example.com>"))
    readers = [Reader(id=f"r{i}", name=f"读者 {i}", email=f"r{i}@example.com") for i in range(3)]
    messages = [compose(r, None) for r in readers]
    data = [message_bytes(m) for m in messages]
    assert data == [m.as_bytes(policy=policy.SMTP) for m in messages]  # what as_bytes writes, byte for byte
    assert messages[1].get_payload()[0] is messages[2].get_payload()[0]  # one body for the variant
    # Headers every message has are parsed once and folded once per policy, each policy folding its own way; the
    # variant's Subject is encoded once.
    subjects = [dict(m.raw_items())["Subject"] for m in messages]
    assert messages[0]["From"] is messages[2]["From"] and subjects[0] is subjects[1] is subjects[2]
    assert [message_bytes(m, policy.default) for m in messages] == [m.as_bytes(policy=policy.default)
                                                                   for m in messages]
    assert [message_bytes(m, policy.SMTP.clone(max_line_length=40)) for m in messages] == [
        m.as_bytes(policy=policy.SMTP.clone(max_line_length=40)) for m in messages]
    assert all(b"To: " in d and f"r{i}@example.com".encode() in d for i, d in enumerate(data))


def test_message_bytes_writes_any_line_endings_as_as_bytes_does() -> None:
    from email import policy
    from email.message import EmailMessage

    from prdigest.deliver.email_message import MESSAGE_POLICY, message_bytes

    for body in ["a\nb\n", "a\r\nb\rc\n", "no ending", "\n\n", "x\r", "=E4\r\n=B8\n"]:
        msg = EmailMessage(policy=MESSAGE_POLICY)
        msg["Subject"] = "s"
        msg.set_payload(body)  # as it is: its line endings reach the generator
        for p in (policy.SMTP, policy.default):
            assert message_bytes(msg, p) == msg.as_bytes(policy=p)
