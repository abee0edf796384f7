"""A parameter added with a default to a method the downstream overrides (or a function it patches) breaks the
downstream only once upstream passes it: the facts engine reads the upstream's changed files for call sites that
pass it (by keyword, or positionally at its place), and the match says ``breaks`` then, ``check`` otherwise.
Real git repositories made here; the downstream is indexed from its files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from prdigest.connect.impact.index import resolve_uses, summarize
from prdigest.connect.impact.match import UseTable, match_changes
from prdigest.draft.packing import _fact_line
from prdigest.kernel.factlines import fact_line
from tests.impact_support import facts_between

UP = ("up",)
BEFORE = {
    "up/__init__.py": "",
    "up/layers.py": '''
        class Norm:
            def forward(self, x):
                return x


        def sample(logits):
            return logits


        class Engine:
            def __init__(self, norm):
                self.norm = norm

            def step(self, x):
                return sample(self.norm.forward(x))
        ''',
    "up/other.py": '''
        class Child:
            def forward(self, x):
                return x
        ''',
}
#: The downstream: overrides Norm.forward and Child.forward, replaces up.layers.sample, calls Norm.forward.
DOWNSTREAM = {
    "ds/__init__.py": "",
    "ds/norm.py": '''from up.layers import Norm
import up.layers


class AscendNorm(Norm):
    def forward(self, x):
        return x + 1


def ascend_sample(logits):
    return logits


up.layers.sample = ascend_sample


def run(norm):
    return Norm.forward(norm, 1)
''',
}
NORM = "ds/norm.py"


def _line(marker: str) -> int:
    return next(i for i, text in enumerate(DOWNSTREAM[NORM].splitlines(), 1) if marker in text)


def _facts(tmp_path: Path, after: dict[str, str], *, receivers: bool = True):
    return facts_between(tmp_path, BEFORE, after, UP, receivers=receivers)


def _impacts(facts, downstream=DOWNSTREAM):
    uses = resolve_uses([summarize(p, t, UP) for p, t in downstream.items()], UP)
    found = match_changes(facts, UseTable.of("ds", uses, UP), UP)
    return {(i.line, i.how, i.severity) for i in found if i.fact.startswith("signature")}


def _layers(forward_call: str, sample_call: str, *, sample_sig: str = "logits, temperature=1.0") -> dict[str, str]:
    return {"up/layers.py": f'''
        class Norm:
            def forward(self, x, eps=1e-6):
                return x


        def sample({sample_sig}):
            return logits


        class Engine:
            def __init__(self, norm: Norm):
                self.norm = norm

            def step(self, x):
                return {sample_call.replace("ARG", f"self.norm.{forward_call}")}
        '''}


OVERRIDE, PATCH, CALL = _line("def forward"), _line("up.layers.sample ="), _line("Norm.forward(norm")


def test_added_defaults_nobody_passes_are_checks(tmp_path):
    facts = _facts(tmp_path, _layers("forward(x)", "sample(ARG)"))
    details = {f.symbol: f.detail for f in facts if f.kind == "signature"}
    assert details == {"Norm.forward": "+eps=1e-06", "sample": "+temperature=1.0"}
    assert _impacts(facts) == {(OVERRIDE, "overrides", "check"), (PATCH, "patches", "check")}


@pytest.mark.parametrize("forward_call, sample_call", [
    pytest.param("forward(x, eps=1e-5)", "sample(ARG, temperature=0.5)", id="by keyword"),
    pytest.param("forward(x, 1e-5)", "sample(ARG, 0.5)", id="positionally at its place"),
])
def test_added_defaults_upstream_passes_break_the_override_and_the_patch(tmp_path, forward_call, sample_call):
    facts = _facts(tmp_path, _layers(forward_call, sample_call))
    details = {f.symbol: f.detail for f in facts if f.kind == "signature"}
    assert details == {"Norm.forward": "+eps=1e-06 (upstream passes eps)",
                       "sample": "+temperature=1.0 (upstream passes temperature)"}
    # The call of Norm.forward in the downstream does not pass eps: a new default breaks no caller.
    assert _impacts(facts) == {(OVERRIDE, "overrides", "breaks"), (PATCH, "patches", "breaks")}


def test_a_call_that_passes_another_parameter_or_goes_through_super_does_not_count(tmp_path):
    after = _layers("forward(x, scale=2)", "sample(ARG, *extra)")
    # An upstream subclass passing eps up its own chain calls Norm.forward, not the downstream's override.
    after["up/other.py"] = '''
        from up.layers import Norm


        class Child(Norm):
            def forward(self, x, eps=1e-6):
                return super().forward(x, eps=eps)
        '''
    facts = _facts(tmp_path, after)
    details = {f.symbol: f.detail for f in facts if f.kind == "signature"}
    assert details["Norm.forward"] == "+eps=1e-06" and details["sample"] == "+temperature=1.0"
    assert _impacts(facts) == {(OVERRIDE, "overrides", "check"), (PATCH, "patches", "check")}


def test_a_new_required_parameter_still_breaks_without_any_caller(tmp_path):
    facts = _facts(tmp_path, _layers("forward(x)", "sample(ARG)", sample_sig="logits, temperature"))
    got = _impacts(facts)
    assert (PATCH, "patches", "breaks") in got and (CALL, "calls", "breaks") not in got
    assert (OVERRIDE, "overrides", "check") in got


SELF_CALL = {"up/layers.py": '''
    class Norm:
        def forward(self, x, eps=1e-6):
            return x

        def run(self, x):
            return self.forward(x, eps=1e-5)


    def sample(logits):
        return logits
    '''}


def test_a_self_call_is_named_and_a_subclass_that_overrides_the_caller_too_is_told_to_check(tmp_path):
    facts = _facts(tmp_path, SELF_CALL)
    (forward,) = [f for f in facts if f.kind == "signature"]
    assert forward.detail == "+eps=1e-06 (upstream passes eps from Norm.run)"
    assert (forward.passed, forward.callers, forward.receiver) == (("eps",), ("Norm.run",), "")  # typed, not prose
    # AscendNorm inherits Norm.run, whose self.forward(x, eps=…) now reaches its forward(self, x).
    assert _impacts(facts) == {(OVERRIDE, "overrides", "breaks")}
    # A subclass that overrides run as well calls its own run, which does not pass eps: nothing upstream reaches
    # its forward with it, so a check (vllm-ascend's initialize_attn_backend, whose caller initialize_kv_cache it
    # overrides, was left as it was across 0.19.1 -> 0.20.1 and kept working).
    both = {**DOWNSTREAM, NORM: DOWNSTREAM[NORM].replace("        return x + 1\n",
                                                         "        return x + 1\n\n    def run(self, x):\n"
                                                         "        return self.forward(x)\n")}
    assert _impacts(facts, both) == {(OVERRIDE, "overrides", "check")}


def test_the_note_of_who_passes_a_parameter_stays_out_of_the_digest_prose(tmp_path):
    facts = _facts(tmp_path, _layers("forward(x, eps=1e-5)", "sample(ARG)"))
    (forward,) = [f for f in facts if f.symbol == "Norm.forward"]
    assert "upstream passes" in forward.detail
    line = fact_line(forward, "en")
    assert "eps" in line and "upstream passes" not in line
    two = forward.model_copy(update={"detail": "+eps=1e-06, +scale=2 (upstream passes eps and scale)"})
    for text in (fact_line(two, "en"), fact_line(two, "zh-CN"), _fact_line(two)):
        assert "scale" in text and "upstream passes" not in text


# --- whose method a call reaches: the receiver's class ------------------------------------------------------

#: Norm.forward gains eps; Drafter (another class of the changed files) has a forward of its own.
NORM_AND_DRAFTER = '''
    class Norm:
        def forward(self, x, eps=1e-6):
            return x


    class Drafter:
        def forward(self, x, eps=0.0):
            return x


    def sample(logits):
        return logits
    '''


def _with_caller(tmp_path, caller: str, *, layers: str = NORM_AND_DRAFTER, receivers: bool = True):
    """The facts of a commit whose up/other.py holds ``caller`` (after ``from up.layers import …``)."""
    after = {"up/layers.py": layers,
             "up/other.py": "from up.layers import Drafter, Norm\n\n\n" + textwrap.dedent(caller)}
    facts = _facts(tmp_path, after, receivers=receivers)
    return {f.symbol: f.detail for f in facts if f.kind == "signature"}, facts


@pytest.mark.parametrize("caller", [
    pytest.param('''
        class Child(Norm):
            def run(self, x):
                return self.forward(x, eps=1e-5)
        ''', id="self in a subclass"),
    pytest.param('''
        class Engine:
            def step(self, x):
                norm = Norm()
                return norm.forward(x, 1e-5)
        ''', id="a local made by the constructor"),
    pytest.param('''
        class Engine:
            def __init__(self):
                self.norm = Norm()

            def step(self, x):
                return self.norm.forward(x, eps=1e-5)
        ''', id="an attribute made by the constructor in __init__"),
    pytest.param('''
        def step(norm: "Norm | None", x):
            return norm.forward(x, eps=1e-5)
        ''', id="an annotated parameter"),
    pytest.param('''
        def step(norm, x):
            return Norm.forward(norm, x, 1e-5)
        ''', id="the class's name, self passed explicitly"),
])
def test_a_call_on_a_receiver_of_the_methods_hierarchy_passes(tmp_path, caller):
    details, facts = _with_caller(tmp_path, caller)
    assert details["Norm.forward"] == "+eps=1e-06 (upstream passes eps)"
    assert _impacts(facts) == {(OVERRIDE, "overrides", "breaks")}


@pytest.mark.parametrize("caller", [
    pytest.param('''
        class Engine:
            def __init__(self, drafter):
                self.drafter = drafter

            def step(self, x):
                return self.drafter.forward(x, eps=1e-5)
        ''', id="another object's attribute of unknown type"),
    pytest.param('''
        class Engine:
            def step(self, x):
                drafter = Drafter()
                return drafter.forward(x, 1e-5)
        ''', id="a local of another class"),
    pytest.param('''
        class Other(Drafter):
            def run(self, x):
                return self.forward(x, eps=1e-5)
        ''', id="self in another class's hierarchy"),
    pytest.param('''
        def step(norm, x):
            return Norm.forward(norm, x)
        ''', id="the class's name, self and x only"),
    pytest.param('''
        def step(x, forward):
            return forward(x, eps=1e-5)
        ''', id="a bare name is no method call"),
])
def test_a_call_on_another_or_an_unknown_receiver_does_not_pass(tmp_path, caller):
    details, facts = _with_caller(tmp_path, caller)
    assert details["Norm.forward"] == "+eps=1e-06"
    assert _impacts(facts) == {(OVERRIDE, "overrides", "check")}


UNTYPED_CALL = '''
    class Engine:
        def __init__(self, drafter):
            self.drafter = drafter

        def step(self, x):
            return self.drafter.forward(x, eps=1e-5)
    '''


def test_an_unknown_receiver_passes_when_no_other_class_has_the_methods_name(tmp_path):
    only_norm = NORM_AND_DRAFTER.replace("def forward(self, x, eps=0.0)", "def backward(self, x, eps=0.0)")
    details, facts = _with_caller(tmp_path, UNTYPED_CALL, layers=only_norm)
    assert details["Norm.forward"] == "+eps=1e-06 (upstream passes eps to an untyped receiver)"
    assert [(f.passed, f.receiver) for f in facts if f.symbol == "Norm.forward"] == [(("eps",), "untyped")]
    assert _impacts(facts) == {(OVERRIDE, "overrides", "breaks")}
    # The note stays out of the prose like the others.
    (forward,) = [f for f in facts if f.symbol == "Norm.forward"]
    assert "untyped" not in fact_line(forward, "en") and "untyped" not in _fact_line(forward)


def test_the_earlier_rule_counts_any_call_of_the_name(tmp_path):
    details, facts = _with_caller(tmp_path, UNTYPED_CALL, receivers=False)
    assert details["Norm.forward"] == "+eps=1e-06 (upstream passes eps)"
    assert _impacts(facts) == {(OVERRIDE, "overrides", "breaks")}
