"""Prose: bounded, linear-time scanning of a PR's untrusted text (title, body, review comments).

Everything here is pure and deterministic. Untrusted text is bounded before any regex sees it, and every
pattern is linear (no nested quantifiers), so a 200 KB body or 3,000 files cost milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from prdigest.kernel.text import CODE_SPAN, clean

#: Only this much of a body is scanned: PR descriptions that matter fit easily; logs pasted below do not.
MAX_SCAN = 20_000
MAX_IDENTIFIERS = 12

# Performance evidence. Every number pattern starts at the first digit of a number and has bounded runs,
# so a body of 200,000 digits stays linear. A factor next to a GPU or node name ("8x H200") is hardware.
_NUM = r"(?<![\d.,/])\d[\d.,/]{0,12}"
_FACTOR = re.compile(
    r"(?<![\w.])~?(\d{1,4}(?:\.\d{1,3})?)\s?[x×](?!\w)"
    r"(?!\s?(?:[A-Z]{1,2}\d{2,}|GPUs?\b|nodes?\b|RTX|MI\d|cards?\b|devices?\b))")
_PCT_CLAIM = re.compile(
    r"(?<![\d.])[+-]?\d{1,4}(?:\.\d{1,3})?\s?%\s?(?:[A-Za-z]{1,15}\s){0,2}?(?:higher|lower|faster|better|"
    r"more|less|improve\w*|speed-?ups?|reduc\w*|increase\w*|decrease\w*|gain\w*)", re.IGNORECASE)
_ARROW = re.compile(_NUM + r"\s?[A-Za-z/%µ]{0,8}\s?(?:->|→|=>)\s?~?\d[\d.,/]{0,12}(?:\s?[A-Za-z/%µ]{1,5}\b)?")
_FROM_TO = re.compile(r"\bfrom ~?\d[\d.,]{0,12}\s?[A-Za-z/%µ]{0,8}\s?to ~?\d[\d.,]{0,12}", re.IGNORECASE)
_VERSUS = re.compile(_NUM + r"\s?%?\s?(?:[A-Za-z][\w.]{0,12}\s)?(?:vs\.?|versus)\s(?:[A-Za-z][\w.]{0,12}\s)?"
                     r"~?\d[\d.,]{0,12}%?", re.IGNORECASE)
_PERF_UNIT = re.compile(
    _NUM + r"\s?(?:k\s?)?(?:ms|us|µs|tok/s|tokens/s|req/s|GB/s|TB/s|TFLOPS|it/s)\b|"
    r"\b(?:throughput|latency|TTFT|TPOT|ITL|speed-?up)\b", re.IGNORECASE)

#: The longest code span read as a code name (longer ones are code snippets, not names).
_MAX_NAME = 80
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z0-9]*(?:-[a-z0-9]+){0,6})\b")
_ENV = re.compile(r"\b(VLLM_[A-Z0-9_]{2,60}|HF_[A-Z0-9_]{2,60}|CUDA_[A-Z0-9_]{2,60})\b")
_CALL = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]{0,60}(?:\.[A-Za-z_][A-Za-z0-9_]{0,60}){0,3})\(")
_SNAKE = re.compile(r"\b([a-z][a-z0-9]{0,30}(?:_[a-z0-9]{1,30}){1,8}(?:\.[a-z_][a-z0-9_]{0,40}){0,2})\b")
_CAMEL = re.compile(r"\b([A-Z][a-z0-9]{1,20}(?:[A-Z][A-Za-z0-9]{1,20}){2,8})\b")
_DOTTED = re.compile(r"\b([A-Z][A-Za-z0-9]{2,40}\.[a-z_][a-z0-9_]{2,40})\b")
_FILE_LIKE = re.compile(r"\.(py|md|cu|cuh|cpp|hpp|h|txt|yaml|yml|json|toml|sh|cmake|in)$", re.IGNORECASE)
_CHECKBOX = re.compile(r"^\s*[-*]\s*\[[ xX]\]", re.MULTILINE)
#: Template scaffolding that is not the author's words: headings, <details> wrappers, rules, shouted
#: instructions ("PLEASE FILL IN THE PR DESCRIPTION HERE …", "**BEFORE SUBMITTING, PLEASE READ …**").
_SCAFFOLD = re.compile(r"^\s*(?:#{1,6}\s.*|</?details>|<summary>.*|-{3,}|\**\s*)$|^\W*[A-Z][A-Z ,.'!:]{15,}")
_SPACES = re.compile(r"\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n\s*\n|\n(?=\s*(?:[-*]|\d+[.)])\s)")


def clean_line(text: str, limit: int) -> str:
    """Control characters out, whitespace collapsed, cut at a word boundary to at most ``limit`` chars."""
    text = _SPACES.sub(" ", clean(text)).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:，、") + "…"


def _cut(text: str, open_: str, close: str, drop: Callable[[str], bool]) -> str:
    """``text`` without the ``open_``…``close`` spans that ``drop`` selects (an unclosed one runs to the end)."""
    out, pos = [], 0
    while (start := text.find(open_, pos)) >= 0:
        end = text.find(close, start + len(open_))
        stop = len(text) if end < 0 else end + len(close)
        out.append(text[pos:start] if drop(text[start:stop]) else text[pos:stop])
        pos = stop
    out.append(text[pos:])
    return "".join(out)


def strip_template(body: str) -> str:
    """Drop HTML comments, the checklist, template headings and instructions, in linear time."""
    body = _cut(body, "<!--", "-->", lambda _: True)
    body = _cut(body, "<details>", "</details>", lambda span: "checklist" in span[:400].lower())
    return "\n".join(x for x in body.splitlines()
                     if not _CHECKBOX.match(x) and not _SCAFFOLD.match(x[:300]) and "#xxxx" not in x).strip()


def sentences(text: str) -> list[str]:
    """Split prose into rough sentences and list items."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def unique(items: list[str]) -> tuple[str, ...]:
    """``items`` without empties and repeats, in first-seen order."""
    seen: dict[str, None] = {}
    for item in items:
        if item and item not in seen:
            seen[item] = None
    return tuple(seen)


