"""Whether a zh-CN headline mixes Chinese words with plain English words (code and names excepted).

A headline half-translated (``跨 main 与 draft to fix fullgraph deadlock 统一 update_stream``) reads as
neither language. :func:`mixes_languages` finds it: Chinese characters together with a plain English word,
where quoted text (「…」, “…”, backticks), code identifiers (``update_stream``, ``torch.compile``,
``--max-len``, ``FP8``, ``MoE``, ``SM100``), acronyms and capitalised names do not count, nor do the
words that name the PR's own files and code (``code_words``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_CJK = re.compile(r"[\u4e00-\u9fff]")
_QUOTED = re.compile(r"「[^」]*」|“[^”]*”|`[^`]*`|\"[^\"]*\"")
_TOKEN = re.compile(r"[A-Za-z0-9_./+#@:-]+")
_PLAIN = re.compile(r"[a-z]{2,}(?:-[a-z]{2,})*")
#: Words that are English before a version too ("from 0.17.0 to 0.18.0"): only a name is excused there.
_FUNCTION_WORDS = frozenset({"to", "from", "and", "or", "for", "with", "in", "on", "of", "the", "at", "by", "than",
                             "vs", "via", "into", "since", "before", "after", "until"})
_VERSION = re.compile(r"v?\d+(?:\.\d+)*(?:\.x)?")


def code_words(paths: Iterable[str], identifiers: Iterable[str] = ()) -> frozenset[str]:
    """The lower-case names of a PR's folders and files (with and without extension) and of its code names:
    written in a headline they are code, not English. Parts of names ("sparse" of ``sparse_mla.py``) are not."""
    words: set[str] = set()
    for path in paths:
        for part in path.lower().split("/"):
            words.update((part, part.rsplit(".", 1)[0]))
    for name in identifiers:
        words.update(name.lower().split("."))
    return frozenset(w for w in words if w)


def plain_english(text: str, code: frozenset[str] = frozenset()) -> list[str]:
    """The plain English words of ``text``: lower-case words outside quotes that are not code, nor a package
    named with its version ("transformers v5", "flashinfer 0.3.1")."""
    tokens = _TOKEN.findall(_QUOTED.sub(" ", text))
    return [t for i, t in enumerate(tokens) if _PLAIN.fullmatch(t) and t not in code
            and not (i + 1 < len(tokens) and _VERSION.fullmatch(tokens[i + 1]) and t not in _FUNCTION_WORDS)]


def mixes_languages(text: str, code: frozenset[str] = frozenset()) -> bool:
    """True when ``text`` holds Chinese and plain English words at once (quotes and code excepted)."""
    unquoted = _QUOTED.sub(" ", text)
    return bool(_CJK.search(unquoted)) and bool(plain_english(unquoted, code))


def statement(headline: str, labels: Iterable[str]) -> str:
    """``headline`` without its subsystem prefix (``内核：``): the part that must be in one language."""
    for label in sorted(labels, key=len, reverse=True):
        for sep in ("：", ": "):
            if headline.startswith(label + sep):
                return headline[len(label) + len(sep):]
    return headline
