"""Kinds of change that readers study closely in any repo, read from a PR's title, description and files.

Each kind names a contract that moved, whatever the repo calls its parts: support for a new model or
architecture that later ones copy, what a cache owns or keys on, a fix of silently wrong results, what an
API's output means, a default flipped on measurements, a new extension point. The words are generic
English; a repo's own vocabulary stays in its rules file. Every pattern is linear and bounded, like
:mod:`prdigest.kernel.prtext.prose`, and each kind keeps the phrase that found it, for the rationale to quote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prdigest.kernel.prtext.files import SOURCE, FileFact
from prdigest.kernel.prtext.prose import clean_line

#: A new source file at least this big under a models folder is a new model or architecture, not a stub.
NEW_ARCHITECTURE_LINES = 150


def _compile(pattern: str) -> re.Pattern[str]:
    # Descriptions wrap lines anywhere: a space in a pattern is any one whitespace character.
    return re.compile(pattern.replace(" ", r"\s"), re.IGNORECASE)


_MODELS_DIR = re.compile(r"(?:^|/)(?:models?|architectures?)/", re.IGNORECASE)
_FIX = re.compile(r"\b(fix\w*|bug\w*|regress\w*|broke\w*|hotfix)\b", re.IGNORECASE)
_SILENT = _compile(
    r"\b(silent(?:ly)?|wrong (?:results?|outputs?|answers?|tokens?|values?|logits|logprobs|generations?)|"
    r"incorrect (?:results?|outputs?|values?|logits|logprobs|tokens?|answers?|generations?)|garbage (?:outputs?|"
    r"tokens?|text)|gibberish|correctness (?:bug|issue|problem|fix)|numerically (?:wrong|incorrect)|"
    r"accuracy (?:drop|regression|loss|degradation)|corrupt(?:s|ed|ion)? (?:the )?(?:outputs?|results?|data|"
    r"state|cache))\b")
_CACHE = _compile(
    r"\b(cache[ _-]?(?:keys?|ownership|invalidation|lifetime|salt)|(?:keyed|hashed) (?:on|by)|"
    r"cach\w* (?:now )?(?:owns?|is owned|are owned|keys on|is keyed|are keyed)|owns? the \w+ cache|"
    r"(?:invalidates?|evicts?) the \w+ cache|cache hits? (?:across|between|for))\b")
_API_MEANING = _compile(
    r"\b(now returns?|no longer returns?|(?:returns?|reports?) (?:the )?\w+(?: \w+)? instead of|"
    r"(?:fields?|responses?|outputs?|return values?|status codes?|finish_reason|usage|logprobs?|token counts?) "
    r"(?:\w+ )?now (?:means?|counts?|includes?|excludes?|reports?|contains?)|semantics of|meaning of|"
    r"\w[^`\n]{0,60}` (?:\w+ )?now (?:means?|counts?|includes?|excludes?|reports?|contains?|returns?)|"
    r"changes? (?:the )?(?:semantics|meaning)|(?:API|response|output) semantics)\b")
# "Disabled by default" is an opt-in, not a flip: what users get without asking stays the same.
_DEFAULT = _compile(
    r"\b((?:enabled?|turned on|on) by default|default(?:s)? (?:to|is now|now|becomes)|"
    r"(?:flip|chang|switch)\w* (?:the|its) default|new default|makes? \S+ (?:the )?default|as the default)\b")
_EXTENSION_TITLE = _compile(
    r"\b(?:add|adds|adding|introduce\w*|new)\b.{0,60}?\b(backends?|engines?|connectors?|protocols?|interfaces?|"
    r"registry|plugins?|abstractions?|frameworks?|callbacks?|hooks?)\b")
_EXTENSION_BODY = _compile(
    r"\b(?:adds?|introduces?|defines?) (?:a |an |the )?(?:new )?(?:\w+ ){0,2}?(callback protocol|protocol|"
    r"interface|abstraction|base class|extension point|registry|plugin (?:point|system)|hooks?)\b")


@dataclass(frozen=True)
class Kind:
    """One kind of change found in a PR, with the phrase (or file) that shows it."""

    key: str
    evidence: str


def _phrase(pattern: re.Pattern[str], text: str) -> str | None:
    match = pattern.search(text)
    return clean_line(match.group(0), 60) if match else None


def deep_kinds(title: str, body: str, files: tuple[FileFact, ...], *, is_bugfix: bool,
               measured: bool) -> tuple[Kind, ...]:
    """The kinds of change ``title``, ``body`` and ``files`` show, at most one of each, in a fixed order.

    ``measured``: the body reports performance or accuracy figures (a default flipped on a study).
    """
    prose = f"{title}\n{body}"
    sources = [f for f in files if f.kind == SOURCE]
    found: list[Kind] = []
    new_model = next((f for f in sources if f.is_new and f.additions >= NEW_ARCHITECTURE_LINES
                      and _MODELS_DIR.search(f.path)), None)
    if new_model is not None:
        found.append(Kind("new-architecture", new_model.path))
    if sources and (phrase := _phrase(_CACHE, prose)):
        found.append(Kind("cache-contract", phrase))
    if sources and (is_bugfix or _FIX.search(title)) and (phrase := _phrase(_SILENT, prose)):
        found.append(Kind("silent-fix", phrase))
    if sources and (phrase := _phrase(_API_MEANING, prose)):
        found.append(Kind("api-meaning", phrase))
    if sources and measured and (phrase := _phrase(_DEFAULT, prose)):
        found.append(Kind("default-flip", phrase))
    if sources and (phrase := _phrase(_EXTENSION_TITLE, title) or _phrase(_EXTENSION_BODY, body)):
        found.append(Kind("extension-point", phrase))
    return tuple(found)
