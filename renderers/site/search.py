"""The client-side search index: ``search-index.json``, read by ``assets/site.js`` (no server needed).

Compact on purpose (a year of a busy repo is ~15,000 entries): editions are listed once and entries
refer to them by position; each entry is ``[edition, number, verdict, headline, title, author]`` with the
verdict as an index into ``verdicts``. Text is the cleaned, capped view text; the script inserts it with
``textContent``, never as HTML.
"""

from __future__ import annotations

import json

from prdigest.kernel.models import Verdict
from renderers.site.pages import EditionPage

VERDICTS = [v for v in sorted(Verdict, key=lambda v: -v.rank)]


def search_index(pages: list[EditionPage], language: str) -> bytes:
    """The index over every archived entry, newest edition first."""
    editions = [[p.path, p.name] for p in pages]
    entries = [[i, e.number, VERDICTS.index(e.verdict), e.headline, "" if e.title == e.headline else e.title,
                e.author] for i, p in enumerate(pages) for e in p.views]
    data = {"version": 1, "verdicts": [[v.value, v.label(language)] for v in VERDICTS],
            "editions": editions, "entries": entries}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
