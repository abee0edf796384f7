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

# Performance evidence: only figures written as a speed-up ("2.3x faster", "1.84x" in a Speedup column) or a
# measured comparison ("latency 120 ms → 80 ms", "from 1,865 TPS to 2,153 TPS", "15% higher throughput").
# Versions ("0.3.1 -> 0.4.0"), shapes ("128 x 4096", "8x H100"), dates and equations ("y = 2x + 1") are not.
# Every pattern starts at a digit with bounded runs, and lines are cut before matching: linear time.
_LINE_MAX = 600
_FACTOR = re.compile(r"(?<![\w.])~?(\d{1,4}(?:\.\d{1,3})?)\s?[x×](?![\w(])")
_AFTER_FACTOR_NOT = re.compile(
    r"\s?(?:[+\-*/=^]|\d|[A-Z]{1,2}\d{2,}|GPUs?\b|nodes?\b|RTX|MI\d|cards?\b|devices?\b|H\d{2,3}\b|A\d{2,3}\b"
    r"|B\d{2,3}\b|ranks?\b|workers?\b|experts?\b|layers?\b|heads?\b|tokens?\b|batch)", re.IGNORECASE)
_BEFORE_FACTOR_NOT = re.compile(r"(?:[=*/+^-]|\d\s?[x×*]|\w\s?=)\s?$")
#: Words that make a factor or a comparison about speed, time, throughput or memory.
_SPEED = re.compile(
    r"\b(?:faster|slower|speed-?ups?|quicker|throughput|latency|bandwidth|improv\w*|higher|lower|reduc\w*|"
    r"less|fewer|gains?|better|TTFT|TPOT|ITL|e2e|end-to-end|runtime|time|memory|tok/s|tokens/s|TPS|QPS|"
    r"req/s|GB/s|TB/s|TFLOPS|FLOPS|it/s)\b|加速|提升|提高|降低|倍", re.IGNORECASE)
_PCT_CLAIM = re.compile(
    r"(?<![\d.])[+-]?\d{1,4}(?:\.\d{1,3})?\s?%\s?(?:[A-Za-z]{1,15}\s){0,2}?(?:higher|lower|faster|better|"
    r"more|less|improve\w*|speed-?ups?|reduc\w*|increase\w*|decrease\w*|gain\w*)|"
    r"\b(?:improv\w*|reduc\w*|increas\w*|decreas\w*|speeds? up|boost\w*|cuts?)\s(?:[A-Za-z/]{1,15}\s){0,3}?"
    r"by\s~?\d{1,4}(?:\.\d{1,3})?\s?%", re.IGNORECASE)
#: A measured quantity: a number with a unit of time, rate, size or share.
_UNIT = (r"(?:ms|us|µs|ns|s|sec|secs|seconds|min|tok/s|tokens/s|tps|req/s|qps|GB/s|TB/s|MB/s|GiB|GB|MiB|MB|"
         r"TFLOPS|it/s|%)")
_QTY = rf"~?\d[\d,]{{0,12}}(?:\.\d{{1,4}})?(?:/\d{{1,6}})?\s?(?:{_UNIT}(?![\w/]))?"
_WORD = r"(?:[A-Za-z][\w.]{0,12}\s)?"  # "29/50 failures -> 0/50", "TP8 96.21% vs DCP8 96.97%"
_ARROW = re.compile(rf"(?<![\w.,/-])({_QTY})\s?{_WORD}(?:->|→|=>)\s?({_QTY})")
_FROM_TO = re.compile(rf"\bfrom\s({_QTY})\sto\s({_QTY})", re.IGNORECASE)
_VERSUS = re.compile(rf"(?<![\w.,/-])({_QTY})\s?{_WORD}(?:vs\.?|versus)\s{_WORD}({_QTY})", re.IGNORECASE)
_HAS_UNIT = re.compile(rf"\d\s?{_UNIT}$", re.IGNORECASE)
_VERSION_LIKE = re.compile(r"\d+\.\d+\.\d+|^v\d|^(?:19|20)\d\d(?:[-/]\d|$)")
_METRIC = re.compile(r"\b(?:latency|throughput|TTFT|TPOT|ITL|time|runtime|memory|bandwidth|speed|TPS|QPS|"
                     r"tok/s|tokens/s|duration|usage|accept\w*|accuracy|failures|errors|hit rate|raises|raised|"
                     r"lowers|lowered|"
                     r"drops|dropped|improves|improved|reduces|reduced|cuts|increases|decreases)\b", re.IGNORECASE)
