"""The issues a PR closes or names, read from its title and description, most telling first: GitHub's closing
keywords (``Fixes #N``, ``Closes owner/repo#N``, ``Resolves <issue URL>``), then issues named as such
(``issue #N``, an issue URL of the same repo), then any other ``#N`` (which may be a PR: the collector asks,
and a PR's number is left to the relations).

Numbers in code (fenced blocks, inline code), in HTML comments (the PR template's) and of other repositories
are not links. At most :data:`MAX_LINKED` numbers a PR: a release PR naming a hundred must not cost a hundred
requests.
"""

from __future__ import annotations

import re

from prdigest.kernel.links import page_pattern

#: Issues fetched per PR at most.
MAX_LINKED = 4
_SCAN = 65_536

_CODE = re.compile(r"```.*?(?:```|\Z)|~~~.*?(?:~~~|\Z)|`[^`\n]{0,400}`|<!--.*?(?:-->|\Z)", re.DOTALL)
_REF = (r"(?:(?P<repo>[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)?#(?P<n>\d{1,9})"
        r"|" + page_pattern("issues|pull", "urepo", "un") + r")(?![\w-])")
_CLOSING = re.compile(r"(?i)\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+" + _REF)
_NAMED = re.compile(r"(?i)\b(?:issues?|bugs?|tickets?)\s*:?\s*" + _REF)
_ISSUE_URL = re.compile(page_pattern("issues", "urepo", "un") + r"(?!\d)")
_ANY = re.compile(r"(?<![\w/&])" + _REF)


def _number(match: re.Match[str], repo: str) -> int | None:
    groups = match.groupdict()
    named = groups.get("repo") or groups.get("urepo")
    if named is not None and named.lower() != repo.lower():
        return None
    value = groups.get("n") or groups.get("un")
    return int(value) if value and not value.startswith("0") else None


def linked_numbers(title: str, body: str, repo: str, number: int = 0, limit: int = MAX_LINKED) -> list[int]:
    """The numbers ``title`` and ``body`` close or name as issues, closing keywords first, each once, at most
    ``limit``; never ``number`` (the PR itself)."""
    text = _CODE.sub(" ", f"{title}\n{(body or '')[:_SCAN]}")
    found: list[int] = []
    for pattern in (_CLOSING, _NAMED, _ISSUE_URL, _ANY):
        for match in pattern.finditer(text):
            n = _number(match, repo)
            if n is not None and n != number and n not in found:
                found.append(n)
    return found[:limit]
