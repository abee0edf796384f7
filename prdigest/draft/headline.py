"""The headline: the title's verb and object restated in zh-CN or English, with the area in front.

The verb table, the zh glossary and the zh sentence frames are the phrasebook. A zh-CN headline is in one
language: composed from the phrasebook when every word of the title is in it (code and names aside), else
composed in Chinese from the PR's code facts (``重命名 `FusedMoE` 为 `FusedMoEFactory```, identifiers in code
spans), else the title kept whole after the area (``内核：Fuse the MoE align kernel``), never half-translated
(:mod:`prdigest.draft.language`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from prdigest.draft import learn
from prdigest.draft.language import code_words, mixes_languages
from prdigest.draft.phrasing import MAX_HEADLINE, cjk, draft_words, spaced
from prdigest.draft.point import Known, backticked, known, point
from prdigest.kernel.factlines import brief_line, fact_line, rank
from prdigest.kernel.i18n import DEFAULT, Section
from prdigest.kernel.models import Change, Language
from prdigest.kernel.prtext.signals import Signals, clean_line

#: The verbs a title may open with (its base forms, English as titles are written); how each is said in a
#: headline is the catalogs' ``draft.verbs.<base>`` (zh-CN: 新增; en: the past tense, "added").
_VERBS = (
    "add", "support", "enable", "fix", "correct", "optimize", "optimise", "speed up", "accelerate", "improve",
    "fuse", "refactor", "remove", "delete", "deprecate", "update", "upgrade", "bump", "implement", "introduce",
    "limit", "expand", "extend", "link", "wire", "integrate", "share", "ensure", "import", "read", "use",
    "constrain", "trim", "skip", "revert", "move", "migrate", "rename", "allow", "avoid", "clean up",
    "simplify", "handle", "validate", "reduce", "increase", "pin", "unify", "register", "port", "replace",
    "disable", "restore", "drop", "make", "set", "document", "cache", "expose", "split", "widen", "sync",
    "adjust", "align", "refresh", "parameterize", "apply", "adapt", "check", "prevent", "change", "rework",
    "reuse", "enhance", "modify", "initialize", "release", "upstream", "recompute", "bypass", "lower", "raise",
    "rewrite", "prune", "postpone", "defer", "tune", "guard", "resolve", "centralize", "cancel", "obtain", "clamp",
    "discard", "separate", "keep", "reinstall", "install", "reapply", "translate",
)


def _inflections(base: str) -> tuple[str, ...]:
    stem = base[:-1] if base.endswith("e") else base
    ies = (base[:-1] + "ies", base[:-1] + "ied") if base.endswith("y") else ()
    return (base, base + "s", base + "es", base + "d", base + "ed", stem + "ing", base + base[-1] + "ed",
            base + base[-1] + "ing", *ies)


#: Every inflected form ("adds", "adding", "pinned", "unified") → its base verb.
_VERB_FORMS = {form: base for base in _VERBS if " " not in base for form in reversed(_inflections(base))}
#: Trailing nouns that are really the verb: "DCP support" → support DCP.
_NOUN_VERBS = {"support": "support", "refactor": "refactor", "refactoring": "refactor", "fix": "fix",
               "bug": "fix", "cleanup": "clean up", "optimization": "optimize", "compatibility": "support"}
#: The prepositions a title's place phrase opens with, where a composed headline splits it (``draft.frames``).
_PREPOSITIONS = ("under", "for", "from", "in", "on", "at", "to", "with", "via", "into", "between", "across")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_SPAN = re.compile(r"`[^`]+`")
_TWICE = re.compile(r"([\u4e00-\u9fff]{2,})\s*\1")
_TITLE_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*[A-Za-z0-9_]")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
_LONG_ASIDE = re.compile(r"\s*\([^()]{24,}\)\s*$")  # "(/inference does NOT bypass …)" goes; "(SM100)" stays
_ANY_ASIDE = re.compile(r"\s*\([^()]*\)\s*$")
#: Characters of description past which the author's own words say the point (the verdict's "unexplained" bound).
_DESCRIBED = 150
_VAGUE_TAIL = re.compile(r"\s+in (?:some|certain|rare|all) cases$", re.IGNORECASE)


def _verb(words: list[str]) -> tuple[str, int] | None:
    """The base verb that opens ``words`` and how many words it spans."""
    if len(words) >= 2 and f"{words[0]} {words[1]}".lower() in _VERBS:
        return f"{words[0]} {words[1]}".lower(), 2
    word = words[0].lower().rstrip(":,.") if words else ""
    base = _VERB_FORMS.get(word) or _variant(word)
    return (base, 1) if base else None


def _variant(word: str) -> str | None:
    """The verb a shortened or inflected variant stands for ("refact", "refactored" → refactor): the one base
    verb that the word begins, at five letters or more, or that begins the word (an inflection)."""
    if len(word) < 5 or not word.isalpha():
        return None
    found = {base for base in _VERBS if " " not in base and len(base) >= 5
             and (base.startswith(word) and len(word) >= 0.7 * len(base) or word.startswith(base))}
    return found.pop() if len(found) == 1 else None


@lru_cache(maxsize=8)
def _glossary(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(rf"(?<![\w/.-]){re.escape(term)}(?![\w/.-])", re.IGNORECASE), said)
                 for term, said in pairs)


def _terms(text: str, w: Section) -> str:
    """Known terms in the headline's language (``draft.glossary``, longest first); "X and <verb> Y" becomes
    "X，并<动词> Y", other "and"s "与" (``draft.headline.and_verb``, ``and_other``)."""
    for pattern, said in _glossary(tuple((str(t), str(x)) for t, x in w.get("glossary", ()))):
        text = pattern.sub(said, text)
    text = _TWICE.sub(r"\1", text)  # "typos error": 拼写错误, not 拼写错误 错误
    h = w["headline"]

    def conj(match: re.Match[str]) -> str:
        found = _verb([match.group(1)])
        return h["and_verb"].format(verb=w["verbs"][found[0]]) if found else h["and_other"].format(word=match.group(1))
    return re.sub(r"\s+and\s+(\S+)\s*", conj, text).replace(": ", h["colon"])


def _and(text: str, w: Section) -> str:
    """"X and trim Y" → "X and trimmed Y": a second verb is said like the first (``draft.verbs``)."""
    def past(match: re.Match[str]) -> str:
        found = _verb([match.group(1)])
        return w["headline"]["and_verb"].format(verb=w["verbs"][found[0]]) if found else match.group(0)
    return re.sub(r"\band (\w+)", past, text)


def _parse_title(s: Signals, short: bool) -> tuple[str | None, str, str, str]:
    """(verb, object, preposition, prepositional part) of the title without tags and backticks."""
    text = _ARTICLE.sub("", s.core_title.replace("`", "")).strip(" .:")
    text = _VAGUE_TAIL.sub("", _LONG_ASIDE.sub("", text) or text)
    if short:
        text = _ANY_ASIDE.sub("", text) or text
    words = text.split()
    found = _verb(words)
    verb, rest = (found[0], " ".join(words[found[1]:])) if found else (None, text)
    prep, head, tail = "", rest, ""
    spots = [(m.start(), p) for p in _PREPOSITIONS for m in [re.search(rf"(?:^|\s){p}\s", rest)] if m]
    if spots:
        start, prep = min(spots)
        head, tail = rest[:start].strip(), rest[start:].strip()[len(prep):].strip()
    if verb is None:
        last = head.rsplit(" ", 1)
        if len(last) == 2 and last[1].lower() in _NOUN_VERBS:
            verb, head = _NOUN_VERBS[last[1].lower()], last[0]
        elif s.is_bugfix:
            verb = "fix"
        elif s.new_sources:
            verb = "add"
    return verb, _ARTICLE.sub("", head), prep, _ARTICLE.sub("", tail)


def _names(s: Signals) -> Known:
    """The names the PR's own files, code, title and description use (:func:`prdigest.draft.point.known`)."""
    return known((f.path for f in s.files), s.identifiers, f"{s.title}\n{s.body}")


