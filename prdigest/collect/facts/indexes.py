"""Package indexes users install from: the URL an install command or pip setting points at
(``--extra-index-url URL``, ``--index-url URL``, ``--find-links URL``, ``index-url = URL``) in the install docs,
READMEs, Dockerfiles and requirement files. A moved index is something every reader who installs that way
must change, as a pin is: each is a ``dependency`` fact whose symbol is the option and whose values are URLs.
"""

from __future__ import annotations

import re

from prdigest.kernel.models import Change

#: The options and settings that name an index, as users write them (the symbol of the fact).
OPTIONS = ("--extra-index-url", "--index-url", "--find-links")
_OPTION = re.compile(r"(--extra-index-url|--extra-index|--index-url|--find-links|(?<![\w-])-[if])(?:\s+|=)"
                     r"[\"']?(https?://[^\s\"'`\\|)]+)")
_SETTING = re.compile(r"^[ \t]*(extra-index-url|index-url|find-links)\s*=\s*[\"']?(https?://[^\s\"'`]+)", re.MULTILINE)
_ALIASES = {"--extra-index": "--extra-index-url", "-i": "--index-url", "-f": "--find-links"}
_FILES = re.compile(r"(\.(md|rst)$|(^|/)README[^/]*$|(^|/)(Dockerfile[^/]*|[^/]+\.dockerfile|Containerfile[^/]*)$|"
                    r"(^|/)requirements[^/]*\.(txt|in)$|(^|/)pip\.conf$)", re.IGNORECASE)


def is_index_file(path: str) -> bool:
    """Files where users read or run an install command (translations say the same again: not read)."""
    return bool(_FILES.search(path)) and not path.endswith(".po") and "/locale/" not in path


def is_index(change: Change) -> bool:
    """Whether a ``dependency`` fact is an index moving rather than a version."""
    return change.kind == "dependency" and change.symbol in OPTIONS


def urls(text: str | None) -> dict[str, set[str]]:
    """Option → the index URLs one version of a file gives it (a URL with a placeholder is no index)."""
    found: dict[str, set[str]] = {}
    if not text:
        return found
    matches = [m for m in _OPTION.finditer(text) if "#" not in text[text.rfind("\n", 0, m.start()) + 1:m.start()]]
    for option, url in [*(m.groups() for m in matches), *_SETTING.findall(text)]:
        # a commented-out option (``#--extra-index-url …``) is no index anyone installs from
        name = _ALIASES.get(option, option if option.startswith("-") else f"--{option}")
        url = url.rstrip(".,;:")
        if not re.search(r"[${}<>]", url):
            found.setdefault(name, set()).add(url.rstrip("/"))
    return found


def compare(path: str, before: str | None, after: str | None, *, before_path: str | None = None) -> list[Change]:
    """One fact per index an option gains: ``changed`` when it replaces the one URL the option lost, else
    ``added``. An index only dropped is no fact: installing keeps working without it."""
    del before_path  # the facts name the file after the change: only what it now says asks anything
    old, new = urls(before), urls(after)
    facts: list[Change] = []
    for option in sorted(new):
        gone, came = sorted(old.get(option, set()) - new[option]), sorted(new[option] - old.get(option, set()))
        for url in came:
            b = gone[0] if len(gone) == 1 and len(came) == 1 else ""
            facts.append(Change(kind="dependency", symbol=option, path=path, line=_line(after, url), before=b,
                                after=url, detail="changed" if b else "added", language="text"))
    return facts


def _line(text: str | None, url: str) -> int:
    for number, line in enumerate((text or "").splitlines(), 1):
        if url in line:
            return number
    return 0
