"""A zh-CN headline that says the point of a PR when its title cannot be said whole in Chinese.

The title's intent is kept: its verb (``draft.verbs``), the names it gives (code identifiers in backticks,
product and model names, acronyms) and the terms the glossary knows, in the title's order, from its first
clause; the English words the phrasebook cannot say are left out rather than mixed in. A title that keeps too
little that way gives way to its main code fact (one, never a count of changes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from prdigest.kernel.i18n import Section

_CLAUSE = re.compile(r"\s*(?:[:;]|\s-\s|\(|（|，|,\s)")
_TOKEN = re.compile(r"`[^`]+`|[A-Za-z_][A-Za-z0-9_.+/-]*[A-Za-z0-9_+]|[A-Za-z]|\d[A-Za-z0-9_.+-]*")
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: Small words that carry no point on their own (the frames say places; here they just go).
_GLUE = frozenset({"a", "an", "the", "to", "for", "in", "on", "of", "and", "or", "with", "by", "at", "from", "into",
                   "via", "when", "if", "is", "are", "be", "as", "that", "this", "it", "its", "all", "some", "per",
                   "not", "no", "only", "also", "new", "more", "less", "after", "before", "under", "using"})


def is_code(token: str) -> bool:
    """An identifier as code writes it: an underscore, an inner dot, an inner capital or letters with digits."""
    word = token.strip("`")
    return token.startswith("`") or "_" in word or bool(re.search(r"\w\.\w", word)) or bool(
        re.search(r"[a-z][A-Z]", word)) or (bool(re.search(r"\d", word)) and bool(re.search(r"[A-Za-z]", word)))


def is_name(token: str) -> bool:
    """A name said as written in Chinese text: an acronym (``MoE``, ``DCP``, ``A5``) or a capitalised name."""
    return token[:1].isupper()


@lru_cache(maxsize=8)
def _glossary(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Glossary terms as word tuples, longest first (``prefix caching`` before ``caching``)."""
    return tuple(sorted(((tuple(t.lower().split()), said) for t, said in pairs), key=lambda x: -len(x[0])))


#: Where a title's place phrase begins: said by the catalog's frames (``draft.frames``: 为{b}{v}{a}).
_PLACES = ("under", "for", "from", "in", "on", "at", "to", "with", "via", "into", "between", "across")


def compose(words: list[str], verb: str, w: Section, avoid: str = "") -> tuple[str, int, int]:
    """The title's words after its verb said in Chinese: (phrase, words kept, plain English words left out);
    a term said like the verb (``avoid``: "support" in "w8a8c8 support") is not said twice."""
    terms = _glossary(tuple((str(t), str(x)) for t, x in w.get("glossary", ())))
    lowered = [x.lower().strip("`") for x in words]
    out: list[str] = []
    kept = dropped = 0
    i = 0
    while i < len(words):
        term = next(((n, said) for n, said in terms if tuple(lowered[i:i + len(n)]) == n), None)
        if term is not None:
            if (not out or out[-1] != term[1]) and term[1] not in (verb, avoid):
                out.append(term[1])
            kept += 1
            i += len(term[0])
            continue
        token = words[i]
        i += 1
        if lowered[i - 1] in _GLUE:
            continue
        if token[:1].isdigit() or re.fullmatch(r"v\d[\w.+-]*", token):
            out.append(token)  # a version or a figure, said as written
            kept += 1
        elif is_code(token):
            out.append(token if token.startswith("`") else f"`{token}`")
            kept += 1
        elif is_name(token):
            out.append(token)
            kept += 1
        else:
            dropped += 1
    return verb + " ".join(out), kept, dropped


_SPAN_OR_WORD = re.compile(r"`[^`]*`|[A-Za-z_][A-Za-z0-9_.+/-]*[A-Za-z0-9_+]")  # ASCII: \w is CJK too


def backticked(text: str) -> str:
    """Code identifiers of a Chinese headline in backticks (``enable_sparse_c8`` → `` `enable_sparse_c8` ``)."""
    return _SPAN_OR_WORD.sub(lambda m: m[0] if m[0].startswith("`") or not is_code(m[0]) or "/" in m[0]
                             or re.fullmatch(r"v\d[\w.+-]*", m[0]) else f"`{m[0]}`", text)


def point(title: str, verb: str | None, w: Section,
          verb_of: Callable[[list[str]], tuple[str, int] | None] = lambda _: None) -> str | None:
    """The title's point in Chinese (``新增 Mooncake 逐层连接器``), None when too little of it can be said;
    ``verb_of`` finds the base verb opening a list of words (a purpose clause: "… to fix X" → "，以修复 X")."""
    clause = _CLAUSE.split(title, maxsplit=1)[0]
    words = _TOKEN.findall(clause)
    if verb is not None and words and words[0].lower().startswith(verb.split()[0][:4]):
        words = words[len(verb.split()):]  # the verb is said by the catalog
    purpose = ""
    for i, x in enumerate(words[:-1]):
        found = verb_of(words[i + 1:]) if x.lower() == "to" and i else None
        if found:
            rest, kept, dropped = compose(words[i + 1 + found[1]:], str(w["verbs"][found[0]]), w)
            purpose = w["headline"]["purpose"].format(text=rest) if kept and dropped <= kept else ""
            words = words[:i]
            break
    text = _said(words, verb, w)
    if text is None:
        return None
    return text + purpose


def _said(words: list[str], verb: str | None, w: Section) -> str | None:
    said = str(w["verbs"][verb]) if verb else ""
    at = next((i for i, x in enumerate(words) if i and x.lower() in _PLACES), None)
    if at is not None and said:
        head, kept, dropped = compose(words[:at], "", w, said)
        tail, more, lost = compose(words[at + 1:], "", w, said)
        to = next((i for i, x in enumerate(words[at + 1:], at + 1) if x.lower() == "to"), None)
        if words[at].lower() == "from" and to is not None and "from_to" in w["frames"]:
            start, more, lost = compose(words[at + 1:to], "", w, said)
            end, extra, gone = compose(words[to + 1:], "", w, said)
            text = w["frames"]["from_to"].format(v=said, a=head, b=start, c=end)
            kept, dropped = kept + more + extra, dropped + lost + gone
        elif head and tail and not lost:  # a place phrase half said ("for clarity") misleads: it goes
            text = w["frames"][words[at].lower()].format(v=said, a=head, b=tail)
            kept, dropped = kept + more, dropped + lost
        elif head and lost:
            text = said + head
        else:
            text, kept, dropped = compose(words, said, w)
    else:
        text, kept, dropped = compose(words, said, w)
    if not kept or dropped > max(2, kept) or not _CJK.search(text):
        return None
    return text