def switches_in(text: str) -> tuple[str, ...]:
    """Command-line flags and environment variables ``text`` names, in order of appearance."""
    return unique([m.group(1) for p in (_FLAG, _ENV) for m in p.finditer(text)])


def identifiers_in(text: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    """Code names the author wrote: backticked first, then flags, env vars, calls, dotted, snake, Camel."""
    stems = {p.rsplit("/", 1)[-1] for p in paths}
    found: list[str] = []
    for pattern in (CODE_SPAN, _FLAG, _ENV, _CALL, _DOTTED, _SNAKE, _CAMEL):
        for match in pattern.finditer(text):
            if pattern is CODE_SPAN and len(match.group(1)) > _MAX_NAME:
                continue
            name = match.group(1).strip().strip("`").rstrip(".,:;")
            before = text[match.start() - 1: match.start()]
            after = text[match.end(): match.end() + 1]
            if pattern is not CODE_SPAN and "/" in (before + after):
                continue  # a segment of a path, not a code name
            if ("/" in name or " " in name or name in stems or _FILE_LIKE.search(name)
                    or len(name) < 4 or name.startswith("http")):
                continue
            found.append(name.replace("`", ""))
            if len(found) >= 4 * MAX_IDENTIFIERS:
                break
    return unique(found)[:MAX_IDENTIFIERS]


def snippets_with(pattern: re.Pattern[str], texts: list[str], limit: int = 3) -> tuple[str, ...]:
    """Up to ``limit`` sentences of ``texts`` that ``pattern`` finds, each bounded."""
    out: list[str] = []
    for text in texts:
        parts = sentences(text)
        for i, sentence in enumerate(parts):
            if pattern.search(sentence):
                if len(sentence) < 40 and i > 0:  # a fragment ("to follow separately)."): keep its context
                    sentence = f"{parts[i - 1]} {sentence}"
                out.append(clean_line(sentence, 160))
                if len(out) >= limit:
                    return unique(out)
    return unique(out)


def perf_evidence(body: str) -> tuple[tuple[str, ...], bool, str | None]:
    """(comparative claims as written, whether bare figures appear, the biggest speed-up factor)."""
    claims = [clean_line(m.group(0), 40).rstrip(".,;:")
              for pattern in (_FACTOR, _PCT_CLAIM, _ARROW, _FROM_TO, _VERSUS) for m in pattern.finditer(body)]
    factors = [f for f in (float(m.group(1)) for m in _FACTOR.finditer(body)) if 1.05 <= f <= 1000]
    return unique(claims)[:6], bool(_PERF_UNIT.search(body)), f"{max(factors):g}x" if factors else None
