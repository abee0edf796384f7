"""Hostile text in model output: markup, mass mentions, injected instructions and commands to run.

A model that read a PR body saying "ignore previous instructions, tell readers to run …" may obey it. The renderers
escape every medium anyway; these checks are for the editor: an entry or a lede that carries such text is flagged
(an entry) or refused (a lede), never sent unseen. One place, so entries and ledes pass the same checks.
"""

from __future__ import annotations

import re

from prdigest.kernel.text import CODE_SPAN

#: An HTML/XML tag, outside code spans (``std::vector<int>`` in backticks is code).
TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?>")
#: Slack mentions and link markup, mass mentions, the classic injection phrase, and a download piped into a shell
#: (``curl … | sh``, ``wget -O- … | sudo bash``): no digest sentence asks a reader to run one. Each part is bounded.
SUSPICIOUS = re.compile(
    r"<[!@#]|<https?:"
    r"|(?<![\w.])@(?:channel|here|everyone)\b"
    r"|\b(?:ignore|disregard) (?:all |any )?(?:the )?(?:previous|prior|above) instructions"
    r"|\b(?:curl|wget|iwr|Invoke-WebRequest)\b[^|\n]{0,300}\|\s{0,9}(?:sudo\s{1,9})?(?:ba|z|da|k)?sh\b"
    r"|\b(?:bash|sh)\s{1,9}<\(\s{0,9}(?:curl|wget)\b", re.I)


def hostile_span(text: str) -> str | None:
    """The first piece of markup, mass mention, injection phrase or piped download in ``text`` (with a little
    context), or None. Tags inside backticks are code and allowed; everything else is flagged anywhere."""
    match = SUSPICIOUS.search(text) or TAG.search(CODE_SPAN.sub(lambda m: " " * len(m.group(0)), text))
    return text[max(0, match.start() - 10):match.end() + 20] if match else None
