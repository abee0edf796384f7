"""The grounding check: every name a draft cites must occur in the PR's own data.

A citation is a backticked span, a path-like token (``a/b.py``, ``kernel.cu``) or a snake_case
identifier written in prose. The PR's data is its title, body, labels, file paths (old and new), diff
hunks, review comments with their authors, and its code facts (every name and shape a fact states). A citation is
supported when it occurs there verbatim
(case-sensitive, so a path suffix or a file's base name counts); a code-like span such as
``intermediate_tensors is None`` is supported when each identifier in it occurs. Unsupported
citations are listed in ``DraftEntry.grounding`` and the entry goes to the editor marked
needs-editing: a draft must not send readers to a file or function the PR never touched.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from prdigest.kernel.models import DraftEntry, PullRequest
from prdigest.kernel.text import CODE_SPAN

_EXTENSIONS = r"(?:py|pyi|cu|cuh|cpp|cc|c|h|hpp|rs|go|js|ts|md|rst|ya?ml|toml|json|txt|sh|cfg|ini)"
# In prose (outside backticks) only unmistakable paths count: a file name with a code extension, or
# three or more segments with letters. "and/or", "TP/PP" or "+157/-46" are not citations.
_PATHLIKE = re.compile(
    r"(?<![\w/.:+-])(?:[A-Za-z_][\w.-]*/)*[A-Za-z_][\w-]*\." + _EXTENSIONS + r"\b"
    r"|(?<![\w/.:+-])[A-Za-z_][\w.-]*(?:/[A-Za-z_][\w.-]*){2,}"
)
_SNAKE = re.compile(r"(?<![\w`/.])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w`])")
_URL = re.compile(r"\bhttps?://\S+")
# Identifier-like: has an underscore, a dot or slash between word characters, a digit next to a
# letter, or an inner capital (camelCase/PascalCase). Plain words (`is`, `None`, `batch`) are not.
_IDENT_TOKEN = re.compile(r"[A-Za-z_][\w.:/-]*")
_IDENTIFIER_SIGNAL = re.compile(r"_|\w[./:]\w|[A-Za-z]\d|\d[A-Za-z]|[a-z][A-Z]")


def corpus(pr: PullRequest) -> str:
    """Everything the PR says about itself, as one string to search."""
    parts: list[str] = [pr.title, pr.body, pr.author, *pr.labels]
    for change in pr.files:
        parts += [change.path, change.previous_path or "", change.patch or ""]
    for comment in [*pr.review_comments, *pr.comments]:
        parts += [comment.author, comment.body, comment.path or ""]
    for review in pr.reviews:
        parts += [review.author, review.body]
    for issue in pr.linked_issues:
        parts += [f"#{issue.number}", issue.title, issue.body]
    for fact in pr.changes:  # read from the files: a symbol a fact names is the PR's own
        parts += [fact.symbol, fact.path, fact.before, fact.after, fact.detail, *fact.detail.split(",")]
    return "\n".join(parts)


def _normalise(span: str) -> str:
    span = span.strip().strip(".,;:!?，。；：！？、")
    if span.endswith("()"):
        span = span[:-2]
    return span.strip()


def _supported(span: str, text: str) -> bool:
    if span in text or " ".join(span.split()) in " ".join(text.split()):
        return True
    # `pkg.mod.func(x)` or `del hf_config.index_topk`: every identifier-like part must occur.
    parts = [t.strip(".:/-") for t in _IDENT_TOKEN.findall(span)]
    identifiers = [t for t in parts if _IDENTIFIER_SIGNAL.search(t)]
    if len(parts) > 1 and identifiers:
        return all(t in text for t in identifiers)
    return False


def _citations(texts: Iterable[str]) -> list[str]:
    found: list[str] = []
    for raw in texts:
        text = _URL.sub(" ", raw)
        for match in CODE_SPAN.finditer(text):
            span = _normalise(match.group(1))
            if span and re.search(r"[A-Za-z0-9_]", span):
                found.append(span)
        prose = CODE_SPAN.sub(" ", text)
        found += [_normalise(m.group(0)) for m in _PATHLIKE.finditer(prose)]
        found += [m.group(0) for m in _SNAKE.finditer(prose)]
    return list(dict.fromkeys(c for c in found if c))


def citations(draft: DraftEntry) -> list[str]:
    """The names ``draft`` cites, in order of first appearance."""
    return _citations([draft.headline, draft.rationale, *draft.focus, *draft.followups, draft.audience])


def unsupported(draft: DraftEntry, pr: PullRequest, given: str = "") -> list[str]:
    """The citations of ``draft`` that ``pr``'s data (and ``given``: what else the drafter was given, such as the
    code facts and the widened hunks of its prompt) does not contain."""
    text = corpus(pr) + ("\n" + given if given else "")
    return [c for c in citations(draft) if not _supported(c, text)]


def check(draft: DraftEntry, pr: PullRequest, given: str = "") -> DraftEntry:
    """``draft`` with its grounding report filled in; any unsupported citation marks it needs-editing."""
    missing = unsupported(draft, pr, given)
    if not missing:
        return draft.model_copy(update={"grounding": []})
    shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
    return draft.model_copy(update={
        "grounding": missing, "needs_editing": True,
        "warnings": [*draft.warnings, f"cites names not found in the PR's data: {shown}"],
    })
