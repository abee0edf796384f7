"""The lede: two to four sentences that open an edition, in its language.

Offline, it is written from the deep-read headlines and the busiest subsystems. With a model (``--drafter
openai``), the model writes it from the entries under the same grounding rule as a draft: it may cite only
PR numbers (``#N``) and ``@names`` of this edition, in two to four sentences; a lede that breaks the rule is
rejected and the offline lede is used, with the reason logged. The editor may rewrite it in the review.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Sequence

from prdigest.models import Edition, Entry, EntryStatus, Verdict
from prdigest.vocabulary import Vocabulary

log = logging.getLogger(__name__)

MAX_CHARS = 700
_CITED = re.compile(r"(?<![\w&])#(\d+)\b")
_NAMED = re.compile(r"(?<![\w.])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
#: A sentence ends at Chinese end punctuation, or at Latin end punctuation before a space ("3.0" does not end one).
_SENTENCE_END = re.compile(r"(?<=[。！？])\s*|(?<=[.!?][”\"’)）])\s+|(?<=[.!?])\s+")

_WORDS = {
    "zh-CN": {"count": "本期合并 {n} 个 PR，其中 {d} 篇值得精读。", "top": "最值得关注的是 {items}。",
              "join": "，以及 ", "busy": "改动最集中在 {areas}。", "area": "{name}（{n}）", "areas": "、",
              "reverts": "本期有 {n} 个 PR 回滚了先前的改动。", "done": "早先建议的后续事项中有 {n} 项已完成。",
              "item": "#{n}「{headline}」"},
    "en": {"count": "This week {n} PRs were merged, {d} of them worth a deep read.", "top": "The ones to study "
           "first are {items}.", "join": " and ", "busy": "Most of the work landed in {areas}.",
           "area": "{name} ({n})", "areas": ", ", "reverts": "{n} PRs revert earlier changes.",
           "done": "{n} follow-ups suggested in earlier editions were done.", "item": "#{n} “{headline}”"},
}


def _live(edition: Edition) -> list[Entry]:
    return [e for e in edition.entries if e.status is not EntryStatus.REJECTED]


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split()).rstrip("。.;；:：")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def offline_lede(edition: Edition, vocabulary: Vocabulary | None = None) -> str:
    """The lede from the deep-read headlines (the two largest) and the three busiest subsystems."""
    words = _WORDS.get(edition.language, _WORDS["en"])
    entries = _live(edition)
    if not entries:
        return ""
    deep = sorted((e for e in entries if e.verdict is Verdict.DEEP_READ),
                  key=lambda e: (-(e.additions + e.deletions), e.number))
    sentences = [words["count"].format(n=len(entries), d=len(deep))]
    if deep:
        items = [words["item"].format(n=e.number, headline=_short(e.headline)) for e in deep[:2]]
        sentences.append(words["top"].format(items=words["join"].join(items)))
    busy = Counter(s for e in entries for s in e.subsystems).most_common(3)
    if busy:
        names = (vocabulary or Vocabulary.open()).shown([n for n, _ in busy], edition.language)
        areas = [words["area"].format(name=shown, n=n) for shown, (_, n) in zip(names, busy)]
        sentences.append(words["busy"].format(areas=words["areas"].join(areas)))
    reverts = sum(1 for e in entries if any(r.kind == "reverts" for r in e.relations))
    done = sum(1 for i in edition.earlier_followups if i.status == "done")
    if reverts and len(sentences) < 4:
        sentences.append(words["reverts"].format(n=reverts))
    if done and len(sentences) < 4:
        sentences.append(words["done"].format(n=done))
    return ("" if edition.language == "zh-CN" else " ").join(sentences)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` (Chinese or Latin punctuation)."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def check_lede(text: str, edition: Edition) -> list[str]:
    """Why ``text`` cannot open ``edition`` (empty when it can): a PR number or @name not of this edition's
    live entries, fewer than two or more than four sentences, more than :data:`MAX_CHARS` characters."""
    entries = _live(edition)
    numbers = {e.number for e in entries}
    names = {e.author.lower() for e in entries}
    problems = [f"cites #{n}, which is not in {edition.name}" for n in
                dict.fromkeys(int(m) for m in _CITED.findall(text)) if n not in numbers]
    problems += [f"names @{n}, who wrote no PR of {edition.name}" for n in
                 dict.fromkeys(_NAMED.findall(text)) if n.lower() not in names]
    count = len(sentences(text))
    if not 2 <= count <= 4:
        problems.append(f"has {count} sentences (two to four)")
    if len(text) > MAX_CHARS:
        problems.append(f"has {len(text)} characters (at most {MAX_CHARS})")
    if "\n" in text.strip() or "<" in text:
        problems.append("is not plain prose (line breaks or markup)")
    return problems


Complete = Callable[[list[dict[str, str]]], str]


def lede_messages(edition: Edition) -> list[dict[str, str]]:
    """The chat messages asking a model for the lede (``prompts/lede.yaml``)."""
    from prdigest.drafting.prompts import load_prompt

    entries = [{"number": e.number, "author": e.author, "verdict": e.verdict.value, "headline": e.headline,
                "subsystems": e.subsystems} for e in _live(edition)]
    order = {Verdict.DEEP_READ: 0, Verdict.SKIM: 1, Verdict.SKIP: 2}
    entries.sort(key=lambda e: (order[Verdict(e["verdict"])], e["number"]))
    return load_prompt("lede").messages({"language": edition.language, "edition": edition.name,
                                         "entries": entries[:80]})


def write_lede(edition: Edition, complete: Complete | None = None, vocabulary: Vocabulary | None = None) -> str:
    """The edition's lede: the model's (``complete`` answers chat messages) when it passes :func:`check_lede`,
    else the offline lede (the reason is logged)."""
    fallback = offline_lede(edition, vocabulary)
    if complete is None or not _live(edition):
        return fallback
    try:
        text = " ".join(complete(lede_messages(edition)).split())
    except Exception as exc:  # the lede is never worth failing an edition for: say why, use the offline one
        log.warning("lede: the model failed (%s): the offline lede is used", type(exc).__name__)
        return fallback
    problems = check_lede(text, edition)
    if problems:
        log.warning("lede rejected by grounding (%s): the offline lede is used", "; ".join(problems))
        return fallback
    return text


def openai_complete(settings) -> Complete:  # type: ignore[no-untyped-def]
    """A :data:`Complete` over the configured OpenAI-compatible endpoint (no network I/O until called)."""
    import openai

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else "EMPTY"
    client = openai.OpenAI(api_key=key, base_url=settings.llm_base_url, timeout=settings.llm_timeout, max_retries=2)

    def complete(messages: Sequence[dict[str, str]]) -> str:
        answer = client.chat.completions.create(model=settings.model, messages=list(messages),  # type: ignore[arg-type]
                                                temperature=0.2, max_tokens=400)
        return answer.choices[0].message.content or ""

    return complete
