"""The shared text helpers (prdigest/text.py): slugs, control characters, URLs safe to show."""

from __future__ import annotations

import pytest

from prdigest.text import redact_url, slug, strip_control


@pytest.mark.parametrize(("text", "kwargs", "expected"), [
    ("vllm-project/vllm", {}, "vllm-project-vllm"),
    ("vllm-project/vllm-2026-W47", {"lower": False}, "vllm-project-vllm-2026-W47"),
    ("vllm-project/vllm 2026-W47", {"lower": False}, "vllm-project-vllm-2026-W47"),  # a name gives its key
    ("  Lin Wei (editor) ", {}, "lin-wei-editor"),
    ("李雷", {}, ""),                                     # nothing ASCII left: callers fall back
    ("a" * 50 + "-b", {"limit": 50}, "a" * 50),            # cut, and no hyphen left dangling at the end
    ("x/../../etc", {}, "x-etc"),                         # never a path
])
def test_slug_keeps_ascii_letters_digits_and_hyphens(text: str, kwargs: dict, expected: str) -> None:
    assert slug(text, **kwargs) == expected


def test_strip_control_drops_c0_c1_and_del_but_keeps_tab_and_line_breaks() -> None:
    assert strip_control("a\x00b\x1b[31mc\x7fd\x85e\x9ff\tg\nh\ri") == "ab[31mcdef\tg\nh\ri"
    assert strip_control("中文 ok") == "中文 ok"


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:s3cret@ghe.example.com/api/v3", "https://ghe.example.com/api/v3"),
    ("http://key:s3cret@127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ("http://token@[::1]:9000/v1?x=1", "http://[::1]:9000/v1?x=1"),
    ("https://api.github.com", "https://api.github.com"),
])
def test_redact_url_never_shows_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown and "s3cret" not in redact_url(url)


def test_strip_control_drops_bidi_controls_and_for_terminal_turns_cr_into_a_line_break() -> None:
    from prdigest.text import for_terminal

    assert strip_control("a\u202eb\u2066c\u2069d\u200fe") == "abcde"
    assert for_terminal("done\rFAKE\x1b[2J\r\n\ud800ok") == "done\nFAKE[2J\nok"
