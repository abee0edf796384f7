"""The resume form the editor fills in the Prefect UI, and the :class:`ReviewDecision` behind it.

The form is short on purpose. The classic UI (the one Prefect opens by default, and the one the editors'
notification links to) lays the draft digest (the form's description) and the fields out in one flex column
where only the draft shrinks: it gets the dialog's height minus the form's, so each field costs the draft about
100 px (eight fields left it 0 px). Hence three fields: the decision (``send`` / ``send, flagged too`` / ``hold``:
the "include flagged" switch, off unless chosen), the approver, one *Changes* text (reject, approve, edit and
note lines, :func:`prdigest.review.parse_changes`; never pre-filled). Nothing is pre-filled that binds the decision:
the run checks it against the draft it showed (:meth:`prdigest.state.record.EditionRecord.check_shown`). "Approve all"
is implied: it covers the unflagged entries (``digest approve --approve N`` without ``--all`` sends only N).
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic
from prefect.input import RunInput
from pydantic.json_schema import SkipJsonSchema

from prdigest.kernel.models import Edition
from prdigest.review import (
    ReviewDecision,
    ReviewRejected,
    apply_decision,
    changes_text,
    flagged_numbers,
    parse_changes,
)

#: The decision's choices in the form; the middle one is the "include flagged" switch.
SEND, SEND_FLAGGED, HOLD = "send", "send, flagged too", "hold"


class ReviewForm(RunInput):
    """The resume form's fields, in the order the Prefect UI shows them."""

    # Not "forbid": that would make the schema refuse the snapshot, which it does not show (below).
    model_config = pydantic.ConfigDict(extra="ignore")

    decision: Literal["send", "send, flagged too", "hold"] = pydantic.Field(
        description="send: every unflagged entry not rejected under Changes · hold: nothing")
    #: Required, never pre-filled: the UI marks a field with a default "(Optional)", yet the run refuses a send
    #: without a name (check_decision), so a blank one cost the editor a resume and a new pause.
    approver: str = pydantic.Field(min_length=1, pattern=r"\S", description="Your name, recorded in digest.json")
    changes: str = pydantic.Field(default="", description="A line each: reject 41873 41902 · approve 41910 (⚠) "
                                  "· #41873 verdict=skim headline=… text=… points=… | … followups=… "
                                  "· first 41873 (read first) · nobreak 41873 (not breaking) · note …")
    #: The content hash of the draft ``digest approve`` checked (never drawn, never pre-filled: a UI input leaves it
    #: empty). The run compares it, and its record, with the draft it showed.
    snapshot: SkipJsonSchema[str] = ""


def review_form(edition: Edition, description: str) -> type[ReviewForm]:
    """The form for this edition: the flagged count in the decision's help text (like ``with_initial_data``, but
    keeping and adapting each field's help text). The approver is required and starts empty: whoever submits
    names themself."""
    flagged = len(flagged_numbers(edition))
    overrides: dict[str, tuple[Any, str | None]] = {}
    if flagged:
        overrides["decision"] = (..., f"send: unflagged entries not rejected; the {flagged} flagged ⚠ only if "
                                      f"approved under Changes · {SEND_FLAGGED}: all {flagged} too · hold: nothing")
    fields = {name: (ReviewForm.model_fields[name].annotation,
                     pydantic.Field(default=value, title=ReviewForm.model_fields[name].title,
                                    description=help or ReviewForm.model_fields[name].description))
              for name, (value, help) in overrides.items()}
    model = pydantic.create_model("ReviewForm", __base__=ReviewForm, **fields)  # type: ignore[call-overload]  # fields built at run time
    model._description = description
    return model


def decision_of(form_input: ReviewForm) -> ReviewDecision:
    """The decision behind a submitted form; :class:`ReviewRejected` names every *Changes* line it cannot read."""
    changes, errors = parse_changes(form_input.changes)
    if errors:
        raise ReviewRejected([f"changes {e}" for e in errors])
    return ReviewDecision(decision="hold" if form_input.decision == HOLD else "send", approver=form_input.approver,
                          approve_all=True, include_flagged=form_input.decision == SEND_FLAGGED,
                          # parse_changes gives the decision's own fields (as objects): the model validates them
                          snapshot=form_input.snapshot, **changes)  # type: ignore[arg-type]


def form_input(edition: Edition, decision: ReviewDecision) -> dict[str, Any]:
    """The run input the form would send for ``decision`` (``digest approve`` resumes with it). The form always
    approves all unflagged entries: a decision without "approve all" rejects every entry it does not send."""
    reject = decision.reject
    if not decision.approve_all:
        chosen = {e.number for e in apply_decision(edition, decision).published}
        reject = " ".join(str(e.number) for e in edition.entries if e.number not in chosen)
    choice = HOLD if decision.decision == HOLD else SEND_FLAGGED if decision.include_flagged else SEND
    return {"decision": choice, "approver": decision.approver, "snapshot": decision.snapshot,
            "changes": changes_text(decision.model_copy(update={"reject": reject}))}
