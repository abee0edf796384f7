"""The self-service pages: Jinja2 with autoescape (every value a reader or a readers file gave is escaped),
one stylesheet inlined and allowed by its hash in the Content-Security-Policy, no script at all."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from prdigest.kernel.i18n import Section, messages
from prdigest.kernel.models import Verdict
from prdigest.readers.file import Reader
from prdigest.readers.selfservice import Choice, addresses, apply
from prdigest.readers.selfservice.choices import Listing
from prdigest.readers.selfservice.form import NUMBER_FIELDS, bounds, offer

_HERE = Path(__file__).parent / "templates"
_env = Environment(loader=FileSystemLoader(_HERE), autoescape=select_autoescape(["j2", "html"], default=True),
                   undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
CSS = (_HERE / "style.css").read_text(encoding="utf-8").strip()
#: The only style the pages may apply; nothing else (no script, frame, image or font) may load.
CSP = ("default-src 'none'; style-src 'sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
       + "'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


def strings(language: str) -> Section:
    """What the pages say in ``language``: the catalog's ``web.*`` (English for a message it lacks)."""
    return messages(language, "web")


#: The links to the page in the other languages: (URL, language tag, the language's own name) each.
Switch = list[tuple[str, str, str]]


def _page(template: str, language: str, switch: Switch | None, **values: object) -> str:
    return _env.get_template(template).render(lang=language, ui=strings(language), css=Markup(CSS), switch=switch,
                                              **values)


def message_page(language: str, heading_key: str, *line_keys: str, switch: Switch | None = None) -> str:
    """A page that only says something (a bad link, a removed reader, too many requests)."""
    ui = strings(language)
    return _page("message.html.j2", language, switch, heading=ui[heading_key], lines=[ui[k] for k in line_keys])


def unsubscribe_page(language: str, repo: str, *, action: str, prefs_url: str, done: str | None,
                     switch: Switch | None) -> str:
    """The confirmation page of an unsubscribe link (GET never unsubscribes), or its result."""
    return _page("unsubscribe.html.j2", language, switch, repo=repo, action=action, prefs_url=prefs_url, done=done)


def _masked(address: str) -> str:
    # The page is reachable by whoever holds the link: show enough to recognise an address, not all of it.
    if "@" in address:
        user, _, domain = address.partition("@")
        return f"{user[:1]}…@{domain}"
    return address


def preferences_page(language: str, repo: str, reader: Reader, choice: Choice, listing: Listing, *, action: str,
                     csrf: str, notice: str | None = None, notice_kind: str = "ok", switch: Switch | None = None,
                     medium: str | None = None) -> str:
    """The preferences form, filled with what the next edition would use for this reader (``medium``: where the
    link came; a shared channel's link offers no media and no unsubscribe)."""
    ui = strings(language)
    known = frozenset(s[0] for s in listing.subsystems)
    now = apply(reader, choice.preferences, known)
    offered = offer(reader, listing, medium)
    subsystems = [{"name": s[0], "label": listing.label(s, language), "checked": s[0] in now.subsystems}
                  for s in offered.subsystems]
    by_name = {s[0]: listing.label(s, language) for s in listing.subsystems}
    file_subsystems = (", ".join(by_name.get(n, n) for n in reader.subsystems) or ui["all_subsystems"])
    verdicts = [{"value": v.value, "label": v.label(language), "checked": v is now.min_verdict}
                for v in (Verdict.SKIP, Verdict.SKIM, Verdict.DEEP_READ)]
    numbers = [{"name": n, "label": ui.get(n, n), "min": bounds(n)[0] or 0,
                "help": f'{ui.get(f"{n}_help", "")} {ui["from_file"].format(value=getattr(reader, n, "—"))}',
                "max": bounds(n)[1] or 9999, "value": "" if getattr(now, n, None) is None else str(getattr(now, n))}
               for n in NUMBER_FIELDS]
    mine = addresses(reader)
    kept = set(addresses(now))
    media = [{"name": m, "label": ui.get(f"medium_{m}", m), "address": _masked(mine[m]), "checked": m in kept}
             for m in offered.media]
    return _page("preferences.html.j2", language, switch, repo=repo, name=reader.name, action=action, csrf=csrf,
                 notice=notice, notice_kind=notice_kind, unsubscribed=choice.any_unsubscribed, subsystems=subsystems,
                 file_subsystems=file_subsystems, verdicts=verdicts, file_verdict=reader.min_verdict.label(language),
                 numbers=numbers, media=media, subscription=offered.subscription)