def _statement(s: Signals, w: Section, short: int) -> tuple[str, bool]:
    """The change as a phrase, and whether it opens with a verb (so an area prefix may lower-case it). A language
    written without spaces (``draft.spacing: cjk``) composes it from its frames and glossary; otherwise the
    title's own words stay, after the verb as ``draft.verbs`` says it."""
    zh = cjk(w)
    if s.is_revert:
        # In Chinese, the reverted change's point; its English title stays in the link line.
        said = point(s.core_title, _parse_title(s, False)[0], w, _verb, _names(s)) if zh else None
        return w["headline"]["revert"].format(title=said or s.core_title), True
    verb, head, prep, tail = _parse_title(s, short > 0)
    if short > 1 and prep and head:
        prep, tail = "", ""  # still too long: the place phrase goes first
    if zh:
        second = re.search(r"\s+and\s+(\S+)", tail)
        if second and _verb([second.group(1)]):
            tail = tail[: second.start()]  # a second clause after the place phrase: too much for a headline
        v, a, b = (w["verbs"][verb] if verb else ""), _terms(head, w), _terms(tail, w)
        if not prep:
            return f"{v}{a}", bool(verb)
        if not verb:
            return (w["headline"]["for_frame"].format(a=a, b=b) if prep == "for"
                    else _terms(f"{head} {prep} {tail}", w)), False
        return w["frames"][prep].format(v=v, a=a, b=b), True
    rest = " ".join(x for x in (head.replace(": ", ", "), prep, tail) if x)
    if verb:
        return _and(f"{w['verbs'][verb]} {rest}".strip(), w), True
    return rest[:1].upper() + rest[1:], False


