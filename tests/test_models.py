"""Domain types (prdigest/kernel/models.py): an entry composes its draft, yet reads and serializes flat."""

from __future__ import annotations

import json

import pytest

from prdigest.kernel.models import (
    ENTRY_KEYS,
    DraftEntry,
    Edition,
    Entry,
    EntryStatus,
    PullRequest,
    RenderProblem,
    Verdict,
)
from tests.factories import WEEK, edition, entry


def _pr(number: int = 7) -> PullRequest:
    return PullRequest(number=number, url=f"https://github.com/o/r/pull/{number}", title="Fix it", author="bo",
                       merged_at=WEEK, additions=3, deletions=1, files=[{"path": "a.py"}])


def test_an_entry_reads_its_drafts_fields_as_its_own() -> None:
    draft = DraftEntry(number=7, headline="H", verdict=Verdict.SKIM, rationale="R", focus=["f"], warnings=["w"],
                       tokens_in=5)
    e = Entry.from_draft(_pr(), ["kernels"], draft)
    assert e.draft == draft and (e.number, e.headline, e.verdict, e.focus, e.tokens_in) == (7, "H", Verdict.SKIM,
                                                                                          ["f"], 5)
    assert (e.url, e.files_changed, e.status) == ("https://github.com/o/r/pull/7", 1, EntryStatus.DRAFT)
    assert e.flagged  # a warning asks for the editor's eye


def test_the_prs_number_wins_over_a_cached_drafts() -> None:
    draft = DraftEntry(number=1, headline="H", verdict=Verdict.SKIP, rationale="R")
    assert Entry.from_draft(_pr(7), [], draft).number == 7


def test_digest_json_keeps_entries_flat_in_the_documented_order() -> None:
    e = entry(3, ["moe"], "deep-read", edit_distance=4)
    data = e.model_dump(mode="json")
    assert tuple(data) == ENTRY_KEYS and "draft" not in data
    assert data["headline"] == "Headline 3" and data["verdict"] == "deep-read" and data["edit_distance"] == 4
    again = Entry.model_validate_json(json.dumps(data))  # what `digest approve` and the archive read back
    assert again == e


def test_model_copy_updates_draft_fields_in_the_draft() -> None:
    e = entry(3, ["moe"])
    edited = e.model_copy(update={"headline": "New", "verdict": Verdict.SKIP, "status": EntryStatus.EDITED})
    assert (edited.headline, edited.verdict, edited.status) == ("New", Verdict.SKIP, EntryStatus.EDITED)
    assert edited.model_dump()["headline"] == "New" and e.headline == "Headline 3"  # the original is untouched


def test_assigning_a_draft_field_on_the_entry_is_refused() -> None:
    e = entry(3, ["moe"])
    with pytest.raises(ValueError, match="headline"):
        e.headline = "x"  # type: ignore[misc]  (the point: it must not silently fork from the draft)
    assert e.model_dump()["headline"] == "Headline 3"


def test_unknown_keys_are_still_refused() -> None:
    with pytest.raises(ValueError, match="colour"):
        Entry.model_validate({**entry(1, []).model_dump(), "colour": "red"})


def test_render_problems_are_typed_and_keep_their_json_shape() -> None:
    problem = RenderProblem(9, "email", "kernels", "MJML could not compile this entry")
    ed = edition([entry(9, ["kernels"])]).model_copy(update={"problems": [problem]})
    data = json.loads(ed.model_dump_json())
    assert data["problems"] == [{"number": 9, "medium": "email", "variant": "kernels",
                                 "error": "MJML could not compile this entry"}]
    assert Edition.model_validate(data).problems == [problem]
    assert str(problem) == "PR #9 could not be rendered for email (kernels): MJML could not compile this entry"
