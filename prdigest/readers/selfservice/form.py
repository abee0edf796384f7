"""The preferences form as data: what it offers one reader, and the :class:`Preferences` a submission makes.

No HTTP here: ``digest web`` hands over the submitted fields (name → values) and shows what comes back.
A value equal to the readers file's is stored as None ("as the file says"), so an editor's later change
to the file still reaches a reader who never changed that field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import get_args

from pydantic import ValidationError

from prdigest.kernel.errors import first_problem
from prdigest.kernel.models import Verdict
from prdigest.readers.file import Reader
from prdigest.readers.selfservice.choices import Listing
from prdigest.readers.selfservice.preferences import Preferences, addresses, personal_media

#: Fields shown as a number input: every ``int`` field of Preferences (a reader's ``budget``).
NUMBER_FIELDS = tuple(name for name, f in Preferences.model_fields.items() if int in get_args(f.annotation))


def bounds(name: str) -> tuple[int | None, int | None]:
    """The (ge, le) bounds Preferences declares for a number field, for the form's min and max."""
    found: dict[str, int] = {}
    for rule in Preferences.model_fields[name].metadata:
        for key in ("ge", "le"):
            if getattr(rule, key, None) is not None:
                found[key] = getattr(rule, key)
    return found.get("ge"), found.get("le")


class FormProblem(ValueError):
    """A submitted value the form cannot accept: ``field`` and a message key for the page's language."""

    def __init__(self, field: str, key: str) -> None:
        super().__init__(f"{field}: {key}")
        self.field = field
        self.key = key


@dataclass(frozen=True)
class Offer:
    """What the form offers one reader: subsystems (name, labels by language) they may follow, media they may keep, and
    whether the link may unsubscribe or resubscribe the reader."""

    subsystems: list[tuple[str, dict[str, str]]]
    media: list[str]
    subscription: bool = True


def shared_link(reader: Reader, medium: str | None) -> bool:
    """Whether a link came in one of the reader's shared media (a Slack channel, a Feishu group): everyone there
    holds it, so it may not switch off the reader's media nor unsubscribe them."""
    return medium is not None and medium in addresses(reader) and medium not in personal_media(reader)


def offer(reader: Reader, listing: Listing, medium: str | None = None) -> Offer:
    """The repo's subsystems minus those an editor excluded for the reader; the reader's personal media to keep or
    leave out, only if the reader has several media and the link (``medium``: where it came) is not a shared one."""
    subsystems = [s for s in listing.subsystems if s[0] not in reader.exclude]
    if shared_link(reader, medium):
        return Offer(subsystems, [], subscription=False)
    media = [m for m in addresses(reader) if m in personal_media(reader)]
    return Offer(subsystems, media if len(addresses(reader)) > 1 else [])


def _one(form: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = form.get(name) or []
    if len(values) > 1:
        raise FormProblem(name, "one_value")
    return values[0].strip() if values else None


def preferences_from_form(form: Mapping[str, Sequence[str]], reader: Reader, listing: Listing,
                          medium: str | None = None) -> Preferences:
    """The reader's new preferences from a submitted form (from a link that came in ``medium``); raises
    :class:`FormProblem` on a bad value. A medium the form did not offer (a shared one) is never left out."""
    offered = offer(reader, listing, medium)
    names = [s[0] for s in offered.subsystems]
    values: dict[str, object] = {}
    if names:
        ticked = set(form.get("subsystems") or [])
        if ticked - set(names):
            raise FormProblem("subsystems", "unknown_subsystem")
        chosen = tuple(n for n in names if n in ticked)
        values["subsystems"] = None if set(chosen) == set(reader.subsystems) else chosen
    verdict = _one(form, "min_verdict")
    if verdict is not None:
        if verdict not in {v.value for v in Verdict}:
            raise FormProblem("min_verdict", "unknown_verdict")
        values["min_verdict"] = None if verdict == reader.min_verdict.value else Verdict(verdict)
    if offered.media:
        kept = tuple(m for m in offered.media if m in set(form.get("media") or []))
        shared = tuple(m for m in addresses(reader) if m not in offered.media)
        if not kept and not shared:
            raise FormProblem("media", "no_medium")
        values["media"] = None if len(kept) == len(offered.media) else kept + shared
    for name in NUMBER_FIELDS:
        raw = _one(form, name)
        if raw:
            if not raw.isdigit() or len(raw) > 4:
                raise FormProblem(name, "not_a_number")
            values[name] = None if int(raw) == getattr(reader, name, None) else int(raw)
    try:
        return Preferences.model_validate(values)
    except ValidationError as exc:
        raise FormProblem(first_problem(exc, empty="form").top, "out_of_range") from None
