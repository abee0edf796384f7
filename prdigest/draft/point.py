"""A zh-CN headline that says the point of a PR when its title cannot be said whole in Chinese.

The title's intent is kept: its verb (``draft.verbs``), the names it gives (code identifiers in backticks,
product and model names, acronyms) and the terms the glossary knows, in the title's order, from its first
clause; the English words the phrasebook cannot say are left out rather than mixed in. A title that keeps too
little that way gives way to its main code fact (one, never a count of changes).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from prdigest.kernel.i18n import Section

_CLAUSE = re.compile(r"\s*(?:[:;]|\s-\s|\(|（|，|,\s)")
_TOKEN = re.compile(r"`[^`]+`|[A-Za-z_][A-Za-z0-9_.+/-]*[A-Za-z0-9_+]|[A-Za-z]|\d[A-Za-z0-9_.+-]*")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ASIDE = re.compile(r"\s*(?:\([^()]*\)|（[^（）]*）)")
_CODEISH = re.compile(r"[`A-Za-z0-9]")
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


@dataclass(frozen=True)
class Known:
    """The names a PR's own text and diff use: words of its file paths and code (said as code, in backticks) and
    its acronyms (``[PCP]`` makes a title's "pcp" PCP); a title's lowercase word found here is a name, not English."""

    code: frozenset[str] = field(default_factory=frozenset)
    acronyms: frozenset[str] = field(default_factory=frozenset)


def known(paths: Iterable[str], identifiers: Iterable[str] = (), text: str = "") -> Known:
    """The names of a PR (see :class:`Known`): its paths' folders and file names, the name a file's name opens
    with (``mooncake`` of ``mooncake_connector.py``; "align" of ``moe_align_sum.cu`` is no name), its identifiers,
    and the all-capital words of ``text``."""
    code: set[str] = {x for name in identifiers for x in name.lower().split(".")}
    for path in paths:
        for part in path.lower().split("/"):
            stem = part.split(".", 1)[0]
            code.update((part, stem, re.split(r"[_-]", stem, maxsplit=1)[0]))
    acronyms = {x for x in re.findall(r"\b[A-Z][A-Z0-9]+\b", text) if re.search(r"[A-Z].*[A-Z]", x)}
    return Known(frozenset(x for x in code if len(x) > 2 and x not in _GLUE), frozenset(acronyms))


def _as_named(token: str, names: Known) -> str | None:
    """How a lowercase title word the PR names is said: ``gpt-oss`` and path words in backticks, ``pcp`` as PCP."""
    word = token.lower()
    if word.upper() in names.acronyms:
        return word.upper()
    if word in names.code or re.fullmatch(r"[a-z]{1,4}(?:-[a-z0-9]{1,4})+", word):
        return f"`{token}`"
    return None


@lru_cache(maxsize=8)
def _glossary(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Glossary terms as word tuples, longest first (``prefix caching`` before ``caching``)."""
    return tuple(sorted(((tuple(t.lower().split()), said) for t, said in pairs), key=lambda x: -len(x[0])))


#: Where a title's place phrase begins: said by the catalog's frames (``draft.frames``: 为{b}{v}{a}).
_PLACES = ("under", "for", "from", "in", "on", "at", "to", "with", "via", "into", "between", "across")


def compose(words: list[str], verb: str, w: Section, avoid: Collection[str] = (),
            names: Known = Known()) -> tuple[str, int, int]:
    """The title's words after its verb said in Chinese: (phrase, words kept, plain English words left out).
    A term is said once: one said like the verb or already in ``avoid`` ("support" in "w8a8c8 support") is neither
    said again nor counted as kept. Title words that join into one of the PR's code names ("batch invariant",
    ``batch_invariant.py``) are that name."""
    terms = _glossary(tuple((str(t), str(x)) for t, x in w.get("glossary", ())))
    lowered = [x.lower().strip("`") for x in words]
    # A run of lowercase words is joined into the PR's code name ("batch invariant" → `batch_invariant`) only
    # when the glossary cannot say them all; a name ("LMCache connector") is said as written.
    said_alone = {n for n, _ in terms}
    out: list[str] = []
    kept = dropped = 0
    i = 0
    while i < len(words):
        joined = next((n for n in (3, 2) if i + n <= len(words) and "_".join(lowered[i:i + n]) in names.code
                       and all(x.islower() for x in words[i:i + n])
                       and not all((x,) in said_alone for x in lowered[i:i + n])), 0)
        term = next(((n, said) for n, said in terms if tuple(lowered[i:i + len(n)]) == n), None)
        if joined and not (term and len(term[0]) >= joined):  # "user guide" is 用户指南, not `user_guide`
            out.append(f"`{'_'.join(lowered[i:i + joined])}`")
            kept += 1
            i += joined
            continue
        if term is not None:
            if not any(term[1] in x for x in (verb, *avoid, *out)):  # "typos error": 拼写错误, not 拼写错误错误
                out.append(term[1])
                kept += 1
            i += len(term[0])
            continue
        token = words[i]
        i += 1
        if lowered[i - 1] in _GLUE:
            continue
        named = _as_named(token, names) if token.islower() else None
        if token[:1].isdigit() or re.fullmatch(r"v\d[\w.+-]*", token):
            out.append(token)  # a version or a figure, said as written
            kept += 1
        elif is_code(token):
            said = token if token.startswith("`") else f"`{token}`"
            if said not in out:
                out.append(said)
            kept += 1
        elif named is not None:
            if named not in out:
                out.append(named)
            kept += 1
        elif is_name(token):
            if token not in out:
                out.append(token)
            kept += 1
        else:
            dropped += 1
    return verb + " ".join(out), kept, dropped


_SPAN_OR_WORD = re.compile(r"`[^`]*`|[A-Za-z_][A-Za-z0-9_.+/-]*[A-Za-z0-9_+]")  # ASCII: \w is CJK too


def backticked(text: str, code: Collection[str] = frozenset()) -> str:
    """Code identifiers of a Chinese headline in backticks (``enable_sparse_c8`` → `` `enable_sparse_c8` ``), and
    the lowercase words that name the PR's own folders, files and code (``code``: "patch" of ``vllm_ascend/patch``)."""
    return _SPAN_OR_WORD.sub(lambda m: m[0] if m[0].startswith("`") or "/" in m[0]
                             or not (is_code(m[0]) or (m[0].islower() and m[0] in code))
                             or re.fullmatch(r"v\d[\w.+-]*", m[0]) else f"`{m[0]}`", text)


#: Where a title's first clause ends: a condition or a cause ("… when using partial rope") is no part of the point.
_CONDITIONS = frozenset({"when", "if", "while", "because", "since", "unless", "once"})


def _first_clause(words: list[str], verb_of: Callable[[list[str]], tuple[str, int] | None]) -> list[str]:
    """The words up to a condition or a second verb ("X weight and support Y weight" → "X weight")."""
    for i, x in enumerate(words):
        if i and (x.lower() in _CONDITIONS or (x.lower() == "and" and verb_of(words[i + 1:]))):
            return words[:i]
    return words


def point(title: str, verb: str | None, w: Section,
          verb_of: Callable[[list[str]], tuple[str, int] | None] = lambda _: None,
          names: Known = Known()) -> str | None:
    """The title's point in Chinese (``新增 Mooncake 逐层连接器``), None when the object of its verb cannot be
    said; ``verb_of`` finds the base verb opening a list of words (a purpose clause: "… to fix X" → "，以修复 X"),
    ``names`` are the PR's own names (:func:`known`)."""
    # An aside in parentheses goes; the title goes on after it ("Adapt graph mode (piecewise) of PCP for X").
    clause = _CLAUSE.split(_ASIDE.sub("", title), maxsplit=1)[0]
    words = _TOKEN.findall(re.sub(r"(?<=\w)'s\b", "", clause))  # "eplb's dependency": the name, not "s"
    if verb is not None and words and words[0].lower().startswith(verb.split()[0][:4]):
        words = words[len(verb.split()):]  # the verb is said by the catalog
    purpose = ""
    for i, x in enumerate(words[:-1]):
        found = verb_of(words[i + 1:]) if x.lower() == "to" and i else None
        if found:
            rest, kept, dropped = compose(_first_clause(words[i + 1 + found[1]:], verb_of),
                                          str(w["verbs"][found[0]]), w, names=names)
            purpose = w["headline"]["purpose"].format(text=rest) if kept and dropped <= kept else ""
            words = words[:i]
            break
    words = _first_clause(words, verb_of)
    middle = None if verb is not None else next(
        (i for i, x in enumerate(words) if i and x.islower() and (x in ("support", "supports") or (
            x.endswith("s") and len(x) > 4)) and verb_of(words[i:])), None)
    if middle is not None:  # "Mooncake connector supports kv_pool": subject, verb, object (said whole)
        opening = verb_of(words[middle:])
        subject, kept, dropped = compose(words[:middle], "", w, (), names)
        said = _said(words[middle + opening[1]:], opening[0], w, names) if opening else None
        return subject + said + purpose if said is not None and kept > dropped else None
    text = _said(words, verb, w, names)
    if text is None:
        return None
    return text + purpose


#: Nouns that name no object on their own: "fix tensor mismatch bug" is about the mismatch, "add X support" about X.
_GENERIC = frozenset({"bug", "bugs", "issue", "issues", "error", "errors", "problem", "problems", "support",
                      "fix", "fixes", "function", "functions", "feature", "features", "case", "cases", "note",
                      "notes"})


def _whole(words: list[str], w: Section, names: Known, extra: int = 0) -> bool:
    """Whether an object was said: its words other than generic nouns are kept, or all but one when two or more
    (``extra``: those of a place phrase said whole; a code name counts twice) are; "fix tensor mismatch bug" is
    not "修复张量问题", "fix default_kv_lease_ttl setting" is "修复 `default_kv_lease_ttl`"."""
    content = [x for x in words if x.lower() not in _GLUE and x.lower() not in _GENERIC]
    text, kept, dropped = compose(content, "", w, (), names)
    kept += (extra if kept else 0) + text.count("`") // 2  # a code name the PR uses names the object twice over
    return kept > 0 and (not dropped or (dropped == 1 and kept >= 2))


def _said(words: list[str], verb: str | None, w: Section, names: Known) -> str | None:
    said = str(w["verbs"][verb]) if verb else ""
    at = next((i for i, x in enumerate(words) if i and x.lower() in _PLACES), None)
    if at is not None and said:
        end = next((i for i, x in enumerate(words[at + 1:], at + 1) if x.lower() in _PLACES), len(words))
        head, kept, dropped = compose(words[:at], "", w, (said,), names)
        tail, more, lost = compose(words[at + 1:end], "", w, (said, *head.split()), names)
        # "support for X": the verb's own noun is no object; the place phrase is, and must be said whole
        bare = not [x for x in words[:at] if x.lower() not in _GLUE and x.lower() not in _GENERIC]
        said_head = bool(head) and (bare or _whole(words[:at], w, names, 0 if lost else more))
        to = next((i for i, x in enumerate(words[at + 1:], at + 1) if x.lower() == "to"), None)
        if words[at].lower() == "from" and to is not None and "from_to" in w["frames"]:
            start, more, lost = compose(words[at + 1:to], "", w, (said, *head.split()), names)
            end_, extra, gone = compose(words[to + 1:], "", w, (said, *head.split()), names)
            if not said_head or lost or gone:
                return None
            text = w["frames"]["from_to"].format(v=said, a=head, b=start, c=end_)
        elif said_head and tail and not lost and (not bare or _whole(words[at + 1:end], w, names)):
            text = w["frames"][words[at].lower()].format(v=said, a=head, b=tail)
        elif said_head and not bare:  # a place phrase half said ("for clarity") misleads: it goes
            text = said + head
        else:
            return None
    else:
        conjunct = next((i for i, x in enumerate(words) if i and x.lower() == "and"), len(words))
        if not _whole(words, w, names) and _whole(words[:conjunct], w, names):
            words = words[:conjunct]  # "typo and double spacing": the first object said whole, not both half said
        text = compose(words, said, w, (), names)[0]
        if not _whole(words, w, names):
            return None
    return text if _CJK.search(text) else None
