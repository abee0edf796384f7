"""The resume form the editor fills in the Prefect UI: :class:`ReviewDecision` as a Prefect ``RunInput``."""

from __future__ import annotations

from typing import Any

import pydantic
from prefect.input import RunInput

from prdigest.models import Edition
from prdigest.review import ReviewDecision, prefilled_edits
from prdigest.snapshot import content_hash


class ReviewForm(ReviewDecision, RunInput):
    """The resume form: ReviewDecision's fields, rendered by the Prefect UI."""


def review_form(edition: Edition, description: str, approver: str = "") -> type[ReviewForm]:
    """The form pre-filled for this edition (like ``with_initial_data``, but keeping each field's help text)."""
    defaults: dict[str, Any] = {"approver": approver, "edits": prefilled_edits(edition),
                                "snapshot": content_hash(edition)}
    fields = {name: (ReviewForm.model_fields[name].annotation,
                     pydantic.Field(default=value, description=ReviewForm.model_fields[name].description))
              for name, value in defaults.items()}
    model = pydantic.create_model("ReviewForm", __base__=ReviewForm, **fields)
    model._description = description
    return model


def decision_of(form_input: ReviewForm) -> ReviewDecision:
    """The plain decision behind a submitted form (without Prefect's RunInput machinery)."""
    return ReviewDecision.model_validate(form_input.model_dump(include=set(ReviewDecision.model_fields)))
