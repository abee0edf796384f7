"""Slack payloads as HTML, to look at them the way a channel shows them (a test helper, not the product).

A small subset of Slack's rendering, enough for our blocks: headers, dividers, sections and context lines;
in mrkdwn: ``<url|label>`` links, `` `code` ``, ``*bold*``, ``_italic_``, ``~strike~``, line breaks.
The text is already HTML-safe where it matters: mrkdwn escapes ``& < >`` as entities, which HTML reads the
same way; our links are the only ``<…>`` left, and they are turned into anchors first.
"""

from __future__ import annotations

import html
import re
from typing import Any

_LINK = re.compile(r"<(https?://[^|>\s]+)\|([^>]*)>")
_CODE = re.compile(r"`([^`\n]+)`")
#: Slack formats only at word boundaries: a marker after/before a letter or digit is literal.
_BOLD = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC = re.compile(r"(?<![\w])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w])")
_STRIKE = re.compile(r"(?<![\w~])~(?=\S)([^~\n]+?)(?<=\S)~(?![\w~])")

STYLE = """
body{font:15px/1.46 -apple-system,'Segoe UI',Roboto,'Noto Sans CJK SC',sans-serif;color:#1d1c1d;margin:0;
     background:#fff;width:640px}
.msg{padding:8px 20px;border-bottom:1px solid #eee}
.who{font-weight:900}.who span{font-weight:400;color:#616061;font-size:12px;margin-left:6px}
.thread{margin-left:28px;border-left:3px solid #ddd;padding-left:12px}
h3{font-size:17px;margin:10px 0 4px}
.ctx{font-size:12px;color:#616061;margin:4px 0}
.sec{margin:4px 0}
hr{border:0;border-top:1px solid #e8e8e8;margin:10px 0}
code{font:12px Monaco,Menlo,Consolas,'Courier New',monospace;color:#e01e5a;background:#f6f6f6;
     border:1px solid #e1e1e1;border-radius:3px;padding:1px 3px}
a{color:#1264a3;text-decoration:none}
"""


def mrkdwn_html(text: str) -> str:
    """One mrkdwn text object as HTML (entities are kept; code spans are shielded from formatting)."""
    codes: list[str] = []

    def shield(match: re.Match[str]) -> str:
        codes.append(f"<code>{match.group(1)}</code>")
        return f"\x00{len(codes) - 1}\x00"

    links: list[str] = []

    def link(match: re.Match[str]) -> str:
        links.append(f'<a href="{html.escape(match.group(1))}">{match.group(2)}</a>')
        return f"\x01{len(links) - 1}\x01"

    s = _LINK.sub(link, text)
    s = _CODE.sub(shield, s)
    s = s.replace("<", "&lt;").replace(">", "&gt;")  # nothing of theirs may become a tag
    s = _BOLD.sub(r"<b>\1</b>", s)
    s = _ITALIC.sub(r"<i>\1</i>", s)
    s = _STRIKE.sub(r"<s>\1</s>", s)
    s = re.sub("\x00(\\d+)\x00", lambda m: codes[int(m.group(1))], s)
    s = re.sub("\x01(\\d+)\x01", lambda m: links[int(m.group(1))], s)
    return s.replace("\n", "<br>")


def _text(obj: dict[str, Any]) -> str:
    return mrkdwn_html(obj["text"]) if obj["type"] == "mrkdwn" else html.escape(obj["text"])


def block_html(block: dict[str, Any]) -> str:
    """One Block Kit block (the kinds renderers/slack.py uses) as HTML."""
    kind = block["type"]
    if kind == "header":
        return f"<h3>{html.escape(block['text']['text'])}</h3>"
    if kind == "divider":
        return "<hr>"
    if kind == "context":
        return '<div class="ctx">' + " ".join(_text(e) for e in block["elements"]) + "</div>"
    if kind == "section":
        return f'<div class="sec">{_text(block["text"])}</div>'
    raise AssertionError(f"no preview for block type {kind}")


def preview(payloads: list[dict[str, Any]], channel: str = "#vllm-digest") -> str:
    """The parent message and its thread replies as one HTML page."""
    parts = [f"<!doctype html><meta charset=utf-8><title>{html.escape(channel)}</title><style>{STYLE}</style>"]
    for i, payload in enumerate(payloads):
        cls = "msg thread" if i else "msg"
        who = '<div class="who">pr-digest<span>APP</span></div>'
        parts.append(f'<div class="{cls}">{who}' + "".join(block_html(b) for b in payload["blocks"]) + "</div>")
    return "\n".join(parts)