_PERF_UNIT = re.compile(
    r"(?<![\d.,/])\d[\d.,/]{0,12}\s?(?:k\s?)?(?:ms|us|µs|tok/s|tokens/s|req/s|GB/s|TB/s|TFLOPS|it/s)\b|"
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


def _table_lines(body: str) -> list[tuple[str, str]]:
    """Each line (cut to a bounded length) with its context: a table row's header row, else the line before."""
    out: list[tuple[str, str]] = []
    header = ""
    previous = ""
    for raw in body.splitlines():
        line = raw[:_LINE_MAX].replace("**", "").replace("__", "")  # bold is not an operator
        if line.lstrip().startswith("|"):
            if not previous.lstrip().startswith("|"):
                header = line  # the first row of a table names its columns
            out.append((line, header))
        else:
            header = ""
            out.append((line, previous))  # prose is hard-wrapped: the line before is the same sentence
        previous = line
    return out


def _comparison(match: re.Match[str], line: str) -> bool:
    """A measured comparison: two quantities, not versions or dates, each with a unit or after a metric word."""
    left, right = match.group(1).strip(), match.group(2).strip()
    if _VERSION_LIKE.search(left.lstrip("~")) or _VERSION_LIKE.search(right.lstrip("~")):
        return False
    units = bool(_HAS_UNIT.search(left)) or bool(_HAS_UNIT.search(right))  # "128.4 -> 94.1 ms" shares one
    named = bool(_METRIC.search(line[max(0, match.start() - 40): match.end()]))
    return units or named


def speedups(body: str) -> list[tuple[str, float]]:
    """The speed-up factors ``body`` states (``2.3x faster``; a factor in a table whose columns say speed-up),
    as written and as a number; shapes, hardware counts and equations are not."""
    found: list[tuple[str, float]] = []
    for line, header in _table_lines(body):
        for m in _FACTOR.finditer(line):
            if _AFTER_FACTOR_NOT.match(line, m.end()) \
                    or _BEFORE_FACTOR_NOT.search(line[max(0, m.start() - 4): m.start()]):
                continue
            context = f"{header} {line[max(0, m.start() - 60): m.end() + 60]}"
            if not _SPEED.search(_FACTOR.sub(" ", context)):
                continue
            value = float(m.group(1))
            if 1.05 <= value <= 1000:
                found.append((m.group(0).strip(), value))
    return found


def perf_evidence(body: str) -> tuple[tuple[str, ...], bool, str | None]:
    """(comparative claims as written, whether bare figures appear, the biggest speed-up factor).

    A claim is a speed-up factor (:func:`speedups`), a percentage written as a gain or a cut ("15% faster",
    "reduces latency by 30%") or a measured comparison ("latency 120 ms → 80 ms"); never a version, a shape,
    a date or an equation.
    """
    factors = speedups(body)
    claims = [clean_line(text, 40) for text, _ in factors]
    for line, _ in _table_lines(body):
        claims += [clean_line(m.group(0), 40).rstrip(".,;:") for m in _PCT_CLAIM.finditer(line)]
        for pattern in (_ARROW, _FROM_TO, _VERSUS):
            claims += [clean_line(m.group(0), 40).rstrip(".,;:") for m in pattern.finditer(line)
                       if _comparison(m, line)]
    best = max((value for _, value in factors), default=None)
    return unique(claims)[:6], bool(_PERF_UNIT.search(body)), f"{best:g}x" if best is not None else None
