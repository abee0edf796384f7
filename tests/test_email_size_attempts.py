"""An e-mail over its size budget is laid out with one attempt (issue 38): the sizes of the layouts the search
weighs are told from their compiled pieces, and only the layout it settles on is put together."""

from __future__ import annotations

import sys

import pytest

from prdigest.connect.variants import Filter
from renderers import render_email
from renderers.email import BUDGET
from renderers.shared import sharing
from tests.test_renderers import sample_edition


class Attempts:
    """The layouts put together while ``make`` runs (``_assembled``, or a whole compile), counted by the
    interpreter's profiler."""

    def __init__(self, make) -> None:
        self.count = 0

        def hook(frame, event: str, arg) -> None:  # sys.setprofile's
            if event == "call" and frame.f_code.co_name in ("_assembled", "compile_isolating"):
                self.count += 1

        sys.setprofile(hook)
        try:
            self.result = make()
        finally:
            sys.setprofile(None)


@pytest.mark.parametrize("language", ["en", "zh-CN"])
def test_each_email_is_laid_out_once_whether_it_fits_is_compact_or_keeps_some_deep_reads(
        sample_records, language) -> None:
    """Failed before the fix: a variant over budget was put together two to seven times (full, compact, then a
    binary search over how many deep reads stay in full)."""
    notes = set()
    store: dict = {}
    for n, budget in ((58, BUDGET), (58, 40_000), (58, 25_000), (150, 20_000), (150, 8_000)):
        ed, var = sample_edition(sample_records, n, language, Filter())
        with sharing(store):
            made = Attempts(lambda ed=ed, var=var, budget=budget: render_email(ed, var, budget=budget))
        whole = render_email(ed, var, budget=budget, whole=True)  # the reference: every document compiled whole
        assert made.result.html == whole.html and made.result.compact == whole.compact
        assert made.count == 1, (n, budget, made.count)
        notes.add((made.result.compact, made.result.size <= budget))
    # The cases cover a fit, a compact fit and nothing fitting.
    assert notes == {(False, True), (True, True), (True, False)}, notes
