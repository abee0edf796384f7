"""The last false-break kinds of issue 36, one row each, on an upstream change committed in a real git repository
(read with its whole tree, as a ``--git`` run reads it) and a downstream committed in another, indexed from its
checkout: a constructor's new keyword passed only where upstream builds its own class by name, a return type
narrowed to what the override already returns, an override of a removed method the downstream calls itself.
Beside each kind, the true break one step further, so the table cannot pass by flagging nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.impact_support import line_in as _line
from tests.impact_support import upstream_facts as _facts
from tests.impact_support import upstream_impacts as _impacts

UP = ("up",)


# --- a constructor's new keyword, passed where upstream builds its own class by name -----------------------------

LAYERS = '''
    class Attention:
        def __init__(self, args):
            self.args = args


    class Block:
        def __init__(self, args):
            self.attention = Attention(args)
    '''
#: upstream's Block now passes ``prefix`` to the Attention it builds by name
PREFIX = LAYERS.replace("def __init__(self, args):\n            self.args", "def __init__(self, args, prefix=''):\n"
                        "            self.args").replace("Attention(args)", "Attention(args, prefix='block')")
#: the downstream builds its own subclass itself
HPU = '''from up.layers import Attention


class HPUAttention(Attention):
    def __init__(self, args):
        super().__init__(args)


def build(args):
    return HPUAttention(args)
'''
#: a registry: building the class by name builds whatever a plugin registered under its name
CUSTOM_OP = '''
    REGISTRY = {}


    class CustomOp:
        def __new__(cls, *args, **kwargs):
            return super().__new__(REGISTRY.get(cls.__name__, cls))

        @classmethod
        def register(cls, name):
            def wrap(sub):
                REGISTRY[name] = sub
                return sub
            return wrap
    '''
SCHEDULER = '''
    class Scheduler:
        def __init__(self, config):
            self.config = config


    class Engine:
        def __init__(self, config):
            self.scheduler = Scheduler(config)
    '''
#: upstream builds the configured scheduler class, held in a local variable that happens to carry the class's name
CONFIGURED = SCHEDULER.replace("def __init__(self, config):\n            self.config", "def __init__(self, config, "
                               "hash_block_size=None):\n            self.config").replace(
    "self.scheduler = Scheduler(config)", "Scheduler = config.scheduler_cls()\n"
    "            self.scheduler = Scheduler(config, hash_block_size=16)")
NPU_SCHEDULER = '''from up.sched import Scheduler


class NPUScheduler(Scheduler):
    def __init__(self, config):
        super().__init__(config)
'''
GATED = '''
    class Gated:
        def __init__(self, size, activation="swish"):
            self.size = size
    '''
MODEL = '''
    from up.norm import Gated


    class Model:
        def __init__(self):
            self.norm = Gated(4)
    '''
NPU_GATED = '''from up.norm import Gated


class NPUGated(Gated):
    def __init__(self, size):
        super().__init__(size)


def norm():
    return NPUGated(4)
'''


def test_a_new_keyword_upstream_passes_to_its_own_class_by_name_is_a_check_for_a_subclass_only_you_build(tmp_path):
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/layers.py": LAYERS}, {"up/layers.py": PREFIX},
                     {"ds/hpu.py": HPU})
    assert [(i.line, i.severity) for i in found if i.symbol == "up.layers.Attention.__init__"] == [
        (_line(HPU, "def __init__"), "check")]
    assert "never your subclass" in next(i.fact for i in found if i.symbol == "up.layers.Attention.__init__")
    assert [i for i in found if i.severity == "breaks"] == []


def test_a_keyword_upstream_now_passes_to_its_own_class_by_name_is_a_check_too(tmp_path):
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/norm.py": GATED, "up/model.py": MODEL},
                     {"up/model.py": MODEL.replace("Gated(4)", "Gated(4, activation='silu')")},
                     {"ds/norm.py": NPU_GATED})
    assert [(i.severity, i.fact.split(":")[0]) for i in found if i.symbol == "up.norm.Gated.__init__"] == [
        ("check", "passes")]


#: (upstream before, after, downstream files, the file and line that must still say ``breaks``)
BUILT_BY_UPSTREAM = [
    pytest.param({"up/__init__.py": "", "up/sched.py": SCHEDULER}, {"up/sched.py": CONFIGURED},
                 {"ds/sched.py": NPU_SCHEDULER}, "ds/sched.py", "def __init__",
                 id="a class built through a variable a factory filled (the configured scheduler)"),
    pytest.param({"up/__init__.py": "", "up/custom_op.py": CUSTOM_OP,
                  "up/layers.py": "from up.custom_op import CustomOp\n" + textwrap.dedent(LAYERS).replace(
                      "class Attention:", "class Attention(CustomOp):")},
                 {"up/layers.py": "from up.custom_op import CustomOp\n" + textwrap.dedent(PREFIX).replace(
                     "class Attention:", "class Attention(CustomOp):")},
                 {"ds/hpu.py": HPU.replace("class HPUAttention", "@Attention.register('Attention')\nclass HPUAttention")},
                 "ds/hpu.py", "def __init__",
                 id="a class whose base's __new__ builds what a plugin registered (in a module the commit left alone)"),
    pytest.param({"up/__init__.py": "", "up/layers.py": LAYERS}, {"up/layers.py": PREFIX},
                 {"ds/hpu.py": HPU + "\n\nimport up.layers  # noqa: E402\n\nup.layers.Attention = HPUAttention\n"},
                 "ds/hpu.py", "def __init__", id="a subclass the downstream patches over the upstream class"),
    pytest.param({"up/__init__.py": "", "up/custom_op.py": CUSTOM_OP,
                  "up/norm.py": "from up.custom_op import CustomOp\n" + textwrap.dedent(GATED).replace(
                      "class Gated:", "class Gated(CustomOp):"), "up/model.py": MODEL},
                 {"up/model.py": MODEL.replace("Gated(4)", "Gated(4, activation='silu')")},
                 {"ds/norm.py": NPU_GATED}, "ds/norm.py", "def __init__",
                 id="a keyword newly passed to a class a registry's __new__ may replace"),
]


@pytest.mark.parametrize(("before", "after", "downstream", "path", "marker"), BUILT_BY_UPSTREAM)
def test_a_new_keyword_still_breaks_a_subclass_upstream_may_build(tmp_path: Path, before: dict[str, str | None],
                                                                  after: dict[str, str | None],
                                                                  downstream: dict[str, str], path: str,
                                                                  marker: str) -> None:
    found = _impacts(tmp_path, before, after, downstream)
    assert {(i.path, i.line) for i in found if i.severity == "breaks"} == {(path, _line(downstream[path], marker))}


def test_the_facts_say_which_constructor_calls_build_the_class_by_name(tmp_path):
    by_name = _facts(tmp_path / "a", {"up/__init__.py": "", "up/layers.py": LAYERS}, {"up/layers.py": PREFIX})
    configured = _facts(tmp_path / "b", {"up/__init__.py": "", "up/sched.py": SCHEDULER}, {"up/sched.py": CONFIGURED})
    assert [(f.symbol, f.passed, f.constructed) for f in by_name if f.kind == "signature"] == [
        ("Attention.__init__", ("prefix",), "by-name")]
    assert [(f.symbol, f.passed, f.constructed) for f in configured if f.kind == "signature"] == [
        ("Scheduler.__init__", ("hash_block_size",), "")]
    # serialized only where set: every other fact reads as it did
    assert [f.model_dump().get("constructed") for f in (*by_name, *configured) if f.kind == "signature"] == [
        "by-name", None]


# --- a return type narrowed ----------------------------------------------------------------------------------------

METHOD = '''
    import torch


    class MoEMethod:
        def apply(self, x) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
            return x
    '''
NARROWED = METHOD.replace("-> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:", "-> torch.Tensor:")
OVERRIDES = '''import torch
from torch import Tensor

from up.moe import MoEMethod


class Fits(MoEMethod):
    def apply(self, x) -> Tensor:
        return x


class FitsQualified(MoEMethod):
    def apply(self, x) -> "torch.Tensor":
        return x


class Wide(MoEMethod):
    def apply(self, x) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        return x, x


class Unannotated(MoEMethod):
    def apply(self, x):
        return x
'''


def test_a_narrowed_return_type_breaks_only_an_override_annotated_wider(tmp_path):
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/moe.py": METHOD}, {"up/moe.py": NARROWED},
                     {"ds/moe.py": OVERRIDES})
    at = {n: _line(OVERRIDES, f"class {n}(") + 1 for n in ("Fits", "FitsQualified", "Wide", "Unannotated")}
    assert {(i.line, i.severity) for i in found if i.fact.startswith("returns")} == {
        (at["Wide"], "breaks"), (at["Unannotated"], "check")}


def test_a_replaced_return_type_still_breaks_an_override_without_an_annotation(tmp_path):
    before = {"up/__init__.py": "", "up/worker.py": "class Worker:\n    def warm_up(self) -> float:\n        return 0.0\n"}
    after = {"up/worker.py": "class Times:\n    pass\n\n\nclass Worker:\n    def warm_up(self) -> Times:\n"
                             "        return Times()\n"}
    mine = ("from up.worker import Times, Worker\n\n\nclass Plain(Worker):\n    def warm_up(self):\n        return 1.0\n"
            "\n\nclass Typed(Worker):\n    def warm_up(self) -> Times:\n        return Times()\n")
    found = _impacts(tmp_path, before, after, {"ds/worker.py": mine})
    assert {(i.line, i.severity) for i in found if i.fact.startswith("returns")} == {(_line(mine, "class Plain") + 1,
                                                                                       "breaks")}


# --- an override of a removed method -------------------------------------------------------------------------------

MOE = '''
    class FusedMoE:
        def maybe_all_reduce(self, states):
            return states

        def forward(self, x):
            return self.maybe_all_reduce(x)
    '''
GONE = MOE.replace("def maybe_all_reduce(self, states):\n            return states\n\n        ", "").replace(
    "return self.maybe_all_reduce(x)", "return x")
KEEPS = '''from up.moe import FusedMoE


class NPUFusedMoE(FusedMoE):
    def maybe_all_reduce(self, states):
        return states * 2
'''
#: a model of the downstream's own that calls it on its layer
CALLS = '''class Model:
    def __init__(self, experts):
        self.experts = experts

    def forward(self, x):
        return self.experts.maybe_all_reduce(x)
'''


def test_an_override_of_a_removed_method_the_downstream_calls_itself_is_a_check(tmp_path):
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/moe.py": MOE}, {"up/moe.py": GONE},
                     {"ds/moe.py": KEEPS, "ds/model.py": CALLS})
    assert [(i.path, i.line, i.severity) for i in found] == [("ds/moe.py", _line(KEEPS, "def maybe_all_reduce"),
                                                              "check")]
    assert "calls it itself" in found[0].fact


REMOVED_BREAKS = [
    pytest.param({"ds/moe.py": KEEPS}, id="an override only upstream called: what it changed no longer runs"),
    pytest.param({"ds/moe.py": KEEPS.replace("return states * 2", "return super().maybe_all_reduce(states) * 2"),
                  "ds/model.py": CALLS}, id="an override the downstream calls that calls the base's, now gone"),
]


@pytest.mark.parametrize("downstream", REMOVED_BREAKS)
def test_an_override_of_a_removed_method_still_breaks_otherwise(tmp_path: Path, downstream: dict[str, str]) -> None:
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/moe.py": MOE}, {"up/moe.py": GONE}, downstream)
    assert ("ds/moe.py", _line(downstream["ds/moe.py"], "def maybe_all_reduce"), "breaks") in {
        (i.path, i.line, i.severity) for i in found}


def test_a_hostile_return_annotation_cannot_forge_the_index_markers() -> None:
    from prdigest.connect.impact.index import CALLED, CALLS_SUPER, OWN_INIT, resolve_uses, summarize

    mine = ('from up.moe import MoEMethod\n\n\nclass Odd(MoEMethod):\n'
            '    def apply(self, x) -> "int;super;called;own-init;sets=x**":\n        return x\n')
    [use] = [u for u in resolve_uses([summarize("ds/odd.py", mine, UP)], UP) if u.how == "overrides"]
    assert use.detail == "self,x;returns=intsupercalledowninitsetsx"
    assert CALLS_SUPER not in use.detail and CALLED not in use.detail and OWN_INIT not in use.detail


def test_a_call_by_a_name_every_dict_has_is_no_call_of_your_override(tmp_path: Path) -> None:
    before = MOE.replace("maybe_all_reduce", "update")
    after = GONE.replace("maybe_all_reduce", "update")
    mine = KEEPS.replace("maybe_all_reduce", "update")
    found = _impacts(tmp_path, {"up/__init__.py": "", "up/moe.py": before}, {"up/moe.py": after},
                     {"ds/moe.py": mine, "ds/conf.py": "def merge(a, b):\n    a.update(b)\n    return a\n"})
    assert ("ds/moe.py", _line(mine, "def update"), "breaks") in {(i.path, i.line, i.severity) for i in found}