def from_facts(s: Signals, limit: int = MAX_HEADLINE, language: str = DEFAULT) -> str | None:
    """The change said in Chinese from its code facts (``移除 `Int4CPULayout` 等 5 项改动``), None when the PR has
    none or none fits in ``limit``. The most important fact first (breaking, then API, kernels, files), those the
    title names before the others, tests and implementation changes last."""
    words = set(_TITLE_WORD.findall(s.core_title))

    def named(c: Change) -> bool:
        return any(v and (v in words or v.rsplit(".", 1)[-1] in words) for v in (c.symbol, c.before, c.after))

    facts = sorted(s.changes, key=lambda c: (rank(c)[0], not named(c), {"body": 1, "tests": 2}.get(c.kind, 0)))
    if not facts:
        return None
    h = draft_words(language)["headline"]
    if len(facts) == 2:
        both = h["facts_two"].format(first=fact_line(facts[0], language), second=fact_line(facts[1], language))
        if len(both) <= limit:
            return both
    for say in (fact_line, brief_line):  # a long first fact (a module path) gives way to one that fits
        for fact in facts[:10]:
            line = say(fact, language)  # the main fact; the entry's facts list the others
            if len(line) <= limit:
                return line
    return None


def headline(s: Signals, lang: Language) -> str:
    """A short statement of the change in ``lang``, never the title itself."""
    w = draft_words(lang)
    h, lang, zh = w["headline"], w.language, cjk(w)
    area = next((a for a in s.title_areas if a in s.areas), s.areas[0] if s.areas else None)
    label = s.vocabulary.label(area, lang) if area and area != s.vocabulary.fallback.name else ""
    fallback = label or h["change"]
    if not s.core_title:
        if s.files:
            return clean_line(h["changes_to"].format(label=fallback, path=s.files[0].path), MAX_HEADLINE)
        return h["untitled"].format(n=s.number)
    text, whole = "", False
    code = code_words([f.path for f in s.files], s.identifiers) if zh else frozenset()
    # A kernel's point read off its code (a new kernel put to use, its numerics fixed, a new mode) when no
    # description says more than the title: a Chinese headline cannot say the English title whole.
    lesson = learn.kernel_fact(s) if zh and len(s.body) < _DESCRIBED else None
    said_kernel = next((t for t in ((fact_line(lesson[1], lang), brief_line(lesson[1], lang)) if lesson else ())
                        if len(t) + len(label) + 1 <= MAX_HEADLINE), None)
    for short in (0, 1, 2):
        text, verbed = (said_kernel, True) if said_kernel else _statement(s, w, short)
        if zh and (mixes_languages(text, code) or not _CJK.search(text)):
            # The title's point in Chinese (its verb, names and known terms), else its main code fact, else the
            # files it changed: never the English title (kept in the link line) nor a count of changes.
            verb = _parse_title(s, short > 0)[0] if not s.is_revert else None
            said = point(s.core_title, verb, w, _verb, _names(s))
            fact = from_facts(s, MAX_HEADLINE - len(label) - 1, lang)
            names = set(_SPAN.findall(said or ""))
            # The main fact first when it names everything the title's point names, and says more of it.
            # A fact that only says a body changed ("修改 `X` 的实现") says less than any point of the title.
            bodies = all(c.kind in ("body", "tests") for c in s.changes)
            candidates = (fact, said) if fact and names and names <= set(_SPAN.findall(fact)) and not bodies \
                else (said, fact)
            composed = next((c for c in candidates if c is not None and not mixes_languages(c, code)), None)
            if composed is not None:
                text, verbed = composed, True
            elif s.files:
                text, verbed = h["changes_to"].format(label=fallback, path=s.files[0].path), False
                label = ""
            else:  # no file to point to: the area, then the title whole, never half translated
                text, whole = s.core_title, True
        if whole:
            text = h["labelled"].format(label=fallback, text=text)  # the area, then the title as its author wrote it
        elif label and label.lower() not in text.lower():
            text = h["labelled"].format(label=label, text=text if zh or not verbed else text[:1].lower() + text[1:])
        elif not zh:
            text = text[:1].upper() + text[1:]
        if len(text) <= MAX_HEADLINE:
            break
    if s.max_factor and not s.is_revert and not whole:
        suffix = h["up_to"].format(factor=s.max_factor, times=s.max_factor[:-1])
        if len(text) + len(suffix) <= MAX_HEADLINE:
            text += suffix
    if zh and not s.is_revert:
        text = backticked(text, code)  # code names as code, whatever composed the headline
    text = spaced(text, w)
    if text.strip().lower() == s.title.strip().lower():
        text = h["labelled"].format(label=fallback, text=text)
    return clean_line(text, MAX_HEADLINE)


def intent(s: Signals, lang: Language) -> str | None:
    """The title's point in ``lang``: what the PR sets out to do (its verb and object, a purpose clause), for
    the entry's first sentence; None for a revert or when it cannot be said in that language alone."""
    if not s.core_title or s.is_revert:
        return None
    w = draft_words(lang)
    if not cjk(w):
        return clean_line(_statement(s, w, 1)[0], MAX_HEADLINE)
    said = point(s.core_title, _parse_title(s, True)[0], w, _verb, _names(s))
    code = code_words([f.path for f in s.files], s.identifiers)
    return backticked(said, code) if said and not mixes_languages(said, code) else None
